/**
 * The benchmark suite (compiled by `run.ts`, then run with plain Node). Measures the eight
 * figures of issue 5, each against a baseline of the same run, and prints one table.
 *
 * Processes: this one (the load generator) and the emulator share CPU 0; every server
 * under test runs alone on CPU 1; an idle spinner at the lowest priority on each CPU
 * keeps the (virtual) CPUs from halting between requests.
 *
 * @module
 */
import { writeFileSync } from 'node:fs'
import { cpus, totalmem } from 'node:os'
import { join } from 'node:path'
import { LOAD_CPU, pinSelf, raisePriority, REALTIME, SERVER_CPU } from './cpus.js'
import { cpuCounters, load1, stealShare } from './machine.js'
import { frameworks, profile, wanted, wantedFramework } from './profile.js'
import { children, details, progress, rows, start, startIdleSpinners, stop, us } from './run-context.js'
import type { EmulatorReady } from './servers/emulator.js'
import { formatRatio } from './stats.js'
import type { HotPathResult } from './suites/hot-path.js'
import { medianRps } from './suites/throughput.js'
import { renderTable } from './table.js'
import { bareMaximum, coldPath } from './figures/cold-path.js'
import { coalescing } from './figures/coalescing.js'
import { failures } from './figures/failures.js'
import { latency } from './figures/latency.js'
import { memory } from './figures/memory.js'
import { otherFrameworks, warmThroughput } from './figures/warm-throughput.js'

async function hotPath(): Promise<HotPathResult> {
  progress('1. hot path (in a compiled process of its own)')
  const child = await start<HotPathResult>(
    './servers/hot-path.js',
    [String(profile.hotPath.operations), String(profile.hotPath.batches)],
    SERVER_CPU,
  )
  const result = child.ready
  await stop(child)
  for (const part of [
    ...result.parts,
    result.total,
    ...(result.subscribers === undefined ? [] : [result.subscribers.none, result.subscribers.plain, result.subscribers.otel]),
  ])
    progress(`  ${part.name}: ${part.ns.toFixed(0)} ns/op (best batch ${part.bestNs.toFixed(0)})`)
  details['hotPath'] = result
  return result
}

