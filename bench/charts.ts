/**
 * `npm run bench:charts`: draws the figures of a benchmark run as SVG charts, one per
 * figure family, into `bench/charts/` (BENCHMARKS.md shows them).
 *
 * Usage: `npm run bench:charts -- [results.json ...]`. The files are what `npm run bench`
 * writes (its last run's is `results.json` in the compiled tree, see `build.ts`); several
 * are merged, a later file's figures replacing an earlier one's, so figure 1 may come from
 * one run and figure 2 from another (`bench/charts/results.json` first keeps the kept figures
 * that the later files did not measure again). The merged figures are kept in
 * `bench/charts/results.json`; without arguments the charts are drawn again from it.
 *
 * @module
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { format, resolveConfig } from 'prettier'
import { type Bar, type BarChart, renderBarChart } from './chart-svg.js'
import type { ClosedLoopResult } from './load.js'
import type { HotPathFigure } from './suites/hot-path-figure.js'
import type { LatencyRun } from './suites/latency.js'
import type { GuardCpu } from './suites/server-cpu.js'
import type { FailureTiming } from './suites/time-to-503.js'
import type { MemoryResult } from './servers/memory.js'
import { median } from './stats.js'

const CHARTS = fileURLToPath(new URL('./charts/', import.meta.url))
const KEPT = join(CHARTS, 'results.json')

/** What a run says about itself (`details.run` in main.ts). */
interface RunInfo {
  readonly date?: string
  readonly node?: string
  readonly loadBefore?: number
  readonly loadAfter?: number
  readonly profile?: string
  readonly realtime?: boolean
}

/** The merged figures: each top-level key of the runs' details, and which run it came from. */
interface Merged {
  readonly figures: Record<string, unknown>
  readonly runOf: Record<string, RunInfo>
}

function merge(files: readonly string[]): Merged {
  const figures: Record<string, unknown> = {}
  const runOf: Record<string, RunInfo> = {}
  for (const file of files) {
    const details = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>
    if (resolve(file) === KEPT) {
      // The kept figures, already merged: later files replace what they measured again.
      const kept = details as unknown as Merged
      Object.assign(figures, kept.figures)
      Object.assign(runOf, kept.runOf)
      continue
    }
    const run = (details['run'] ?? {}) as RunInfo
    for (const [key, value] of Object.entries(details)) {
      if (key === 'run') continue
      figures[key] = value
      runOf[key] = run
    }
  }
  return { figures, runOf }
}

function conditions(run: RunInfo | undefined): string {
  if (run === undefined) return ''
  const load = run.loadBefore === undefined ? '' : `, load average ${run.loadBefore.toFixed(1)} before the run`
  const priority = run.realtime === true ? ', --realtime' : ''
  return `${run.date?.slice(0, 16).replace('T', ' ') ?? ''} UTC, Node ${run.node ?? '?'}, ${run.profile ?? ''} profile${priority}${load}`
}

const us = (value: number): string => `${value.toFixed(2)} µs`

/** Every figure-1 measurement in the run (the suite's rows and any added beside them). */
function hotPathFigures(value: unknown, found: Map<string, HotPathFigure>): void {
  if (typeof value !== 'object' || value === null) return
  const figure = value as Partial<HotPathFigure>
  if (typeof figure.name === 'string' && typeof figure.ns === 'number') {
    found.set(figure.name, figure as HotPathFigure)
    return
  }
  for (const inner of Object.values(value)) hotPathFigures(inner, found)
}

function figure1(merged: Merged): BarChart | undefined {
  const hot = merged.figures['hotPath'] as { total?: HotPathFigure } | undefined
  if (hot?.total === undefined) return undefined
  const found = new Map<string, HotPathFigure>()
  hotPathFigures(hot, found)
  const base = hot.total.ns
  const others = [...found.values()].filter((figure) => figure.name !== hot.total?.name).sort((a, b) => a.ns - b.ns)
  const bars: Bar[] = [hot.total, ...others].map((figure) => ({
    label: figure.name.length > 62 ? `${figure.name.slice(0, 61)}…` : figure.name,
    segments: [{ value: figure.ns / 1000, series: 0 }],
    note: `${us(figure.ns / 1000)}  ${(figure.ns / base).toFixed(2)}×`,
    isBaseline: figure === hot.total,
  }))
  return {
    title: 'Figure 1: the warm decision and its parts, outside a server',
    subtitle: conditions(merged.runOf['hotPath']),
    axis: 'µs per operation (median of batches)',
    bars,
    baseline: { value: base / 1000, label: 'authorizeNow = 1×' },
    footnotes: ['Grey: the whole warm decision as every adapter runs it (the baseline); each note: µs, and the ratio to it.'],
  }
}

