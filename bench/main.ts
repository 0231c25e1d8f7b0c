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
import { createServer } from 'node:net'
import type { AddressInfo } from 'node:net'
import { cpus, totalmem } from 'node:os'
import { join } from 'node:path'
import { startChild, type Child } from './child.js'
import { LOAD_CPU, pinSelf, SERVER_CPU } from './cpus.js'
import { cpuCounters, load1, stealShare } from './machine.js'
import { frameworks, LOAD, profile, wanted, wantedFramework, type Profile } from './profile.js'
import type { ServerConfig, ServerReady } from './servers/config.js'
import type { TimingSummary } from './servers/timings.js'
import type { EmulatorReady } from './servers/emulator.js'
import type { MemoryResult } from './servers/memory.js'
import { formatMs, formatRatio } from './stats.js'
import { measureCoalescing, type CoalescingResult } from './suites/coalescing.js'
import type { HotPathResult } from './suites/hot-path.js'
import { measureLatency, type LatencyFigures, type LatencyRun } from './suites/latency.js'
import {
  failuresOf,
  interleavedRounds,
  medianBusy,
  medianCpu,
  medianRps,
  ratioOf,
  type LoadedRoute,
  type RoundResults,
} from './suites/throughput.js'
import { timePaths, type FailureTiming } from './suites/time-to-503.js'
import { renderTable, type Row } from './table.js'

const rows: Row[] = []
const details: Record<string, unknown> = {}
const progress = (line: string): void => void process.stderr.write(`${line}\n`)
const children: Child<unknown>[] = []

async function start<R>(script: string, args: readonly string[], cpu: number, nodeOptions: readonly string[] = [], idlePriority = false): Promise<Child<R>> {
  const child = await startChild<R>(script, { args, cpu, nodeOptions, idlePriority })
  children.push(child as Child<unknown>)
  return child
}

async function stop(...stopping: Child<unknown>[]): Promise<void> {
  for (const child of stopping) {
    await child.stop()
    children.splice(children.indexOf(child), 1)
  }
}

function startServer(config: ServerConfig): Promise<Child<ServerReady>> {
  const scripts: Partial<Record<ServerConfig['framework'], string>> = {
    koa3: './servers/koa.js',
    fastify: './servers/fastify.js',
    hono: './servers/hono.js',
    'nest-express': './servers/nest.js',
  }
  const script = scripts[config.framework] ?? './servers/express.js'
  return start<ServerReady>(script, [JSON.stringify(config)], SERVER_CPU)
}

async function expectStatus(port: number, path: string, token: string, status: number): Promise<void> {
  const response = await fetch(`http://127.0.0.1:${port}${path}`, { headers: { authorization: `Bearer ${token}` } })
  await response.arrayBuffer()
  if (response.status !== status) throw new Error(`${path}: expected ${status}, got ${response.status}`)
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo
      server.close(() => resolve(port))
    })
  })
}

const us = (ns: number): string => `${(ns / 1000).toFixed(2)} µs`
const rps = (value: number): string => `${Math.round(value).toLocaleString('en-US')}/s`

// ---------------------------------------------------------------------------------------

async function hotPath(): Promise<HotPathResult> {
  progress('1. hot path (in a compiled process of its own)')
  const child = await start<HotPathResult>('./servers/hot-path.js', [String(profile.hotPath.operations), String(profile.hotPath.batches)], SERVER_CPU)
  const result = child.ready
  await stop(child)
  for (const part of [...result.parts, result.total, ...(result.subscribers === undefined ? [] : [result.subscribers.none, result.subscribers.plain, result.subscribers.otel])]) progress(`  ${part.name}: ${part.ns.toFixed(0)} ns/op (best batch ${part.bestNs.toFixed(0)})`)
  details['hotPath'] = result
  return result
}

/** The range of a route's throughput over the rounds: how noisy the machine was. */
function spread(results: RoundResults, name: string): string {
  const values = (results.get(name) ?? []).map((result) => result.rps)
  return `${Math.round(Math.min(...values)).toLocaleString('en-US')}–${Math.round(Math.max(...values)).toLocaleString('en-US')}/s`
}

