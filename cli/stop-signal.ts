/**
 * When a long-running command (the emulator, the demo) should stop.
 *
 * @module
 */

/**
 * A signal that aborts on `given`'s abort or, without `given`, on the process's first
 * SIGINT (Ctrl-C) or SIGTERM. The listeners fire once: should closing hang, a second
 * Ctrl-C gets Node's default behaviour (exit at once). `dispose()` removes them.
 *
 * @example
 * ```ts
 * const stop = stopSignal(io.signal)
 * await untilAborted(stop.signal)
 * stop.dispose()
 * ```
 */
export function stopSignal(given?: AbortSignal): { readonly signal: AbortSignal; dispose(): void } {
  if (given !== undefined) return { signal: given, dispose: () => {} }
  const controller = new AbortController()
  const stop = (signal: NodeJS.Signals): void => controller.abort(signal)
  process.once('SIGINT', stop)
  process.once('SIGTERM', stop)
  return {
    signal: controller.signal,
    dispose() {
      process.off('SIGINT', stop)
      process.off('SIGTERM', stop)
    },
  }
}

/**
 * Resolves once `signal` has aborted (at once if it already has).
 *
 * @example
 * ```ts
 * await untilAborted(AbortSignal.timeout(1_000))
 * ```
 */
export function untilAborted(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve()
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }))
}
