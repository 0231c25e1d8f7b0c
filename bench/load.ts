/**
 * Load generators. Closed loop (autocannon): as many requests as the server takes, for
 * throughput. Open loop (a fixed schedule over an undici pool): latency measured from
 * when each request was *due*, so a stalled server cannot hide its stalls by slowing the
 * sender down (coordinated omission); requests of several groups (routes) can share one
 * schedule, so that they go through the same moments of the machine.
 *
 * @module
 */
import { readFileSync } from 'node:fs'
import autocannon from 'autocannon'
import { Pool } from 'undici'
import type { Child } from './child.js'

/** Options of {@link closedLoop}. */
export interface ClosedLoopOptions {
  readonly port: number
  readonly path: string
  readonly headers?: Readonly<Record<string, string>>
  /** Seconds. */
  readonly duration: number
  readonly connections: number
  readonly pipelining: number
  /** Per-request set-up (e.g. a distinct token each time); slower, so only where needed. */
  readonly setupRequest?: (request: autocannon.Request) => autocannon.Request
}

/** What a closed-loop run measured. */
export interface ClosedLoopResult {
  /** Completed requests per second. */
  readonly rps: number
  readonly total: number
  /** Responses that were not 2xx, plus socket errors and timeouts. */
  readonly failures: number
  /** Server CPU time per completed request, µs (when a server child was sampled). */
  readonly cpuUsPerRequest: number
  /** The same, user-space CPU only (the process's own code, V8, its helper threads). */
  readonly userUsPerRequest: number
  /** The same, kernel CPU only (system calls: the sockets, epoll, futexes of helper threads). */
  readonly systemUsPerRequest: number
  /** Share of one core the server used (1 = saturated: the server was the bottleneck). */
  readonly serverBusy: number
  /**
   * Times the load generator went to sleep per request (its voluntary context switches).
   * Each one is a wake-up that a server's response has to pay for in kernel time: the
   * closed loop's own effect, larger the closer the server is to keeping up.
   */
  readonly loadWakeupsPerRequest: number
}

/** Voluntary context switches of this process's main thread (Linux), or NaN elsewhere. */
function sleepsOfThisProcess(): number {
  try {
    return Number(/^voluntary_ctxt_switches:\s+(\d+)/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? Number.NaN)
  } catch {
    return Number.NaN
  }
}

/** Runs autocannon against `127.0.0.1:port`, sampling the server child's CPU around it. */
export async function closedLoop(options: ClosedLoopOptions, server?: Child<unknown>): Promise<ClosedLoopResult> {
  const before = await server?.cpu()
  const sleepsBefore = sleepsOfThisProcess()
  const started = performance.now()
  const result = await autocannon({
    url: `http://127.0.0.1:${options.port}${options.path}`,
    duration: options.duration,
    connections: options.connections,
    pipelining: options.pipelining,
    headers: { ...options.headers },
    ...(options.setupRequest === undefined ? {} : { requests: [{ setupRequest: options.setupRequest }] }),
  })
  // autocannon's own duration is coarse (whole ticks); the wall clock around it is not.
  const seconds = (performance.now() - started) / 1000
  const sleeps = sleepsOfThisProcess() - sleepsBefore
  const after = await server?.cpu()
  const total = result.requests.total
  let cpuUsPerRequest = Number.NaN
  let userUsPerRequest = Number.NaN
  let systemUsPerRequest = Number.NaN
  let serverBusy = Number.NaN
  if (before !== undefined && after !== undefined) {
    const cpuUs = after.cpuUs - before.cpuUs
    cpuUsPerRequest = cpuUs / Math.max(1, total)
    userUsPerRequest = (after.userUs - before.userUs) / Math.max(1, total)
    systemUsPerRequest = (after.systemUs - before.systemUs) / Math.max(1, total)
    serverBusy = cpuUs / (Number(after.wallNs - before.wallNs) / 1000)
  }
  return {
    rps: total / seconds,
    total,
    failures: result.non2xx + result.errors + result.timeouts,
    cpuUsPerRequest,
    userUsPerRequest,
    systemUsPerRequest,
    serverBusy,
    loadWakeupsPerRequest: sleeps / Math.max(1, total),
  }
}

/** Options of {@link openLoop}. */
export interface OpenLoopOptions {
  readonly port: number
  /** Requests per second, on a fixed schedule. */
  readonly rate: number
  /** Seconds. */
  readonly duration: number
  /** Concurrent connections available (requests beyond them queue, and the wait counts). */
  readonly connections: number
  /** The request with sequence number `i`, and the group its latency is counted in. */
  readonly request: (i: number) => { readonly path: string; readonly headers: Record<string, string>; readonly group: string }
}

/** What an open-loop run measured. */
export interface OpenLoopResult {
  /** Per group: latencies in ms, from when each request was due to its complete response, sorted. */
  readonly latencies: ReadonlyMap<string, Float64Array>
  /** Requests actually sent per second. */
  readonly achievedRate: number
  /** Non-2xx answers and errors. */
  readonly failures: number
}

/** Sends requests at a fixed rate regardless of how fast answers come back. */
export async function openLoop(options: OpenLoopOptions): Promise<OpenLoopResult> {
  const pool = new Pool(`http://127.0.0.1:${options.port}`, { connections: options.connections, pipelining: 1 })
  const count = Math.round(options.rate * options.duration)
  const latencies = new Float64Array(count)
  const groups: string[] = new Array<string>(count)
  const interval = 1000 / options.rate
  let failures = 0
  let sent = 0
  let done = 0
  const start = performance.now()
  await new Promise<void>((resolve) => {
    const finish = (): void => {
      if (++done === count) resolve()
    }
    const tick = (): void => {
      const now = performance.now()
      // Every request whose time has come is sent now, and timed from its due time.
      while (sent < count && start + sent * interval <= now) {
        const i = sent++
        const due = start + i * interval
        const { path, headers, group } = options.request(i)
        groups[i] = group
        pool.request({ method: 'GET', path, headers }).then(
          async (response) => {
            await response.body.dump()
            latencies[i] = performance.now() - due
            if (response.statusCode < 200 || response.statusCode >= 300) failures++
            finish()
          },
          () => {
            latencies[i] = performance.now() - due
            failures++
            finish()
          },
        )
      }
      if (sent < count) setImmediate(tick)
    }
    tick()
  })
  const elapsed = (performance.now() - start) / 1000
  await pool.close()
  const byGroup = new Map<string, number[]>()
  for (let i = 0; i < count; i++) {
    const group = groups[i] ?? ''
    let list = byGroup.get(group)
    if (list === undefined) byGroup.set(group, (list = []))
    list.push(latencies[i] ?? Number.NaN)
  }
  const sorted = new Map([...byGroup].map(([group, list]) => [group, Float64Array.from(list).sort()]))
  return { latencies: sorted, achievedRate: count / elapsed, failures }
}