function pairRows(label: string, results: RoundResults, target: number): Row[] {
  const noop = ratioOf(results, 'no-op middleware', 'bare')
  const ownShare = ratioOf(results, 'voot-guard', 'no-op middleware')
  return [pairRow(label, results, target), {
    figure: '2',
    measure: `${label}: a no-op middleware / bare (what any middleware costs); guarded / no-op`,
    result: `${formatRatio(noop.median)} (worst ${formatRatio(noop.worst)}); ${formatRatio(ownShare.median)} (worst ${formatRatio(ownShare.worst)})`,
    target: '',
    met: undefined,
  }]
}

function pairRow(label: string, results: RoundResults, target: number): Row {
  const ratio = ratioOf(results, 'voot-guard', 'bare')
  return {
    figure: '2',
    measure: `${label}: guarded / bare throughput, warm cache (median, worst of ${ratio.perRound.length} rounds)`,
    result:
      `${formatRatio(ratio.median)} (worst ${formatRatio(ratio.worst)}); ${rps(medianRps(results, 'voot-guard'))} vs ${rps(medianRps(results, 'bare'))}; ` +
      `server CPU per request ${medianCpu(results, 'voot-guard').toFixed(1)} vs ${medianCpu(results, 'bare').toFixed(1)} µs (ratio ${formatRatio(ratio.cpuRatio)}); ` +
      `bare route ${spread(results, 'bare')} across rounds; server busy ${formatRatio(medianBusy(results, 'bare'))}`,
    target: `≥ ${target}`,
    met: ratio.median >= target,
  }
}

/** Loads the timed twins of `routes` (`/timed<path>`) and returns each middleware's own time inside the server. */
async function timeInside(server: Child<ServerReady>, routes: readonly LoadedRoute[]): Promise<Record<string, TimingSummary>> {
  progress(`  timed inside the server: ${routes.map((route) => route.name).join(', ')}`)
  await server.call('timings') // forgets earlier samples
  const timed = routes.map((route) => ({ ...route, path: `/timed${route.path}` }))
  checkFailures(await interleavedRounds(server, timed, profile.timed, progress))
  return server.call<Record<string, TimingSummary>>('timings')
}

/** Figure 2's cross-check row: the guard's own time (p50 minus the timed no-op's), and the throughput ratio it comes to. */
function ownTimeRow(label: string, timed: Record<string, TimingSummary>, bareCpu: number): Row {
  const guard = timed['voot-guard']
  const noop = timed['no-op middleware']
  const own = (guard?.p50 ?? Number.NaN) - (noop?.p50 ?? Number.NaN)
  return {
    figure: '2',
    measure: `${label}: the guard's own time inside the server, warm (p50 of ${(guard?.count ?? 0).toLocaleString('en-US')} timed requests, minus a timed no-op)`,
    result:
      `${own.toFixed(1)} µs (guard ${guard?.p50.toFixed(1)} µs, no-op ${noop?.p50.toFixed(1)} µs) = ${((100 * own) / bareCpu).toFixed(1)} % of the bare route's ` +
      `${bareCpu.toFixed(0)} µs CPU per request: a throughput ratio of ${formatRatio(bareCpu / (bareCpu + own))}`,
    target: '',
    met: undefined,
  }
}

function checkFailures(results: RoundResults): void {
  for (const name of results.keys()) {
    const failed = failuresOf(results, name)
    if (failed > 0) throw new Error(`${name}: ${failed} failed requests`)
  }
}

