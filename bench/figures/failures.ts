/**
 * Figure 8: time to a 503 when the group service hangs or refuses connections.
 *
 * @module
 */
import type { Child } from '../child.js'
import { profile } from '../profile.js'
import { details, freePort, progress, rows, startServer, stop } from '../run-context.js'
import type { EmulatorReady } from '../servers/emulator.js'
import { formatMs } from '../stats.js'
import { type FailureTiming, timePaths } from '../suites/time-to-503.js'

/** Runs figure 8 (a hanging `emulator`, then a port nothing listens on) and adds its rows. */
export async function failures(emulator: Child<EmulatorReady>): Promise<void> {
  const { timeout, hang, refused } = profile.failures
  progress(`8. time to 503 (timeout ${timeout} ms): hanging upstream, refused connection`)
  const refusedUrl = `http://127.0.0.1:${await freePort()}/groups`
  const server = await startServer({ framework: 'express5', baseUrl: emulator.ready.baseUrl, failures: { timeout, refusedUrl } })
  const port = server.ready.port
  // One request at a time: the figure is how long one failing request takes, not queueing.
  const sequential = await timePaths(port, 1, [
    { path: '/bare', requests: refused, expectedStatus: 200 },
    { path: '/refused', requests: refused, expectedStatus: 503 },
    { path: '/refused-no-retry', requests: refused, expectedStatus: 503 },
    { path: '/refused-breaker', requests: refused, expectedStatus: 503 },
  ])
  // Hanging calls all wait for the deadline, so they run side by side.
  await emulator.call('addFault', { fault: { kind: 'hang' } })
  const [bareSide, hanging] = await timePaths(port, hang.concurrency, [
    { path: '/bare', requests: hang.requests, expectedStatus: 200 },
    { path: '/hang', requests: hang.requests, expectedStatus: 503 },
  ])
  await emulator.call('clearFaults')
  await stop(server)
  details['timeTo503'] = { timeout, sequential, concurrent: [bareSide, hanging] }
  const describe = (timing: FailureTiming | undefined): string =>
    timing === undefined
      ? 'n/a'
      : `p50 ${formatMs(timing.p50)} / p99 ${formatMs(timing.p99)} / max ${formatMs(timing.max)} ms over ${timing.requests}` +
        (timing.wrongStatus > 0 ? `; ${timing.wrongStatus} wrong status` : '')
  const [bare, refusing, refusingNoRetry, refusingBreaker] = sequential
  const ok = (timing: FailureTiming | undefined, limit: (t: FailureTiming) => boolean): boolean =>
    timing !== undefined && timing.wrongStatus === 0 && limit(timing)
  rows.push({
    figure: '8',
    measure: `baseline: bare route, same client (${hang.concurrency} concurrent)`,
    result: describe(bareSide),
    target: '',
    met: undefined,
  })
  rows.push({
    figure: '8',
    measure: `hanging upstream → 503 (${hang.concurrency} concurrent, timeout ${timeout} ms)`,
    result: describe(hanging),
    target: `max ≤ ${timeout + 50} ms`,
    met: ok(hanging, (t) => t.max <= timeout + 50),
  })
  rows.push({ figure: '8', measure: 'baseline: bare route, one request at a time', result: describe(bare), target: '', met: undefined })
  rows.push({
    figure: '8',
    measure: 'refused connection → 503 (defaults: one retry after 5–10 ms)',
    result: describe(refusing),
    target: 'p99 ≤ 50 ms',
    met: ok(refusing, (t) => t.p99 <= 50),
  })
  rows.push({
    figure: '8',
    measure: 'refused connection → 503 with `retries: 0`',
    result: describe(refusingNoRetry),
    target: 'p99 ≤ 50 ms',
    met: ok(refusingNoRetry, (t) => t.p99 <= 50),
  })
  rows.push({
    figure: '8',
    measure: 'refused connection → 503 with `circuitBreaker: true`',
    result: describe(refusingBreaker),
    target: '',
    met: undefined,
  })
}
