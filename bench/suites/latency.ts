/**
 * Figure 6: latency at a fixed request rate (open loop) with a slow upstream, for the bare
 * route and the guarded route with 0, 1 and 10 % cache misses (a miss is a request with a
 * token the cache has never seen).
 *
 * @module
 */
import { openLoop } from '../load.js'
import { percentileOfSorted } from '../stats.js'

/** One open-loop run. */
export interface LatencyRun {
  readonly name: string
  readonly missPercent: number | undefined
  readonly rate: number
  readonly achievedRate: number
  readonly p50: number
  readonly p975: number
  readonly p99: number
  readonly max: number
  readonly failures: number
  readonly requests: number
}

/** Settings of {@link measureLatency}. */
export interface LatencySettings {
  readonly port: number
  readonly rate: number
  readonly duration: number
  readonly connections: number
  readonly warmToken: string
  /** Fresh tokens for misses; must hold at least rate × duration × 10 % of them. */
  readonly freshTokens: readonly string[]
  readonly missPercents: readonly number[]
}

/** Runs bare first, then guarded at each miss ratio. */
export async function measureLatency(settings: LatencySettings, progress: (line: string) => void): Promise<LatencyRun[]> {
  const runs: LatencyRun[] = []
  let fresh = 0
  const warm = { authorization: `Bearer ${settings.warmToken}` }
  const variants: { name: string; missPercent: number | undefined }[] = [
    { name: 'bare', missPercent: undefined },
    ...settings.missPercents.map((missPercent) => ({ name: `guarded, ${missPercent} % misses`, missPercent })),
  ]
  // A short settling run so the first measured variant does not pay for JIT warm-up.
  await openLoop({ port: settings.port, rate: settings.rate, duration: 1, connections: settings.connections, request: () => ({ path: '/guarded', headers: warm }) })
  for (const variant of variants) {
    const every = variant.missPercent === undefined || variant.missPercent === 0 ? 0 : Math.round(100 / variant.missPercent)
    const result = await openLoop({
      port: settings.port,
      rate: settings.rate,
      duration: settings.duration,
      connections: settings.connections,
      request: (i) => {
        if (variant.missPercent === undefined) return { path: '/bare', headers: warm }
        if (every > 0 && i % every === every - 1) {
          const token = settings.freshTokens[fresh++]
          if (token === undefined) throw new Error('latency: out of fresh tokens')
          return { path: '/guarded', headers: { authorization: `Bearer ${token}` } }
        }
        return { path: '/guarded', headers: warm }
      },
    })
    const sorted = result.latencies
    const run: LatencyRun = {
      name: variant.name,
      missPercent: variant.missPercent,
      rate: settings.rate,
      achievedRate: result.achievedRate,
      p50: percentileOfSorted(sorted, 50),
      p975: percentileOfSorted(sorted, 97.5),
      p99: percentileOfSorted(sorted, 99),
      max: sorted[sorted.length - 1] ?? Number.NaN,
      failures: result.failures,
      requests: sorted.length,
    }
    runs.push(run)
    progress(`  ${variant.name}: p50 ${run.p50.toFixed(2)} ms, p97.5 ${run.p975.toFixed(2)} ms, p99 ${run.p99.toFixed(2)} ms at ${Math.round(run.achievedRate)}/s`)
  }
  return runs
}