async function warmThroughput(emulator: Child<EmulatorReady>, token: string): Promise<{ pair: RoundResults; bareCpuUs: number }> {
  progress(`2./3. warm cache, Express 5 (bare and guarded alternating, ${profile.pair.rounds} rounds of ${profile.pair.duration} s per route)`)
  const server = await startServer({ framework: 'express5', baseUrl: emulator.ready.baseUrl, peers: true })
  // The bare route gets the same header: the figure is the guard's cost, not the header's.
  const auth = { authorization: `Bearer ${token}` }
  await expectStatus(server.ready.port, '/guarded', token, 200)
  const peers = (server.ready.peers ?? []).filter((peer) => profile.peers === undefined || profile.peers.includes(peer.path))
  const pairRoutes: LoadedRoute[] = [
    { name: 'bare', path: '/bare', headers: auth },
    { name: 'voot-guard', path: '/guarded', headers: auth },
    { name: 'no-op middleware', path: '/noop', headers: auth },
  ]
  const peerRoutes: LoadedRoute[] = peers.map((peer) => ({ name: peer.label, path: peer.path, headers: { authorization: `Bearer ${server.ready.jwt?.[peer.algorithm] ?? ''}` } }))
  for (const peer of peers) await expectStatus(server.ready.port, peer.path, server.ready.jwt?.[peer.algorithm] ?? '', 200)

  const pair = await interleavedRounds(server, profile.peerRounds === undefined ? [...pairRoutes, ...peerRoutes] : pairRoutes, profile.pair, progress)
  checkFailures(pair)
  let withPeers = pair
  if (profile.peerRounds !== undefined) {
    progress(`3. the JWT peers in the same app (${profile.peerRounds.rounds} rounds of ${profile.peerRounds.duration} s per route)`)
    withPeers = await interleavedRounds(server, [...pairRoutes.slice(0, 2), ...peerRoutes], profile.peerRounds, progress)
    checkFailures(withPeers)
  }
  // The peers are not timed this way: they hand on after an `await`, so their time to
  // `next()` includes waiting behind other requests, not only their own work.
  const timed = await timeInside(server, pairRoutes.slice(1).reverse())
  const stats = await server.call<{ upstreamCalls: number }>('stats')
  await stop(server)
  details['express5'] = { pair: Object.fromEntries(pair), withPeers: Object.fromEntries(withPeers), timed, upstreamCalls: stats.upstreamCalls }
  rows.push(...pairRows('Express 5', pair, 0.95), ownTimeRow('Express 5', timed, medianCpu(pair, 'bare')))

  // 3. Peers, as throughput relative to the bare route, and voot-guard over the fastest RS256.
  let fastestRs256: { name: string; rps: number } | undefined
  let fastestHs256: { name: string; rps: number } | undefined
  const guarded = ratioOf(withPeers, 'voot-guard', 'bare')
  rows.push({
    figure: '3',
    measure: 'voot-guard requireGroup (warm cache): throughput / bare, in the peer rounds',
    result: `${formatRatio(guarded.median)} (${rps(medianRps(withPeers, 'voot-guard'))}, ${medianCpu(withPeers, 'voot-guard').toFixed(0)} µs CPU/request; bare ${medianCpu(withPeers, 'bare').toFixed(0)} µs)`,
    target: '',
    met: undefined,
  })
  for (const peer of peers) {
    const peerRps = medianRps(withPeers, peer.label)
    const peerRatio = ratioOf(withPeers, peer.label, 'bare')
    rows.push({
      figure: '3',
      measure: `${peer.label}: throughput / bare`,
      result: `${formatRatio(peerRatio.median)} (${rps(peerRps)}, ${medianCpu(withPeers, peer.label).toFixed(0)} µs CPU/request)`,
      target: '',
      met: undefined,
    })
    if (peer.algorithm === 'RS256' && (fastestRs256 === undefined || peerRps > fastestRs256.rps)) fastestRs256 = { name: peer.label, rps: peerRps }
    if (peer.algorithm === 'HS256' && (fastestHs256 === undefined || peerRps > fastestHs256.rps)) fastestHs256 = { name: peer.label, rps: peerRps }
  }
  if (fastestRs256 !== undefined) {
    const vs = ratioOf(withPeers, 'voot-guard', fastestRs256.name)
    rows.push({
      figure: '3',
      measure: `voot-guard / fastest RS256 peer (${fastestRs256.name})`,
      result: `${formatRatio(vs.median)} (worst round ${formatRatio(vs.worst)}; by CPU per request ${formatRatio(vs.cpuRatio)})`,
      target: '≥ 2',
      met: vs.median >= 2,
    })
  }
  if (fastestRs256 !== undefined) {
    // What each middleware adds to a request, whatever the framework costs on this machine.
    const bareCpu = medianCpu(withPeers, 'bare')
    const guardAdds = medianCpu(withPeers, 'voot-guard') - bareCpu
    const jwtAdds = medianCpu(withPeers, fastestRs256.name) - bareCpu
    rows.push({
      figure: '3',
      measure: `server CPU added per request over bare: voot-guard vs ${fastestRs256.name}`,
      result: `${guardAdds.toFixed(1)} µs vs ${jwtAdds.toFixed(1)} µs (bare ${bareCpu.toFixed(0)} µs)`,
      target: '',
      met: undefined,
    })
  }
  if (fastestHs256 !== undefined) {
    const vs = ratioOf(withPeers, 'voot-guard', fastestHs256.name)
    rows.push({ figure: '3', measure: `voot-guard / fastest HS256 peer (${fastestHs256.name})`, result: `${formatRatio(vs.median)} (worst round ${formatRatio(vs.worst)}; by CPU per request ${formatRatio(vs.cpuRatio)})`, target: '', met: undefined })
  }
  return { pair, bareCpuUs: medianCpu(pair, 'bare') }
}

