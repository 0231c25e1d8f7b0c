/**
 * Figures 2–4: throughput of routes of one app, measured in interleaved rounds so that
 * drift on the machine (other processes, CPU frequency, GC) hits every route alike.
 *
 * @module
 */
import type autocannon from 'autocannon'
import type { Child } from '../child.js'
import { closedLoop, type ClosedLoopResult } from '../load.js'
import { median } from '../stats.js'

/** A route to load. */
export interface LoadedRoute {
  readonly name: string
  readonly path: string
  readonly headers?: Readonly<Record<string, string>>
  readonly setupRequest?: (request: autocannon.Request) => autocannon.Request
  /** Runs before each slice of this route (e.g. to hand out a new batch of tokens). */
  readonly beforeSlice?: () => Promise<void>
}

/** Settings of {@link interleavedRounds}. */
export interface RoundSettings {
  readonly rounds: number
  /** Seconds per route per round. */
  readonly duration: number
  /** Seconds per route of discarded warm-up before the rounds. */
  readonly warmup: number
  readonly connections: number
  readonly pipelining: number
}

/** Results per route name, one per round. */
export type RoundResults = ReadonlyMap<string, readonly ClosedLoopResult[]>

/**
 * Loads every route once for warm-up (discarded), then `rounds` times; each round visits
 * the routes in a rotated order, so no route always runs first or last.
 */
export async function interleavedRounds(
  server: Child<{ port: number }>,
  routes: readonly LoadedRoute[],
  settings: RoundSettings,
  progress: (line: string) => void,
): Promise<RoundResults> {
  const { port } = server.ready
  const load = async (route: LoadedRoute, duration: number): Promise<ClosedLoopResult> => {
    await route.beforeSlice?.()
    return closedLoop(
      {
        port,
        path: route.path,
        duration,
        connections: settings.connections,
        pipelining: settings.pipelining,
        ...(route.headers === undefined ? {} : { headers: route.headers }),
        ...(route.setupRequest === undefined ? {} : { setupRequest: route.setupRequest }),
      },
      server,
    )
  }
  for (const route of routes) {
    const warm = await load(route, settings.warmup)
    if (warm.failures > 0) throw new Error(`${route.name}: ${warm.failures} failed requests during warm-up`)
  }
  const results = new Map<string, ClosedLoopResult[]>(routes.map((route) => [route.name, []]))
  for (let round = 0; round < settings.rounds; round++) {
    const order = routes.map((_, i) => routes[(i + round) % routes.length] as LoadedRoute)
    for (const route of order) {
      const result = await load(route, settings.duration)
      results.get(route.name)?.push(result)
    }
    progress(
      `  round ${round + 1}/${settings.rounds}: ` +
        routes.map((route) => `${route.name} ${Math.round(results.get(route.name)?.at(-1)?.rps ?? 0)}/s`).join(', '),
    )
  }
  return results
}

/** Per-round ratios `numerator / denominator` of requests per second, with their median and worst. */
export interface RatioSummary {
  readonly perRound: readonly number[]
  readonly median: number
  readonly worst: number
  /** The same ratio from server CPU time per request (denominator's / numerator's), median over rounds. */
  readonly cpuRatio: number
}

/** Throughput of `numerator` over `denominator`, round by round. */
export function ratioOf(results: RoundResults, numerator: string, denominator: string): RatioSummary {
  const top = results.get(numerator) ?? []
  const bottom = results.get(denominator) ?? []
  const perRound = top.map((result, i) => result.rps / (bottom[i]?.rps ?? Number.NaN))
  const cpu = top.map((result, i) => (bottom[i]?.cpuUsPerRequest ?? Number.NaN) / result.cpuUsPerRequest)
  return { perRound, median: median(perRound), worst: Math.min(...perRound), cpuRatio: median(cpu) }
}

/** Median requests per second of a route. */
export function medianRps(results: RoundResults, name: string): number {
  return median((results.get(name) ?? []).map((result) => result.rps))
}

/** Median server CPU µs per request of a route. */
export function medianCpu(results: RoundResults, name: string): number {
  return median((results.get(name) ?? []).map((result) => result.cpuUsPerRequest))
}

/** Median share of a core the server used while a route was loaded. */
export function medianBusy(results: RoundResults, name: string): number {
  return median((results.get(name) ?? []).map((result) => result.serverBusy))
}

/** Failed requests of a route over all rounds. */
export function failuresOf(results: RoundResults, name: string): number {
  return (results.get(name) ?? []).reduce((sum, result) => sum + result.failures, 0)
}
