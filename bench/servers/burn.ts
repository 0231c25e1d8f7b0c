/**
 * The burn control of figure 2: a middleware that does nothing but spend a fixed amount
 * of CPU, as much as a warm guard decision costs in a loop (figure 1).
 *
 * Why: in a closed loop, any work a route adds slows the server relative to the load
 * generator, which then waits for answers more often, and every answer that wakes it costs
 * the server kernel time. So the server's CPU per request grows by more than the
 * middleware's own work, for any middleware. A route that burns a known amount of CPU
 * pays the same toll; the guard's own CPU is then that amount plus guarded − burn.
 *
 * @module
 */

/** µs of CPU that {@link burn} spends. */
export const BURN_US = 0.5

/** Spins for {@link BURN_US} µs (on the monotonic clock; with nothing else on the CPU, that is CPU time). */
export function burn(): void {
  const until = performance.now() + BURN_US / 1000
  while (performance.now() < until) {
    // spin
  }
}
