/**
 * The bound on the calls one groups client has open at the group service: a caller above
 * the bound waits its turn, first come first served, stops waiting when its signal fires,
 * and is refused rather than sent once its time to be sent has passed (see `send-by.ts`).
 * A slot is given back by the transport when its request has finished at the connection
 * (the body read to its end, or the request torn down), not when the caller gives up, so
 * that the calls open at the service never exceed the bound, even when many time out at once.
 *
 * @module
 */
import { SendExpiredError } from './send-by.js'

/**
 * Slots for calls in flight. Created by {@link createCallSlots}.
 */
export interface CallSlots {
  /**
   * Resolves once a slot is held, at a moment no later than `sendBy` (on the clock of
   * `performance.now()`); rejects with `SendExpiredError` when no slot came in time, or with
   * the signal's reason if it fires first.
   */
  acquire(signal: AbortSignal, sendBy: number): Promise<void>
  /** Gives a held slot back (to the longest waiter that may still be sent, if any). */
  release(): void
  /**
   * {@link CallSlots.acquire}, resolving with the release of that one slot: safe to call
   * from every path that ends the call (body done, error, abort), it gives the slot back once.
   */
  hold(signal: AbortSignal, sendBy: number): Promise<() => void>
  /** Slots held now. */
  readonly held: number
}

interface Waiter {
  readonly sendBy: number
  readonly grant: () => void
  readonly expire: () => void
}

/**
 * Creates {@link CallSlots} with `limit` slots. `clock` is `performance.now` unless a test
 * gives another.
 */
export function createCallSlots(limit: number, clock: () => number = () => performance.now()): CallSlots {
  let free = limit
  // A Set keeps insertion order (the queue) and lets a waiter whose signal fired leave it.
  const waiting = new Set<Waiter>()
  const slots: CallSlots = {
    async hold(signal, sendBy) {
      await slots.acquire(signal, sendBy)
      let held = true
      return () => {
        if (!held) return
        held = false
        slots.release()
      }
    },
    acquire(signal, sendBy) {
      if (signal.aborted) return Promise.reject(signal.reason as Error)
      if (free > 0) {
        if (clock() > sendBy) return Promise.reject(new SendExpiredError())
        free--
        return Promise.resolve()
      }
      return new Promise<void>((resolve, reject) => {
        const leave = (): void => {
          waiting.delete(waiter)
          signal.removeEventListener('abort', onAbort)
        }
        const waiter: Waiter = {
          sendBy,
          grant() {
            leave()
            resolve()
          },
          expire() {
            leave()
            reject(new SendExpiredError())
          },
        }
        const onAbort = (): void => {
          leave()
          reject(signal.reason as Error)
        }
        waiting.add(waiter)
        signal.addEventListener('abort', onAbort, { once: true })
      })
    },
    release() {
      const now = clock()
      for (const waiter of waiting) {
        // A waiter whose time to be sent has passed is refused, not sent at its deadline.
        if (now > waiter.sendBy) {
          waiter.expire()
          continue
        }
        waiter.grant()
        return
      }
      free++
    },
    get held() {
      return limit - free
    },
  }
  return slots
}