/** The frameworks of figure 2 in the run, with their labels and results. */
function frameworks(merged: Merged): Array<{ key: string; label: string; cpu?: GuardCpu; pair?: Record<string, ClosedLoopResult[]> }> {
  const known = ['express5', 'express4', 'koa3', 'fastify', 'hono', 'nest-express', 'node-http']
  const labels: Record<string, string> = {
    express5: 'Express 5',
    express4: 'Express 4',
    koa3: 'Koa 3',
    fastify: 'Fastify 5',
    hono: 'Hono 4 (node server)',
    'nest-express': 'Nest (Express platform)',
    'node-http': 'node:http (Express adapter)',
  }
  return known.flatMap((key) => {
    const value = merged.figures[key] as { label?: string; cpu?: GuardCpu; pair?: Record<string, ClosedLoopResult[]> } | undefined
    if (value === undefined) return []
    return [
      {
        key,
        label: value.label ?? labels[key] ?? key,
        ...(value.cpu === undefined ? {} : { cpu: value.cpu }),
        ...(value.pair === undefined ? {} : { pair: value.pair }),
      },
    ]
  })
}

function figure2Cpu(merged: Merged): BarChart | undefined {
  const list = frameworks(merged).filter((entry) => entry.cpu !== undefined)
  if (list.length === 0) return undefined
  const bars: Bar[] = []
  for (const { label, cpu } of list) {
    if (cpu === undefined) continue
    const route = (name: string, values: GuardCpu['bare'], note: string): Bar => ({
      label: name,
      segments: [
        { value: values.user, series: 0 },
        { value: values.system, series: 1 },
      ],
      note,
    })
    bars.push({ ...route('bare route (baseline)', cpu.bare, us(cpu.bare.total)), group: label })
    bars.push(route('no-op middleware', cpu.noop, us(cpu.noop.total)))
    if (cpu.burn !== undefined) bars.push(route('burn control (0.5 µs of work)', cpu.burn, us(cpu.burn.total)))
    bars.push(
      route(
        'voot-guard',
        cpu.guarded,
        `${us(cpu.guarded.total)}; − no-op: user ${cpu.guard.user.toFixed(2)}, system ${cpu.guard.system.toFixed(2)}`,
      ),
    )
  }
  return {
    title: 'Figure 2: server CPU per request, warm cache, under a saturating load (interleaved rounds)',
    subtitle: conditions(merged.runOf[list[0]?.key ?? '']),
    axis: 'server CPU µs per request (median of rounds; user + system)',
    bars,
    series: ['user', 'system'],
    footnotes: [
      "From process.cpuUsage() in the server around each slice. The sum is exact; Linux's tick-based accounting",
      'splits it into user and system by sampling, so read the split as an estimate.',
    ],
  }
}

function figure2Share(merged: Merged, figure1Us: number | undefined): BarChart | undefined {
  const list = frameworks(merged).filter((entry) => entry.cpu !== undefined)
  if (list.length === 0) return undefined
  return {
    title: "Figure 2: the guard's own CPU as a share of a bare request",
    subtitle: conditions(merged.runOf[list[0]?.key ?? '']),
    axis: "the guard's own CPU (the burn control's measured spin + guarded − burn control), % of the bare route's CPU per request",
    bars: list.map(({ label, cpu }) => ({
      label,
      segments: [{ value: 100 * (cpu?.share ?? Number.NaN), series: 0 }],
      note:
        `${(100 * (cpu?.share ?? Number.NaN)).toFixed(1)} % (${(cpu?.own ?? Number.NaN).toFixed(2)} µs of ${((cpu?.shareBare ?? cpu?.bare)?.total ?? Number.NaN).toFixed(1)})` +
        (figure1Us === undefined ? '' : `; ${((cpu?.own ?? Number.NaN) / figure1Us).toFixed(1)}× figure 1`),
    })),
    footnotes: [
      'Measured under a saturating load (8 pipelined requests per connection), so that the server never waits for the',
      'load generator; the share is of a bare request sent one at a time. Guarded − burn control cancels what any',
      'middleware costs beyond its own work (see BENCHMARKS.md, "Inside servers").',
    ],
    goal: { value: 5, label: 'goal ≤ 5 %' },
    max: Math.max(10, ...list.map(({ cpu }) => Math.ceil(100 * (cpu?.share ?? 0) * 1.15))),
  }
}

