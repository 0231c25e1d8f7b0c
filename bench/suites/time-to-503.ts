/**
 * Figure 8: how long a client waits for the 503 when the group service hangs (no answer
 * at all) and when its port refuses connections, next to the bare route measured the same
 * way (the baseline: what the machine and the HTTP round trip cost by themselves).
 *
 * @module
 */
import { randomBytes } from 'node:crypto'
import { Pool } from 'undici'
import { percentileOfSorted, sortedCopy } from '../stats.js'

/** Latencies of one path. */
export interface FailureTiming {
  readonly path: string
  readonly requests: number
  readonly concurrency: number
  /** Answers other than the expected status. */
  readonly wrongStatus: number
  readonly p50: number
  readonly p99: number
  readonly max: number
}

/** One path to time. */
export interface TimedPath {
  readonly path: string
  readonly requests: number
  readonly expectedStatus: number
}

/**
 * Times the paths one after another over one pool of `concurrency` connections, opened
 * before any timing starts (so no figure includes the benchmark's own TCP handshakes).
 * Every request carries a fresh random token: nothing is cached or shared between them.
 */
export async function timePaths(port: number, concurrency: number, paths: readonly TimedPath[]): Promise<FailureTiming[]> {
  const pool = new Pool(`http://127.0.0.1:${port}`, { connections: concurrency, pipelining: 1 })
  const send = async (path: string): Promise<{ ms: number; status: number }> => {
    const headers = { authorization: `Bearer ${randomBytes(32).toString('base64url')}` }
    const started = performance.now()
    const response = await pool.request({ method: 'GET', path, headers })
    await response.body.dump()
    return { ms: performance.now() - started, status: response.statusCode }
  }
  try {
    await Promise.all(Array.from({ length: concurrency * 2 }, () => send('/bare')))
    const timings: FailureTiming[] = []
    for (const { path, requests, expectedStatus } of paths) {
      const latencies: number[] = []
      let wrongStatus = 0
      let next = 0
      const worker = async (): Promise<void> => {
        while (next < requests) {
          next++
          const { ms, status } = await send(path)
          latencies.push(ms)
          if (status !== expectedStatus) wrongStatus++
        }
      }
      await Promise.all(Array.from({ length: concurrency }, worker))
      const sorted = sortedCopy(latencies)
      timings.push({
        path,
        requests,
        concurrency,
        wrongStatus,
        p50: percentileOfSorted(sorted, 50),
        p99: percentileOfSorted(sorted, 99),
        max: sorted[sorted.length - 1] ?? Number.NaN,
      })
    }
    return timings
  } finally {
    await pool.close()
  }
}
