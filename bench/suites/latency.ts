/**
 * Figure 6: latency at a fixed request rate (open loop) with a slow upstream. Each run
 * mixes the bare route and the guarded route half and half on one schedule, so both see
 * the same stalls of the machine, with 0, 1 or 10 % of the guarded requests being cache
 * misses (a token the cache has never seen, so a call to the group service).
 *
 * @module
 */
import { openLoop } from '../load.js'
import { percentileOfSorted } from '../stats.js'

/** Percentiles of one group of one run, in ms. */
export interface LatencyFigures {
  readonly requests: number
  readonly p50: number
  readonly p975: number
  readonly p99: number
  readonly max: number
}

/** One open-loop run: the bare and the guarded requests of the same schedule. */
export interface LatencyRun {
  readonly missPercent: number
  readonly rate: number
  readonly achievedRate: number
  readonly bare: LatencyFigures
  readonly guarded: LatencyFigures
  readonly failures: number
}

/** Settings of {@link measureLatency}. */
export interface LatencySettings {
  readonly port: number
  /** Requests per second, both routes together. */
  readonly rate: number
  readonly duration: number
  readonly connections: number
  readonly warmToken: string
  /** Fresh tokens for misses: at least rate / 2 × duration × the sum of the miss ratios. */
  readonly freshTokens: readonly string[]
  readonly missPercents: readonly number[]
}

function figures(sorted: Float64Array | undefined): LatencyFigures {
  const values = sorted ?? new Float64Array()
  return {
    requests: values.length,
    p50: percentileOfSorted(values, 50),
    p975: percentileOfSorted(values, 97.5),
    p99: percentileOfSorted(values, 99),
    max: values[values.length - 1] ?? Number.NaN,
  }
}

/** One run per miss ratio. */
export async function measureLatency(settings: LatencySettings, progress: (line: string) => void): Promise<LatencyRun[]> {
  const runs: LatencyRun[] = []
  let fresh = 0
  const warm = { authorization: `Bearer ${settings.warmToken}` }
  const base = { port: settings.port, rate: settings.rate, connections: settings.connections }
  // A short settling run so the first measured run does not pay for JIT warm-up.
  await openLoop({ ...base, duration: 1, request: (i) => ({ path: i % 2 === 0 ? '/bare' : '/guarded', headers: warm, group: '' }) })
  for (const missPercent of settings.missPercents) {
    // Every `every`-th guarded request is a miss.
    const every = missPercent === 0 ? 0 : Math.round(100 / missPercent)
    const result = await openLoop({
      ...base,
      duration: settings.duration,
      request: (i) => {
        if (i % 2 === 0) return { path: '/bare', headers: warm, group: 'bare' }
        const guarded = (i - 1) / 2
        if (every > 0 && guarded % every === every - 1) {
          const token = settings.freshTokens[fresh++]
          if (token === undefined) throw new Error('latency: out of fresh tokens')
          return { path: '/guarded', headers: { authorization: `Bearer ${token}` }, group: 'guarded' }
        }
        return { path: '/guarded', headers: warm, group: 'guarded' }
      },
    })
    const run: LatencyRun = {
      missPercent,
      rate: settings.rate,
      achievedRate: result.achievedRate,
      bare: figures(result.latencies.get('bare')),
      guarded: figures(result.latencies.get('guarded')),
      failures: result.failures,
    }
    runs.push(run)
    progress(
      `  ${missPercent} % misses: bare p50 ${run.bare.p50.toFixed(2)} / p99 ${run.bare.p99.toFixed(2)} ms, ` +
        `guarded p50 ${run.guarded.p50.toFixed(2)} / p99 ${run.guarded.p99.toFixed(2)} ms at ${Math.round(run.achievedRate)}/s`,
    )
  }
  return runs
}