/** Median over rounds of `top`'s requests per second over `bottom`'s. */
function roundRatio(pair: Record<string, ClosedLoopResult[]>, top: string, bottom: string): number {
  const a = pair[top] ?? []
  const b = pair[bottom] ?? []
  return median(a.map((result, i) => result.rps / (b[i]?.rps ?? Number.NaN)))
}

function figure2Throughput(merged: Merged): BarChart | undefined {
  const list = frameworks(merged).filter((entry) => entry.pair !== undefined)
  if (list.length === 0) return undefined
  const bars: Bar[] = []
  for (const { label, pair } of list) {
    if (pair === undefined) continue
    const noop = roundRatio(pair, 'no-op middleware', 'bare')
    const guarded = roundRatio(pair, 'voot-guard', 'bare')
    bars.push({ label: 'no-op middleware / bare', segments: [{ value: noop, series: 1 }], note: noop.toFixed(2), group: label })
    bars.push({ label: 'voot-guard / bare', segments: [{ value: guarded, series: 0 }], note: guarded.toFixed(2) })
  }
  return {
    title: 'Figure 2: throughput of a guarded route against the bare route, warm cache',
    subtitle: conditions(merged.runOf[list[0]?.key ?? '']),
    axis: 'requests per second / the bare route’s, same round (median of rounds)',
    bars,
    baseline: { value: 1, label: 'bare = 1' },
    goal: { value: 0.95, label: 'goal 0.95' },
    max: 1.2,
    footnotes: ['Closed loop, 50 connections; a noisy neighbour moves these more than the CPU per request above.'],
  }
}

function figure3(merged: Merged): BarChart | undefined {
  const express = merged.figures['express5'] as { withPeers?: Record<string, ClosedLoopResult[]> } | undefined
  const withPeers = express?.withPeers
  if (withPeers === undefined) return undefined
  const names = Object.keys(withPeers).filter((name) => name !== 'bare' && name !== 'no-op middleware')
  if (names.length <= 1) return undefined
  return {
    title: 'Figure 3: voot-guard and the JWT middlewares in Express 5',
    subtitle: conditions(merged.runOf['express5']),
    axis: 'requests per second / the bare route’s, same round (median of rounds)',
    bars: names
      .map((name) => ({ name, ratio: roundRatio(withPeers, name, 'bare') }))
      .sort((a, b) => b.ratio - a.ratio)
      .map(({ name, ratio }) => ({
        label: name.length > 62 ? `${name.slice(0, 61)}…` : name,
        segments: [{ value: ratio, series: name === 'voot-guard' ? 0 : 2 }],
        note: ratio.toFixed(2),
      })),
    baseline: { value: 1, label: 'bare = 1' },
    max: 1.2,
  }
}

function figure6(merged: Merged): BarChart | undefined {
  const latency = merged.figures['latency'] as { runs?: Record<string, LatencyRun[]> } | undefined
  if (latency?.runs === undefined) return undefined
  // A saturated run's p99 (seconds) would flatten every other bar: the axis ends at four
  // times the largest p99 of the bare route with a warm cache, and a longer bar says so.
  const all = Object.values(latency.runs).flat()
  const cap = 4 * Math.max(...all.filter((run) => run.missPercent === 0).map((run) => run.bare.p99), 1)
  const note = (ms: number): string => `${ms.toFixed(1)} ms${ms > cap ? ' (off the scale)' : ''}`
  const bars: Bar[] = []
  for (const [upstream, runs] of Object.entries(latency.runs)) {
    for (const run of runs) {
      bars.push({
        label: 'bare',
        segments: [{ value: run.bare.p99, series: 1 }],
        note: note(run.bare.p99),
        group: `upstream ${upstream} ms, ${run.missPercent} % misses`,
      })
      bars.push({ label: 'voot-guard', segments: [{ value: run.guarded.p99, series: 0 }], note: note(run.guarded.p99) })
    }
  }
  return {
    title: 'Figure 6: p99 latency with a slow group service and cache misses',
    subtitle: conditions(merged.runOf['latency']),
    axis: 'p99 latency, ms (open loop, from when each request was due)',
    bars,
    max: Math.ceil(cap / 10) * 10,
  }
}

