/**
 * Which cache tier a check's decision needed, for the decision log: learnt from the
 * resolver's own `voot-guard:authorize` traces (the tier the resolver reports at the end of
 * each decision), carried to the check that asked by an `AsyncLocalStorage`, so that
 * concurrent checks never swap their tiers. Subscribed only while a decision log is on.
 *
 * @module
 */
import { AsyncLocalStorage } from 'node:async_hooks'
import { tracingChannel } from 'node:diagnostics_channel'
import { CHANNELS, type AuthorizeContext, type CacheTier } from '../../src/index.js'

/** Runs checks so that their decision's tier can be read when they are answered. */
export interface TierProbe {
  /** Runs `check` (and what it continues into) with a place for its tier. */
  run<T>(check: () => T): T
  /** The tier of the decision of the check being answered, once known. */
  tier(): CacheTier | undefined
  /** Unsubscribes from the traces. */
  close(): void
}

/**
 * Creates a probe; `close()` it with the gate.
 *
 * @example
 * ```ts
 * const probe = createTierProbe()
 * const answer = probe.run(() => check('auth-request', req, url)) // ... and in the observer: probe.tier()
 * ```
 */
export function createTierProbe(): TierProbe {
  const store = new AsyncLocalStorage<{ tier?: CacheTier }>()
  const channel = tracingChannel<unknown, AuthorizeContext>(CHANNELS.authorize)
  const learn = (context: AuthorizeContext) => {
    const holder = store.getStore()
    if (holder !== undefined && context.tier !== undefined) holder.tier = context.tier
  }
  // `start` too: the resolver traces a warm decision only while `start` has a subscriber.
  const subscribers = { start: learn, end: learn, asyncStart: learn, asyncEnd: learn, error: learn }
  channel.subscribe(subscribers)
  return {
    run: (check) => store.run({}, check),
    tier: () => store.getStore()?.tier,
    close: () => channel.unsubscribe(subscribers),
  }
}
