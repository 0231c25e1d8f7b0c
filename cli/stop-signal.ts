/**
 * When a long-running command (the emulator, the demo) should stop.
 *
 * @module
 */

/**
 * What {@link processStopSignal} returns.
 */
export interface ProcessStop {
  /** Aborts on the first SIGINT or SIGTERM, with the signal's name as the reason. */
  readonly signal: AbortSignal
  /** Removes the listeners and the watchdog. Call it once closing is done. */
  readonly dispose: () => void
}

/**
 * Options of {@link processStopSignal}.
 */
export interface ProcessStopOptions {
  /**
   * After the first signal, exit the process anyway (with 128 + the signal's number) when
   * it is still alive this many ms later: a hanging close must not make Ctrl-C useless.
   * Default: never. Only for a program's entry point.
   */
  forceExitAfterMs?: number
}

/**
 * A signal that aborts on the process's first SIGINT (Ctrl-C) or SIGTERM.
 *
 * Later signals are ignored rather than left to Node's default (exit at once): launchers
 * such as tsx relay a Ctrl-C that the process has already received from the terminal, and
 * that duplicate would otherwise cut the clean shutdown short. `forceExitAfterMs` bounds
 * the shutdown instead.
 */
export function processStopSignal(options: ProcessStopOptions = {}): ProcessStop {
  const controller = new AbortController()
  let watchdog: NodeJS.Timeout | undefined
  const onSignal = (signal: NodeJS.Signals): void => {
    if (controller.signal.aborted) return
    controller.abort(signal)
    if (options.forceExitAfterMs !== undefined) {
      watchdog = setTimeout(() => {
        process.stderr.write(`Did not stop within ${options.forceExitAfterMs} ms; exiting.\n`)
        process.exit(signal === 'SIGINT' ? 130 : 143)
      }, options.forceExitAfterMs)
      // The watchdog only fires if something else keeps the process alive.
      watchdog.unref()
    }
  }
  process.on('SIGINT', onSignal)
  process.on('SIGTERM', onSignal)
  return {
    signal: controller.signal,
    dispose() {
      process.off('SIGINT', onSignal)
      process.off('SIGTERM', onSignal)
      clearTimeout(watchdog)
    },
  }
}

/**
 * What stops a long-running command: the caller's signal when it gave one (a test, an
 * embedding program), else the process's own SIGINT/SIGTERM through {@link processStopSignal}.
 */
export function commandStopSignal(given: AbortSignal | undefined): ProcessStop {
  return given === undefined ? processStopSignal() : { signal: given, dispose: () => {} }
}

/**
 * Resolves once `signal` has aborted (at once if it already has).
 */
export function untilAborted(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve()
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }))
}