async function otherFrameworks(emulator: Child<EmulatorReady>, token: string): Promise<void> {
  for (const [framework, label, target] of [
    ['express4', 'Express 4', 0.93],
    ['koa3', 'Koa 3', 0.92],
    ['fastify', 'Fastify 5', 0.95],
    ['hono', 'Hono 4 (node server)', 0.95],
    ['nest-express', 'Nest 12 (Express platform)', 0.97],
  ] as const) {
    if (!wantedFramework(framework)) continue
    progress(`2. warm cache, ${label}`)
    const server = await startServer({ framework, baseUrl: emulator.ready.baseUrl })
    await expectStatus(server.ready.port, '/guarded', token, 200)
    const auth = { authorization: `Bearer ${token}` }
    const routes: LoadedRoute[] = [
      { name: 'bare', path: '/bare', headers: auth },
      { name: 'voot-guard', path: '/guarded', headers: auth },
      { name: 'no-op middleware', path: '/noop', headers: auth },
    ]
    const results = await interleavedRounds(server, routes, profile.pair, progress)
    checkFailures(results)
    const timed = await timeInside(server, routes.slice(1))
    await stop(server)
    details[framework] = { pair: Object.fromEntries(results), timed }
    rows.push(...pairRows(label, results, target), ownTimeRow(label, timed, medianCpu(results, 'bare')))
  }
}

async function coldPath(cold: NonNullable<Profile['cold']>): Promise<void> {
  progress('4. cold path: a distinct token per request, emulator at 0 ms')
  const emulator = await start<EmulatorReady>('./servers/emulator.js', ['0'], LOAD_CPU)
  let tokens: string[] = []
  let next = 0
  let requests = 0
  const server = await startServer({ framework: 'express5', baseUrl: emulator.ready.baseUrl })
  const routes: LoadedRoute[] = [
    // No guard on this route: any token does, and it may have expired.
    { name: 'bare', path: '/bare', headers: { authorization: `Bearer ${'x'.repeat(43)}` } },
    {
      name: 'voot-guard cold',
      path: '/guarded',
      // A new batch per slice; the emulator's clock moves on so the old batch expires.
      beforeSlice: async () => {
        tokens = await emulator.call<string[]>('issue', { user: 'alice', count: cold.batch, expireOthers: true })
        next = 0
      },
      setupRequest: (request) => {
        requests++
        // Past the batch, tokens repeat (warm hits); the row shows upstream calls against requests.
        const token = tokens[next++ % tokens.length] ?? ''
        return { ...request, headers: { ...request.headers, authorization: `Bearer ${token}` } }
      },
    },
  ]
  const results = await interleavedRounds(server, routes, cold.settings, progress)
  const stats = await server.call<{ upstreamCalls: number; hits: number }>('stats')
  await stop(server, emulator)
  checkFailures(results)
  details['cold'] = { results: Object.fromEntries(results), stats, requests }
  const ratio = ratioOf(results, 'voot-guard cold', 'bare')
  rows.push({
    figure: '4',
    measure: 'cold path (new token per request; emulator 0 ms, on the load generator\'s CPU): guarded / bare',
    result:
      `${formatRatio(ratio.median)} (worst ${formatRatio(ratio.worst)}); ${rps(medianRps(results, 'voot-guard cold'))} vs ${rps(medianRps(results, 'bare'))}; ` +
      `server CPU ${medianCpu(results, 'voot-guard cold').toFixed(0)} vs ${medianCpu(results, 'bare').toFixed(0)} µs/request; ${stats.upstreamCalls} upstream calls for ${requests} requests`,
    target: '',
    met: undefined,
  })
}

