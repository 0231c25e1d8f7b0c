/**
 * Waits and readings shared by the tests that run the shared tier across instances (one
 * Redis server, a cluster, Sentinel).
 */
import { InvalidTokenError } from '../../src/errors.js'
import type { SharedCache } from '../../src/shared-cache.js'

/** Resolves once `listener` hears invalidations published through `publisher` (subscriptions open in the background). */
export async function subscribed(publisher: SharedCache, listener: SharedCache): Promise<void> {
  const probe = publisher.tokenId(`probe-${Math.random()}`)
  let heard = false
  const stop = listener.subscribe((signal) => {
    if (signal.type === 'invalidate' && signal.tokenId === probe) heard = true
  })
  while (!heard) {
    await publisher.invalidate(probe)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  stop()
}

/** Resolves once `predicate` holds, polling; the test's own timeout ends a wait that never does. */
export async function eventually(predicate: () => Promise<boolean> | boolean): Promise<void> {
  while (!(await predicate())) await new Promise((resolve) => setTimeout(resolve, 10))
}

/** A decision's outcome as a word, so that a whole batch compares at once: allowed, denied, invalid or the error's status. */
export async function outcome(promise: Promise<{ allowed: boolean }>): Promise<string> {
  try {
    return (await promise).allowed ? 'allowed' : 'denied'
  } catch (error) {
    return error instanceof InvalidTokenError ? 'invalid' : `error ${(error as { status?: number }).status ?? '?'}`
  }
}
