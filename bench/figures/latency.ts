/**
 * Figure 6: open-loop latency of bare and guarded requests on one schedule, with a slow
 * group service and a share of cache misses.
 *
 * @module
 */
import { LOAD_CPU } from '../cpus.js'
import { profile } from '../profile.js'
import { details, expectStatus, progress, rows, start, startServer, stop } from '../run-context.js'
import type { EmulatorReady } from '../servers/emulator.js'
import { formatMs } from '../stats.js'
import { type LatencyFigures, type LatencyRun, measureLatency } from '../suites/latency.js'

/** Runs figure 6 at `rate` requests per second (half the bare maximum) and adds its rows. */
export async function latency(rate: number): Promise<void> {
  const settings = profile.latency
  if (settings === undefined) return
  const all: Record<number, LatencyRun[]> = {}
  for (const upstreamMs of settings.latencies) {
    progress(`6. open-loop latency at ${Math.round(rate)}/s (bare and guarded mixed), upstream ${upstreamMs} ms`)
    const emulator = await start<EmulatorReady>('./servers/emulator.js', [String(upstreamMs)], LOAD_CPU)
    const [warmToken] = await emulator.call<string[]>('issue', { user: 'alice', count: 1 })
    const missShare = settings.missPercents.reduce((sum, percent) => sum + percent, 0) / 100
    const freshTokens = await emulator.call<string[]>('issue', {
      user: 'alice',
      count: Math.ceil((rate / 2) * settings.duration * missShare) + 100,
    })
    const server = await startServer({ framework: 'express5', baseUrl: emulator.ready.baseUrl })
    await expectStatus(server.ready.port, '/guarded', warmToken ?? '', 200)
    const runs = await measureLatency(
      {
        port: server.ready.port,
        rate,
        duration: settings.duration,
        connections: 256,
        warmToken: warmToken ?? '',
        freshTokens,
        missPercents: settings.missPercents,
      },
      progress,
    )
    await stop(server, emulator)
    all[upstreamMs] = runs
    for (const run of runs) {
      const warm = run.missPercent === 0
      const delta = run.guarded.p99 - run.bare.p99
      const triple = (f: LatencyFigures): string => `${formatMs(f.p50)} / ${formatMs(f.p975)} / ${formatMs(f.p99)}`
      rows.push({
        figure: '6',
        measure: `upstream ${upstreamMs} ms, ${run.missPercent} % misses: guarded vs bare p50 / p97.5 / p99 (ms)`,
        result:
          `${triple(run.guarded)} vs ${triple(run.bare)}; p99 difference ${formatMs(delta)} ms` +
          (run.failures > 0 ? `; ${run.failures} failed` : '') +
          (run.achievedRate < run.rate * 0.97 ? `; only ${Math.round(run.achievedRate)}/s sent` : ''),
        target: warm ? 'p99 ≤ bare p99 + 2 ms' : '',
        met: warm ? delta <= 2 && run.failures === 0 : undefined,
      })
    }
  }
  details['latency'] = { rate, runs: all }
}