/** The bare Express 5 route's throughput, when figure 6 runs without figure 2. */
async function bareMaximum(): Promise<number> {
  const emulator = await start<EmulatorReady>('./servers/emulator.js', ['0'], LOAD_CPU)
  const server = await startServer({ framework: 'express5', baseUrl: emulator.ready.baseUrl })
  const results = await interleavedRounds(server, [{ name: 'bare', path: '/bare' }], { rounds: 3, duration: 1, warmup: 1, ...LOAD }, progress)
  await stop(server, emulator)
  return medianRps(results, 'bare')
}

async function coalescing(emulator: Child<EmulatorReady>): Promise<void> {
  progress(`5. coalescing: ${profile.coalescing} concurrent cold requests for one token (upstream 100 ms)`)
  const server = await startServer({ framework: 'express5', baseUrl: emulator.ready.baseUrl, coalescing: true })
  const results: CoalescingResult[] = await measureCoalescing(server, emulator, profile.coalescing)
  const stats = await server.call<{ coalesced: number }>('stats')
  await stop(server)
  details['coalescing'] = { results, coalesced: stats.coalesced }
  for (const result of results) {
    const label = result.route === '/coalesce' ? 'voot-guard' : result.route === '/naive' ? 'control: no cache' : 'control: cache without single-flight'
    const statuses = Object.entries(result.statuses).map(([status, count]) => `${count}×${status}`).join(' ')
    const isGuard = result.route === '/coalesce'
    rows.push({
      figure: '5',
      measure: `${label}: upstream calls for ${result.requests} concurrent requests`,
      result: `me/groups ${result.groupsCalls}, me/groups/{id} ${result.membershipCalls} (answers ${statuses}${isGuard ? `; ${stats.coalesced} waited on a shared call` : ''})`,
      target: isGuard ? '1 and 1' : '',
      met: isGuard ? result.groupsCalls === 1 && result.membershipCalls === 1 : undefined,
    })
  }
}

