/**
 * Figures 2 and 3: warm-cache throughput of the guarded route against the bare route and a
 * no-op middleware (Express 5 with the JWT peers, then the other frameworks), and the
 * guard's own time timed inside each server.
 *
 * @module
 */
import type { Child } from '../child.js'
import { profile, wantedFramework } from '../profile.js'
import { checkFailures, details, expectStatus, progress, rows, rps, startServer, stop } from '../run-context.js'
import type { ServerReady } from '../servers/config.js'
import type { EmulatorReady } from '../servers/emulator.js'
import type { TimingSummary } from '../servers/timings.js'
import { formatRatio } from '../stats.js'
import { BURN_CONTROL, guardCpu, guardCpuRow } from '../suites/server-cpu.js'
import { interleavedRounds, type LoadedRoute, medianBusy, medianCpu, medianRps, ratioOf, type RoundResults } from '../suites/throughput.js'
import { stageName, WARM_STAGES, warmStages, warmStagesRow } from '../suites/warm-stages.js'
import type { Row } from '../table.js'

/** The range of a route's throughput over the rounds: how noisy the machine was. */
function spread(results: RoundResults, name: string): string {
  const values = (results.get(name) ?? []).map((result) => result.rps)
  return `${Math.round(Math.min(...values)).toLocaleString('en-US')}–${Math.round(Math.max(...values)).toLocaleString('en-US')}/s`
}

