/**
 * Waiting for a promise that an abort signal may cut short, without cancelling it: the
 * resolver's waiters on a shared flight and the undici transport's wait for a response
 * both give up on their own signal while the work goes on (for the flight's other waiters,
 * or to be drained).
 *
 * @module
 */

/**
 * Resolves as `promise` does, or rejects with `reason()` as soon as `signal` aborts (at
 * once when it already has). `abandoned`, when given, is told of the promise given up on,
 * to release what it will hold (a response body to drain). The listener is removed once
 * the promise settles.
 *
 * @example
 * ```ts
 * const answer = await raceAbort(flight.promise, signal, () => new AbortedError())
 * ```
 */
export function raceAbort<T>(
  promise: Promise<T>,
  signal: AbortSignal,
  reason: () => unknown,
  abandoned?: (promise: Promise<T>) => void,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => {
      abandoned?.(promise)
      reject(reason())
    }
    if (signal.aborted) {
      onAbort()
      return
    }
    signal.addEventListener('abort', onAbort, { once: true })
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort)
        resolve(value)
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort)
        reject(error)
      },
    )
  })
}