function figure7(merged: Merged): BarChart | undefined {
  const results = (['shared', 'distinct'] as const).flatMap((variety) => {
    const result = merged.figures[`memory-${variety}`] as MemoryResult | undefined
    return result === undefined ? [] : [result]
  })
  if (results.length === 0) return undefined
  return {
    title: 'Figure 7: heap per cached token',
    subtitle: conditions(merged.runOf[`memory-${results[0]?.variety ?? 'shared'}`]),
    axis: 'bytes of heap per cache entry (empty resolver → full cache)',
    bars: results.map((result) => {
      const bytes = ((result.heapEndMiB - result.heapStartMiB) * 2 ** 20) / result.finalSize
      return {
        label: result.variety === 'shared' ? 'answers shared (a class’s groups)' : 'nothing shared (worst case)',
        segments: [{ value: bytes, series: 0 }],
        note: `${bytes.toFixed(0)} B (${(result.heapEndMiB - result.heapStartMiB).toFixed(1)} MiB for ${result.finalSize.toLocaleString('en-US')})`,
      }
    }),
  }
}

function figure8(merged: Merged): BarChart | undefined {
  const failures = merged.figures['timeTo503'] as { sequential?: FailureTiming[]; concurrent?: FailureTiming[] } | undefined
  if (failures?.sequential === undefined) return undefined
  const names: Record<string, string> = {
    '/bare': 'bare route (baseline)',
    '/refused': 'refused connection (defaults)',
    '/refused-no-retry': 'refused, retries: 0',
    '/refused-breaker': 'refused, circuitBreaker: true',
  }
  return {
    title: 'Figure 8: time to a 503 when the group service refuses connections',
    subtitle: conditions(merged.runOf['timeTo503']),
    axis: 'ms per request, one at a time (p50 dark, p99 light)',
    bars: failures.sequential.map((timing) => ({
      label: names[timing.path] ?? timing.path,
      segments: [
        { value: timing.p50, series: 0 },
        { value: Math.max(0, timing.p99 - timing.p50), series: 1 },
      ],
      note: `p50 ${timing.p50.toFixed(1)}, p99 ${timing.p99.toFixed(1)} ms`,
    })),
    series: ['p50', 'p99'],
    goal: { value: 50, label: 'p99 goal 50 ms' },
  }
}

const inputs = process.argv.slice(2)
if (inputs.length === 0 && !existsSync(KEPT)) throw new Error(`bench:charts: no results given, and no ${KEPT} to draw again`)
const merged = merge(inputs.length === 0 ? [KEPT] : inputs)
mkdirSync(CHARTS, { recursive: true })
if (inputs.length > 0) {
  // Kept with the charts, so that they can be drawn again (and checked) from the repository.
  // Formatted as the repository formats `bench/`, so that `npm run format:check` passes.
  writeFileSync(KEPT, await format(JSON.stringify(merged), { ...(await resolveConfig(KEPT)), parser: 'json' }))
}
const hot = merged.figures['hotPath'] as { total?: HotPathFigure } | undefined
const figure1Us = hot?.total === undefined ? undefined : hot.total.ns / 1000
const charts: Array<[string, BarChart | undefined]> = [
  ['figure-1-warm-decision.svg', figure1(merged)],
  ['figure-2-server-cpu.svg', figure2Cpu(merged)],
  ['figure-2-guard-share.svg', figure2Share(merged, figure1Us)],
  ['figure-2-throughput.svg', figure2Throughput(merged)],
  ['figure-3-jwt-peers.svg', figure3(merged)],
  ['figure-6-latency.svg', figure6(merged)],
  ['figure-7-memory.svg', figure7(merged)],
  ['figure-8-time-to-503.svg', figure8(merged)],
]
for (const [file, chart] of charts) {
  if (chart === undefined) continue
  writeFileSync(join(CHARTS, file), renderBarChart(chart))
  process.stderr.write(`wrote bench/charts/${file}\n`)
}