function pairRows(label: string, results: RoundResults, target: number): Row[] {
  const noop = ratioOf(results, 'no-op middleware', 'bare')
  const ownShare = ratioOf(results, 'voot-guard', 'no-op middleware')
  return [
    pairRow(label, results, target),
    {
      figure: '2',
      measure: `${label}: a no-op middleware / bare (what any middleware costs); guarded / no-op`,
      result: `${formatRatio(noop.median)} (worst ${formatRatio(noop.worst)}); ${formatRatio(ownShare.median)} (worst ${formatRatio(ownShare.worst)})`,
      target: '',
      met: undefined,
    },
  ]
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

/**
 * The guard's server CPU: the bare, guarded, no-op and burn routes again under a saturating
 * load (see `SATURATING_LOAD` in profile.ts), interleaved as the throughput rounds are.
 */
async function saturatedRounds(server: Child<ServerReady>, routes: readonly LoadedRoute[]): Promise<RoundResults> {
  progress(
    `  server CPU under a saturating load (${profile.cpu.pipelining} pipelined requests per connection, ${profile.cpu.rounds} rounds of ${profile.cpu.duration} s per route)`,
  )
  const results = await interleavedRounds(server, routes, profile.cpu, progress)
  checkFailures(results)
  return results
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

/** Figure 2's row on `req.voot`: the accessor on Express's request prototype against a plain own property, in one server. */
function accessorRow(timed: Record<string, TimingSummary>): Row {
  const p50 = (name: string): number => timed[name]?.p50 ?? Number.NaN
  const noop = p50('no-op middleware')
  const readNoop = p50('no-op + handler read')
  return {
    figure: '2',
    measure:
      "Express 5: req.voot through the adapter's accessor / as an own property, the guard alone; the guard and a handler that reads req.voot (p50 minus the no-op's)",
    result:
      `${(p50('voot-guard') - noop).toFixed(1)} / ${(p50('voot-guard, own property') - noop).toFixed(1)} µs; ` +
      `${(p50('guard + handler read, accessor') - readNoop).toFixed(1)} / ${(p50('guard + handler read, own property') - readNoop).toFixed(1)} µs`,
    target: '',
    met: undefined,
  }
}

/** Figure 3's row of voot-guard against the fastest peer of one algorithm, with the goal when there is one. */
function againstPeer(withPeers: RoundResults, algorithm: 'RS256' | 'HS256', peer: string, target: number | undefined): Row {
  const vs = ratioOf(withPeers, 'voot-guard', peer)
  return {
    figure: '3',
    measure: `voot-guard / fastest ${algorithm} peer (${peer})`,
    result: `${formatRatio(vs.median)} (worst round ${formatRatio(vs.worst)}; by CPU per request ${formatRatio(vs.cpuRatio)})`,
    target: target === undefined ? '' : `≥ ${target}`,
    met: target === undefined ? undefined : vs.median >= target,
  }
}

/** Runs figures 2 and 3 on Express 5 (with the JWT peers) and adds their rows; returns the pair rounds and the bare route's CPU per request. */
export async function warmThroughput(
  emulator: Child<EmulatorReady>,
  token: string,
  figure1Us?: number,
): Promise<{ pair: RoundResults; bareCpuUs: number }> {
  progress(
    `2./3. warm cache, Express 5 (bare and guarded alternating, ${profile.pair.rounds} rounds of ${profile.pair.duration} s per route)`,
  )
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
  const peerRoutes: LoadedRoute[] = peers.map((peer) => ({
    name: peer.label,
    path: peer.path,
    headers: { authorization: `Bearer ${server.ready.jwt?.[peer.algorithm] ?? ''}` },
  }))
  for (const peer of peers) await expectStatus(server.ready.port, peer.path, server.ready.jwt?.[peer.algorithm] ?? '', 200)

  const burnRoute: LoadedRoute = { name: BURN_CONTROL, path: '/burn', headers: auth }
  const pair = await interleavedRounds(
    server,
    profile.peerRounds === undefined ? [...pairRoutes, burnRoute, ...peerRoutes] : [...pairRoutes, burnRoute],
    profile.pair,
    progress,
  )
  checkFailures(pair)
  let withPeers = pair
  if (profile.peerRounds !== undefined) {
    progress(`3. the JWT peers in the same app (${profile.peerRounds.rounds} rounds of ${profile.peerRounds.duration} s per route)`)
    withPeers = await interleavedRounds(server, [...pairRoutes.slice(0, 2), ...peerRoutes], profile.peerRounds, progress)
    checkFailures(withPeers)
  }
  // The peers are not timed this way: they hand on after an `await`, so their time to
  // `next()` includes waiting behind other requests, not only their own work.
  const accessorRoutes: LoadedRoute[] = [
    { name: 'voot-guard, own property', path: '/guarded-own', headers: auth },
    { name: 'guard + handler read, accessor', path: '/read/accessor', headers: auth },
    { name: 'guard + handler read, own property', path: '/read/own', headers: auth },
    { name: 'no-op + handler read', path: '/read/noop', headers: auth },
  ]
  const saturated = await saturatedRounds(server, [...pairRoutes, burnRoute])
  const timed = await timeInside(server, [...pairRoutes.slice(1).reverse(), ...accessorRoutes])
  const stats = await server.call<{ upstreamCalls: number }>('stats')
  const burnCost = await server.call<number>('burnCost')
  await stop(server)
  const cpu = guardCpu(saturated, burnCost, pair)
  const cpuOneAtATime = guardCpu(pair, burnCost)
  details['express5'] = {
    label: 'Express 5',
    cpu,
    cpuOneAtATime,
    saturated: Object.fromEntries(saturated),
    pair: Object.fromEntries(pair),
    withPeers: Object.fromEntries(withPeers),
    timed,
    upstreamCalls: stats.upstreamCalls,
  }
  rows.push(
    ...pairRows('Express 5', pair, 0.95),
    guardCpuRow('Express 5', cpuOneAtATime, figure1Us, false, 'one at a time'),
    guardCpuRow('Express 5', cpu, figure1Us, false, 'saturating'),
    ownTimeRow('Express 5', timed, medianCpu(pair, 'bare')),
    accessorRow(timed),
  )

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
    if (peer.algorithm === 'RS256' && (fastestRs256 === undefined || peerRps > fastestRs256.rps))
      fastestRs256 = { name: peer.label, rps: peerRps }
    if (peer.algorithm === 'HS256' && (fastestHs256 === undefined || peerRps > fastestHs256.rps))
      fastestHs256 = { name: peer.label, rps: peerRps }
  }
  if (fastestRs256 !== undefined) rows.push(againstPeer(withPeers, 'RS256', fastestRs256.name, 2))
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
  if (fastestHs256 !== undefined) rows.push(againstPeer(withPeers, 'HS256', fastestHs256.name, undefined))
  return { pair, bareCpuUs: medianCpu(pair, 'bare') }
}

/** Runs figure 2 on the other frameworks chosen (`--frameworks`, or all in the full profile) and adds their rows. */
export async function otherFrameworks(emulator: Child<EmulatorReady>, token: string, figure1Us?: number): Promise<void> {
  for (const [framework, label, target] of [
    ['express4', 'Express 4', 0.93],
    ['koa3', 'Koa 3', 0.92],
    ['fastify', 'Fastify 5', 0.95],
    ['hono', 'Hono 4 (node server)', 0.95],
    ['nest-express', 'Nest 12 (Express platform)', 0.97],
    // The control for Express: its adapter's middleware from a plain node:http handler.
    ['node-http', "node:http, no framework (the Express adapter's middleware)", 0.95],
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
    const withBurn = [...routes, { name: BURN_CONTROL, path: '/burn', headers: auth }]
    const results = await interleavedRounds(server, withBurn, profile.pair, progress)
    checkFailures(results)
    const saturated = await saturatedRounds(server, withBurn)
    // Fastify's server also has the warm path cut step by step (see suites/warm-stages.ts).
    const stageRoutes: LoadedRoute[] =
      framework === 'fastify' ? WARM_STAGES.map((stage) => ({ name: stageName(stage), path: `/stage/${stage}`, headers: auth })) : []
    const timed = await timeInside(server, [...routes.slice(1), ...stageRoutes])
    const burnCost = await server.call<number>('burnCost')
    await stop(server)
    const cpu = guardCpu(saturated, burnCost, results)
    const cpuOneAtATime = guardCpu(results, burnCost)
    const stages = stageRoutes.length === 0 ? undefined : warmStages(timed)
    details[framework] = {
      label,
      cpu,
      cpuOneAtATime,
      pair: Object.fromEntries(results),
      saturated: Object.fromEntries(saturated),
      timed,
      stages,
    }
    // Issue 33 asks Fastify's guard to stay within 1.5× figure 1; the others report it.
    const factorGoal = framework === 'fastify'
    rows.push(
      ...pairRows(label, results, target),
      guardCpuRow(label, cpuOneAtATime, figure1Us, factorGoal, 'one at a time'),
      guardCpuRow(label, cpu, figure1Us, factorGoal, 'saturating'),
      ownTimeRow(label, timed, medianCpu(results, 'bare')),
      ...(stages === undefined ? [] : [warmStagesRow(label, stages, figure1Us)]),
    )
  }
}