// ---------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const pinned = pinSelf(LOAD_CPU)
  const realtime = raisePriority(process.pid)
  if (REALTIME && !realtime) progress('  note: --realtime: could not raise the priority (chrt missing, or not allowed)')
  const started = Date.now()
  const machine = `${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB`
  progress(
    `voot-guard benchmarks (${profile.name}) on Node ${process.version}, ${machine}; ${pinned ? 'load generator on CPU 0, servers on CPU 1' : 'no CPU pinning (taskset unavailable)'}`,
  )
  const loadBefore = load1()
  const countersBefore = cpuCounters()
  await startIdleSpinners()
  if (loadBefore > 1.5)
    progress(`  note: load average ${loadBefore.toFixed(2)} before the run: other processes compete for the cores, figures will be noisy`)

  const hot = wanted('1') ? await hotPath() : undefined
  const figure1Us = hot === undefined ? undefined : hot.total.ns / 1000
  const emulator = await start<EmulatorReady>('./servers/emulator.js', ['0'], LOAD_CPU)
  const [token] = await emulator.call<string[]>('issue', { user: 'alice', count: 1 })
  let bareRps: number | undefined
  let bareCpuUs: number | undefined
  if (wanted('2', '3') && wantedFramework('express5')) {
    const express5 = await warmThroughput(emulator, token ?? '', figure1Us)
    bareRps = medianRps(express5.pair, 'bare')
    bareCpuUs = express5.bareCpuUs
  }
  if (hot !== undefined) {
    const share =
      bareCpuUs === undefined
        ? ''
        : ` = ${formatRatio((100 * hot.total.ns) / 1000 / bareCpuUs, 1)} % of a bare Express 5 request (${bareCpuUs.toFixed(1)} µs CPU)`
    rows.push({
      figure: '1',
      measure: 'hot path: warm decision, Authorization header → allowed decision (median of batches)',
      result: `${us(hot.total.ns)} per op${share}`,
      // Issue 23's goal (from 1.29 µs when it was filed).
      target: '≤ 0.7 µs',
      met: hot.total.ns <= 700,
    })
    const tier = hot.sharedTier
    rows.push({
      figure: '1',
      measure: `hot path with a shared tier (Redis), the answer warm in process / the same without a tier (each in a process of its own with a redis-server beside it; median of ${tier?.pairs ?? 0} alternating pairs)`,
      result:
        tier === undefined
          ? 'not measured: no redis-server'
          : `${formatRatio(tier.ratio)} (${us(tier.tier.ns)} vs ${us(tier.bare.ns)} per op)`,
      // Issue 33's goal (3.2× when it was filed).
      target: '≤ 1.3×',
      met: tier === undefined ? undefined : tier.ratio <= 1.3,
    })
    const computed = hot.computed
    if (computed !== undefined) {
      rows.push({
        figure: '1',
        measure:
          "hot path, the adapters' step (createGuardFlow): a requirement computed from the request (requireGroup((req) => id, 'admin')) / the same static one (median of alternating rounds)",
        result: `${formatRatio(computed.ratio)} (${us(computed.computed.ns)} vs ${us(computed.static.ns)} per op)`,
        // Issue 52: a computed requirement stays warm.
        target: '≤ 1.3×',
        met: computed.ratio <= 1.3,
      })
    }
    const subscribers = hot.subscribers
    if (subscribers !== undefined) {
      rows.push({
        figure: '1',
        measure:
          'hot path with subscribers to the tracing channels: a plain subscriber / none; OpenTelemetry instrumentation / none (median of rounds)',
        result:
          `${formatRatio(subscribers.plainRatio)}; ${formatRatio(subscribers.otelRatio)} (${us(subscribers.none.ns)}, ${us(subscribers.plain.ns)}, ${us(subscribers.otel.ns)} per op)` +
          (subscribers.published ? '' : '; nothing was published (the resolver does not publish yet)'),
        target: '',
        met: undefined,
      })
      rows.push({
        figure: '1',
        measure:
          'hot path with OpenTelemetry on (real SDK: BatchSpanProcessor into an InMemorySpanExporter, a MeterProvider; a request span active) / bare (median of rounds)',
        result: `${formatRatio(subscribers.otelRatio)} (${us(subscribers.otel.ns)} vs ${us(subscribers.none.ns)} per op)`,
        // Issue 33's goal (21× when it was filed).
        target: '≤ 3×',
        met: subscribers.published ? subscribers.otelRatio <= 3 : undefined,
      })
    }
  }
  if ((profile.otherFrameworks || frameworks !== undefined) && wanted('2')) await otherFrameworks(emulator, token ?? '', figure1Us)
  if (profile.cold !== undefined && wanted('4')) await coldPath(profile.cold)
  if (wanted('8')) await failures(emulator)
  await stop(emulator)

  if (wanted('5')) {
    const slow = await start<EmulatorReady>('./servers/emulator.js', ['100'], LOAD_CPU)
    await coalescing(slow)
    await stop(slow)
  }
  if (wanted('6')) await latency((bareRps ?? (await bareMaximum())) / 2)
  if (wanted('7')) await memory()

  const loadAfter = load1()
  const steal = stealShare(countersBefore, cpuCounters())
  const order = ['1', '2', '3', '4', '5', '6', '7', '8']
  rows.sort((a, b) => order.indexOf(a.figure) - order.indexOf(b.figure))
  const minutes = (Date.now() - started) / 60_000
  details['run'] = {
    profile: profile.name,
    node: process.version,
    machine,
    pinned,
    realtime,
    loadBefore,
    loadAfter,
    steal,
    minutes,
    date: new Date(started).toISOString(),
    medianBareRps: bareRps,
  }
  writeFileSync(join(import.meta.dirname ?? '.', '..', 'results.json'), `${JSON.stringify(details, null, 2)}\n`)
  process.stdout.write(
    `\nvoot-guard benchmarks (${profile.name}), ${new Date(started).toISOString()}, Node ${process.version}, ${machine}, ` +
      `load average ${loadBefore.toFixed(2)} before (${loadAfter.toFixed(2)} after, with the 2 idle spinners), CPU steal ${Number.isNaN(steal) ? 'n/a' : `${(100 * steal).toFixed(0)} %`}, ${realtime ? 'real-time priority (--realtime), ' : ''}${minutes.toFixed(1)} min\n\n${renderTable(rows)}\n`,
  )
}

try {
  await main()
} finally {
  for (const child of [...children]) await child.stop()
}
