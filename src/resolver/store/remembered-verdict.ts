/**
 * Remembered verdicts: what a requirement came to on one token's cached answers, kept on
 * the token's `me/groups` entry so that the next warm decision for the same token and
 * requirement reads it instead of running the rules again (issue 41).
 *
 * A verdict is the rules' own decision, remembered for exactly as long as a fresh
 * evaluation would give the same one: from the instant it was decided until the earliest
 * of the answers' freshness and the next `notBefore`/`notAfter` of the memberships and
 * groups it read. Whatever else could change the rules' inputs ends it: a new `me/groups`
 * answer is a new entry (with no verdicts), and a membership answer of the token stored,
 * replaced, evicted or dropped clears the verdicts of its token (`answer-store.ts`); a 401
 * or an invalidation drops the `me/groups` entry, and the verdicts with it.
 *
 * @module
 */
import type { Decision } from '../../decision/types.js'
import type { Requirement } from '../../decision/requirements.js'

/** Verdicts kept per token: requirements are declared per route, so a token meets a few; more replace the oldest. */
export const MAX_VERDICTS = 8

/**
 * One requirement's decision for one token, with the instants between which it holds and
 * the membership answers it read (their cache hits are counted again each time it is
 * used, as is the hit of `me/groups`, which every warm decision reads).
 */
export interface RememberedVerdict {
  readonly requirement: Requirement
  readonly decision: Decision
  /** Decided at this instant: an earlier one (a clock set back) is not covered. */
  readonly since: number
  /** Holds before this instant (ms since the epoch). */
  readonly until: number
  /** The `me/groups/{id}` answers the rules read. */
  readonly memberships: readonly string[]
}

/** What an entry holds: nothing, one verdict (most tokens), or up to {@link MAX_VERDICTS}. */
export type VerdictSlot = RememberedVerdict | RememberedVerdict[] | undefined

/** The verdict of `requirement` in `slot` that holds at `at`, if any. */
export function recall(slot: VerdictSlot, requirement: Requirement, at: number): RememberedVerdict | undefined {
  if (slot === undefined) return undefined
  if (!Array.isArray(slot)) return slot.requirement === requirement && holds(slot, at) ? slot : undefined
  for (const verdict of slot) if (verdict.requirement === requirement) return holds(verdict, at) ? verdict : undefined
  return undefined
}

/** Whether the verdict covers `at` (a NaN instant is covered by none). */
function holds(verdict: RememberedVerdict, at: number): boolean {
  return at >= verdict.since && at < verdict.until
}

/** The slot with `verdict` in it, replacing the same requirement's verdict or, when full, the oldest. */
export function remember(slot: VerdictSlot, verdict: RememberedVerdict): VerdictSlot {
  if (slot === undefined || (!Array.isArray(slot) && slot.requirement === verdict.requirement)) return verdict
  const list = Array.isArray(slot) ? slot : [slot]
  const at = list.findIndex((known) => known.requirement === verdict.requirement)
  if (at >= 0) list.splice(at, 1)
  else if (list.length >= MAX_VERDICTS) list.shift()
  list.push(verdict)
  return list
}
