/**
 * The burn control of figure 2: a middleware that does nothing but spend a fixed amount
 * of CPU, about as much as a warm guard decision costs in a loop (figure 1).
 *
 * Why: in a closed loop, any work a route adds slows the server relative to the load
 * generator, which then waits for answers more often, and every answer that wakes it costs
 * the server kernel time. So the server's CPU per request grows by more than the
 * middleware's own work, for any middleware. A route that burns a known amount of CPU
 * pays the same toll; the guard's own CPU is then that amount plus guarded − burn.
 *
 * "Known" means measured: {@link burn} spins until {@link BURN_US} µs have passed, but its
 * clock reads and its last lap make each call cost more (0.57–0.61 µs on the bench machine
 * against 0.5). {@link measureBurn} gives the real figure, in the server's own process, and
 * the guard's own CPU is computed from that, not from the nominal {@link BURN_US}: the
 * nominal one would make the guard look cheaper by the difference.
 *
 * @module
 */
import { median } from '../stats.js'

/** µs that {@link burn} spins for (on the monotonic clock); see {@link measureBurn} for what a call costs. */
export const BURN_US = 0.5

/** Spins for {@link BURN_US} µs (on the monotonic clock; with nothing else on the CPU, that is CPU time). */
export function burn(): void {
  const until = performance.now() + BURN_US / 1000
  while (performance.now() < until) {
    // spin
  }
}

const CALLS = 20_000
const RUNS = 5

/**
 * The CPU one {@link burn} call costs in this process, µs: the median of {@link RUNS} runs
 * of {@link CALLS} calls, each timed with `process.cpuUsage()` (about 11 ms per run, so
 * the clock's microsecond steps do not matter). Run it in the server under test, on its
 * CPU, while no load runs.
 */
export function measureBurn(): number {
  const perCall: number[] = []
  for (let run = 0; run < RUNS; run++) {
    const start = process.cpuUsage()
    for (let i = 0; i < CALLS; i++) burn()
    const used = process.cpuUsage(start)
    perCall.push((used.user + used.system) / CALLS)
  }
  return median(perCall)
}
