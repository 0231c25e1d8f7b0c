/**
 * One entry of the resolver's cache: an answer (or a 401 marker) and its lifetimes.
 *
 * @module
 */
import type { VerdictSlot } from './remembered-verdict.js'

/**
 * Longest lifetime kept exactly, in ms (about 12 days). Longer ones are cut to this: no
 * entry is served past `ttl + staleIfError` (at most two days) anyway, and below this
 * bound a duration is a small integer, which V8 keeps inside the entry. A time since the
 * epoch is not: each would be a separate 16-byte heap number.
 */
export const MAX_SPAN = 2 ** 30 - 1

/** A duration in whole ms within `[0, MAX_SPAN]`, rounded down (an entry may expire early, never late). */
function span(ms: number): number {
  if (!(ms > 0)) return 0
  return ms >= MAX_SPAN ? MAX_SPAN : Math.floor(ms) | 0
}

/**
 * A cached answer: stored at `storedAt`, fresh before `freshUntil`, never served (not
 * even stale) from `hardUntil` on. Only `storedAt` is a full timestamp; the two limits
 * are kept as durations from it (see {@link MAX_SPAN}), so an entry costs one object and
 * one heap number instead of one object and three.
 */
export class CacheEntry {
  readonly value: unknown
  readonly storedAt: number
  readonly #freshFor: number
  readonly #hardFor: number
  /**
   * On a `me/groups` entry, the decisions remembered for its token (`remembered-verdict.ts`).
   * They go with the entry: a new answer is a new entry.
   */
  verdicts: VerdictSlot = undefined

  constructor(value: unknown, storedAt: number, freshUntil: number, hardUntil: number) {
    this.value = value
    this.storedAt = storedAt
    this.#freshFor = span(freshUntil - storedAt)
    this.#hardFor = span(hardUntil - storedAt)
  }

  /** Fresh before this instant (ms since the epoch). */
  get freshUntil(): number {
    return this.storedAt + this.#freshFor
  }

  /** Never served from this instant on (ms since the epoch). */
  get hardUntil(): number {
    return this.storedAt + this.#hardFor
  }
}