async function latency(rate: number): Promise<void> {
  const settings = profile.latency
  if (settings === undefined) return
  const all: Record<number, LatencyRun[]> = {}
  for (const upstreamMs of settings.latencies) {
    progress(`6. open-loop latency at ${Math.round(rate)}/s (bare and guarded mixed), upstream ${upstreamMs} ms`)
    const emulator = await start<EmulatorReady>('./servers/emulator.js', [String(upstreamMs)], LOAD_CPU)
    const [warmToken] = await emulator.call<string[]>('issue', { user: 'alice', count: 1 })
    const missShare = settings.missPercents.reduce((sum, percent) => sum + percent, 0) / 100
    const freshTokens = await emulator.call<string[]>('issue', { user: 'alice', count: Math.ceil((rate / 2) * settings.duration * missShare) + 100 })
    const server = await startServer({ framework: 'express5', baseUrl: emulator.ready.baseUrl })
    await expectStatus(server.ready.port, '/guarded', warmToken ?? '', 200)
    const runs = await measureLatency(
      { port: server.ready.port, rate, duration: settings.duration, connections: 256, warmToken: warmToken ?? '', freshTokens, missPercents: settings.missPercents },
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

async function memory(): Promise<void> {
  const { tokens, max, varieties } = profile.memory
  for (const variety of varieties) {
    progress(`7. memory (${variety} answers): ${tokens.toLocaleString('en-US')} distinct tokens, cache.max ${max.toLocaleString('en-US')}`)
    const child = await start<MemoryResult>('./servers/memory.js', [String(tokens), String(max), 'carol', variety], SERVER_CPU, ['--expose-gc'])
    const result = child.ready
    await stop(child)
    details[`memory-${variety}`] = result
    const growth = result.heapEndMiB - result.heapStartMiB
    const leak = result.heapEndMiB - result.heapFullMiB
    const answers =
      variety === 'shared'
        ? `every token the same ${result.bodyBytes}-byte me/groups answer, as a class shares its groups`
        : `every token's membership with a title of its own, nothing shared`
    if (variety === varieties[0]) {
      rows.push({
        figure: '7',
        measure: `cache entries after ${tokens.toLocaleString('en-US')} tokens (largest seen)`,
        result: `${result.finalSize.toLocaleString('en-US')} (${result.largestSize.toLocaleString('en-US')}); ${result.upstreamCalls.toLocaleString('en-US')} upstream calls in ${result.seconds.toFixed(1)} s`,
        target: `≤ ${max.toLocaleString('en-US')}`,
        met: result.largestSize <= max && result.finalSize === max,
      })
    }
    rows.push({
      figure: '7',
      measure: `heap growth, empty resolver → end (${answers})`,
      result:
        `${growth.toFixed(1)} MiB (${((growth * 1024 * 1024) / max).toFixed(0)} bytes per entry); ` +
        `${result.arrayBuffersMiB.toFixed(1)} MiB in ArrayBuffers, RSS ${result.rssMiB.toFixed(0)} MiB; ` +
        `${result.finalSize.toLocaleString('en-US')} entries at the end`,
      target: '≤ 64 MiB',
      met: growth <= 64 && result.finalSize === max,
    })
    rows.push({
      figure: '7',
      measure: `heap growth once the cache was full (${max.toLocaleString('en-US')} → ${tokens.toLocaleString('en-US')} tokens, ${variety})`,
      result: `${leak.toFixed(1)} MiB`,
      target: '',
      met: undefined,
    })
  }
}

async function failures(emulator: Child<EmulatorReady>): Promise<void> {
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
  const ok = (timing: FailureTiming | undefined, limit: (t: FailureTiming) => boolean): boolean => timing !== undefined && timing.wrongStatus === 0 && limit(timing)
  rows.push({ figure: '8', measure: `baseline: bare route, same client (${hang.concurrency} concurrent)`, result: describe(bareSide), target: '', met: undefined })
  rows.push({ figure: '8', measure: `hanging upstream → 503 (${hang.concurrency} concurrent, timeout ${timeout} ms)`, result: describe(hanging), target: `max ≤ ${timeout + 50} ms`, met: ok(hanging, (t) => t.max <= timeout + 50) })
  rows.push({ figure: '8', measure: 'baseline: bare route, one request at a time', result: describe(bare), target: '', met: undefined })
  rows.push({ figure: '8', measure: 'refused connection → 503 (defaults: one retry after 5–10 ms)', result: describe(refusing), target: 'p99 ≤ 50 ms', met: ok(refusing, (t) => t.p99 <= 50) })
  rows.push({ figure: '8', measure: 'refused connection → 503 with `retries: 0`', result: describe(refusingNoRetry), target: 'p99 ≤ 50 ms', met: ok(refusingNoRetry, (t) => t.p99 <= 50) })
  rows.push({ figure: '8', measure: 'refused connection → 503 with `circuitBreaker: true`', result: describe(refusingBreaker), target: '', met: undefined })
}

// ---------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const pinned = pinSelf(LOAD_CPU)
  const started = Date.now()
  const machine = `${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB`
  progress(`voot-guard benchmarks (${profile.name}) on Node ${process.version}, ${machine}; ${pinned ? 'load generator on CPU 0, servers on CPU 1' : 'no CPU pinning (taskset unavailable)'}`)
  const loadBefore = load1()
  const countersBefore = cpuCounters()
  // On a VM an idle vCPU is halted and can take milliseconds to come back: keep both busy
  // at the lowest priority (see servers/idle-spinner.ts). Without chrt, run without them.
  for (const cpu of [LOAD_CPU, SERVER_CPU]) {
    try {
      await start('./servers/idle-spinner.js', [], cpu, [], true)
    } catch {
      progress(`  note: could not start an idle spinner on CPU ${cpu} (chrt missing?); latency figures will include vCPU wake-ups`)
    }
  }
  if (loadBefore > 1.5) progress(`  note: load average ${loadBefore.toFixed(2)} before the run: other processes compete for the cores, figures will be noisy`)

  const hot = wanted('1') ? await hotPath() : undefined
  const emulator = await start<EmulatorReady>('./servers/emulator.js', ['0'], LOAD_CPU)
  const [token] = await emulator.call<string[]>('issue', { user: 'alice', count: 1 })
  let bareRps: number | undefined
  let bareCpuUs: number | undefined
  if (wanted('2', '3') && wantedFramework('express5')) {
    const express5 = await warmThroughput(emulator, token ?? '')
    bareRps = medianRps(express5.pair, 'bare')
    bareCpuUs = express5.bareCpuUs
  }
  if (hot !== undefined) {
    const share = bareCpuUs === undefined ? '' : ` = ${formatRatio((100 * hot.total.ns) / 1000 / bareCpuUs, 1)} % of a bare Express 5 request (${bareCpuUs.toFixed(1)} µs CPU)`
    rows.push({
      figure: '1',
      measure: 'hot path: warm decision, Authorization header → allowed decision (median of batches)',
      result: `${us(hot.total.ns)} per op${share}`,
      target: '≤ 1 µs',
      met: hot.total.ns <= 1000,
    })
    const subscribers = hot.subscribers
    if (subscribers !== undefined) {
      rows.push({
        figure: '1',
        measure: 'hot path with subscribers to the tracing channels: a plain subscriber / none; OpenTelemetry instrumentation / none (median of rounds)',
        result:
          `${formatRatio(subscribers.plainRatio)}; ${formatRatio(subscribers.otelRatio)} (${us(subscribers.none.ns)}, ${us(subscribers.plain.ns)}, ${us(subscribers.otel.ns)} per op)` +
          (subscribers.published ? '' : '; nothing was published (the resolver does not publish yet)'),
        target: '',
        met: undefined,
      })
    }
  }
  if ((profile.otherFrameworks || frameworks !== undefined) && wanted('2')) await otherFrameworks(emulator, token ?? '')
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
  details['run'] = { profile: profile.name, node: process.version, machine, pinned, loadBefore, loadAfter, steal, minutes, date: new Date(started).toISOString(), medianBareRps: bareRps }
  writeFileSync(join(import.meta.dirname ?? '.', '..', 'results.json'), `${JSON.stringify(details, null, 2)}\n`)
  process.stdout.write(
    `\nvoot-guard benchmarks (${profile.name}), ${new Date(started).toISOString()}, Node ${process.version}, ${machine}, ` +
      `load average ${loadBefore.toFixed(2)} before (${loadAfter.toFixed(2)} after, with the 2 idle spinners), CPU steal ${Number.isNaN(steal) ? 'n/a' : `${(100 * steal).toFixed(0)} %`}, ${minutes.toFixed(1)} min\n\n${renderTable(rows)}\n`,
  )
}

try {
  await main()
} finally {
  for (const child of [...children]) await child.stop()
}
