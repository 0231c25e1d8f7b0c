/**
 * A bound on the calls in flight, for a transport that has no pool of its own to bound them
 * (the runtime's `fetch`): a caller above the bound waits its turn, first come first
 * served, and stops waiting when its signal fires.
 *
 * @module
 */

/**
 * Slots for calls in flight. Created by {@link createCallSlots}.
 */
export interface CallSlots {
  /** Resolves once a slot is held; rejects with the signal's reason if it fires first. */
  acquire(signal: AbortSignal): Promise<void>
  /** Gives a held slot back (to the longest waiter, if any). */
  release(): void
}

/**
 * Creates {@link CallSlots} with `limit` slots.
 */
export function createCallSlots(limit: number): CallSlots {
  let free = limit
  // A Set keeps insertion order (the queue) and lets a waiter whose signal fired leave it.
  const waiting = new Set<() => void>()
  return {
    acquire(signal) {
      if (signal.aborted) return Promise.reject(signal.reason as Error)
      if (free > 0) {
        free--
        return Promise.resolve()
      }
      return new Promise<void>((resolve, reject) => {
        const grant = (): void => {
          signal.removeEventListener('abort', onAbort)
          resolve()
        }
        const onAbort = (): void => {
          waiting.delete(grant)
          reject(signal.reason as Error)
        }
        waiting.add(grant)
        signal.addEventListener('abort', onAbort, { once: true })
      })
    },
    release() {
      const next = waiting.values().next()
      if (next.done === true) {
        free++
        return
      }
      waiting.delete(next.value)
      next.value()
    },
  }
}
