/**
 * The gate's figure (`npm run bench:gate`, compiled by `bench/gate.ts`).
 *
 * 1. The check: requests per second of the gate's `auth-request` endpoint on a warm
 *    token, against a `node:http` server in the same process that answers 200 doing
 *    nothing (the floor; goal: at least 0.85 of it). Rounds alternate; medians. Then the
 *    server CPU per request of both under a saturating load, where the closed loop's
 *    wake-ups (paid in the server's socket writes) do not weigh on the slower side.
 * 2. The proxies, in front of the same app (the floor in a process of its own), with the
 *    same load generator and the same `Authorization` header: nginx alone, nginx + gate
 *    (examples/gate/nginx.conf), Apache alone, and Apache + mod_auth_openidc as an OAuth
 *    2.0 resource server (RFC 7662 introspection over https against a local endpoint, its
 *    shm cache warm, `Require claim`, `AuthzSendForbiddenOnFailure On`; see
 *    `gate-apache.ts`). And nginx asking the floor instead of the gate: the price of the
 *    hop itself (a sub-request to a second process), which the gate's own cost is read
 *    against. Every round runs the five once (the order turning round by round);
 *    the server CPU of each process tree (front proxy, gate, app) is read from `/proc`.
 *    Goals (issue 42): the gate's path ahead in requests per second; the CPU it adds per
 *    request at most 1.5× what mod_auth_openidc adds.
 *
 * @module
 */
import { existsSync } from 'node:fs'
import { chmod, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startChild, type Child } from './child.js'
import { APACHE, AUTH_OPENIDC, startBenchApache } from './gate-apache.js'
import { NGINX, startBenchNginx } from './gate-nginx.js'
import {
  comparePaths,
  roundOrder,
  ROLES,
  summarisePath,
  type PathSummary,
  type ProxyRound,
  type Role,
  type RoleCpu,
} from './gate-proxies.js'
import { closedLoop } from './load.js'
import { SATURATING_LOAD } from './profile.js'
import { load1 } from './machine.js'
import { sampleTreesUs } from './proc-cpu.js'
import { expectStatus } from './run-context.js'
import { makeSelfSigned } from './self-signed.js'
import type { AppReady } from './servers/app.js'
import type { EmulatorReady } from './servers/emulator.js'
import type { GateBenchReady } from './servers/gate.js'
import type { IntrospectionOptions, IntrospectionReady } from './servers/introspection.js'
import { median } from './stats.js'

const quick = process.argv.includes('--quick')
const ROUNDS = quick ? 2 : 3
const DURATION = quick ? 3 : 8
const CONNECTIONS = 32

// Nothing is pinned: Apache's and nginx's processes are not, and the gate's path and the
// module's must meet the same scheduler.
const emulator = await startChild<EmulatorReady>('./servers/emulator.js', { args: ['0'] })
const server = await startChild<GateBenchReady>('./servers/gate.js', { args: [JSON.stringify({ baseUrl: emulator.ready.baseUrl })] })
const [token = '', outsiderToken = ''] = [
  ...(await emulator.call<string[]>('issue', { user: 'alice', count: 1 })),
  ...(await emulator.call<string[]>('issue', { user: 'bob', count: 1 })),
]
const checkHeaders = {
  'x-original-url': 'https://app.example.org/admin/reports',
  'x-original-method': 'GET',
  authorization: `Bearer ${token}`,
}

interface Round {
  readonly rps: number
  readonly failures: number
  /** Server CPU per request, µs. */
  readonly cpuUs: number
}

/** One request at a time per connection, as proxies send them. */
const ONE_AT_A_TIME = { duration: DURATION, connections: CONNECTIONS, pipelining: 1 }
/** The server never waits for the next request (see `SATURATING_LOAD`): its CPU per request without the closed loop's wake-ups. */
const SATURATED = { duration: Math.min(DURATION, 4), ...SATURATING_LOAD }

type Load = typeof ONE_AT_A_TIME

async function rps(
  target: { port: number; path: string; load: Load },
  headers: Record<string, string>,
  child: Child<unknown>,
): Promise<Round> {
  const result = await closedLoop({ ...target, ...target.load, headers }, child)
  return { rps: result.rps, failures: result.failures, cpuUs: result.cpuUsPerRequest }
}

/** Rounds of `base` and `measured` in turn (after one of each to warm): the medians of each. */
async function alternate(base: () => Promise<Round>, measured: () => Promise<Round>): Promise<{ bases: Round[]; measures: Round[] }> {
  await base()
  await measured()
  const bases: Round[] = []
  const measures: Round[] = []
  for (let round = 0; round < ROUNDS; round++) {
    bases.push(await base())
    measures.push(await measured())
  }
  return { bases, measures }
}

const medianOf = (rounds: readonly Round[], key: 'rps' | 'cpuUs'): number => median(rounds.map((round) => round[key]))
const failuresOf = (rounds: readonly Round[]): number => rounds.reduce((sum, round) => sum + round.failures, 0)

/** The check row: the gate's endpoint against the floor, one request at a time per connection, then saturated. */
async function checkRow(label: string, floor: { port: number; path: string }, gate: { port: number; path: string }): Promise<void> {
  const loaded = (target: { port: number; path: string }, load: Load) => () => rps({ ...target, load }, checkHeaders, server)
  const open = await alternate(loaded(floor, ONE_AT_A_TIME), loaded(gate, ONE_AT_A_TIME))
  const saturated = await alternate(loaded(floor, SATURATED), loaded(gate, SATURATED))
  const failures = failuresOf([...open.bases, ...open.measures, ...saturated.bases, ...saturated.measures])
  const gateRps = medianOf(open.measures, 'rps')
  const floorRps = medianOf(open.bases, 'rps')
  const cpu = (rounds: { bases: Round[]; measures: Round[] }) => {
    const [gateCpu, floorCpu] = [medianOf(rounds.measures, 'cpuUs'), medianOf(rounds.bases, 'cpuUs')]
    return `${gateCpu.toFixed(1)} vs ${floorCpu.toFixed(1)} µs (floor / gate ${(floorCpu / gateCpu).toFixed(2)})`
  }
  console.log(
    `${label}: ${gateRps.toFixed(0)} vs ${floorRps.toFixed(0)} req/s, ratio ${(gateRps / floorRps).toFixed(2)} (goal: at least 0.85)` +
      (failures > 0 ? `  (${failures} failed requests!)` : ''),
  )
  console.log(
    `  server CPU per request: ${cpu(open)}; saturated (${SATURATING_LOAD.connections} × ${SATURATING_LOAD.pipelining} pipelined): ${cpu(saturated)}`,
  )
}

console.log(
  `voot-guard gate benchmark: ${ROUNDS} rounds of ${DURATION} s, ${CONNECTIONS} connections, medians (load ${load1().toFixed(1)})\n`,
)
const { floorPort, gatePort } = server.ready
// The floor gets the same request as the gate (the same three headers to parse): the figure
// is what the gate's check costs, not what reading a longer request costs (about 1 µs here).
await checkRow(
  'gate auth-request (warm) / node:http floor',
  { port: floorPort, path: '/' },
  { port: gatePort, path: '/_gate/auth-request' },
)

/** A front proxy's configuration: where to send the load, and which processes are which role. */
interface Configuration {
  readonly name: string
  readonly port: number
  readonly pids: Readonly<Record<Role, readonly number[]>>
}

async function measureConfiguration(configuration: Configuration, headers: Record<string, string>): Promise<ProxyRound> {
  const before = sampleTreesUs(configuration.pids)
  const result = await closedLoop({
    port: configuration.port,
    path: '/admin/reports',
    headers,
    duration: DURATION,
    connections: CONNECTIONS,
    pipelining: 1,
  })
  const after = sampleTreesUs(configuration.pids)
  const us = {} as Record<Role, number>
  for (const role of ROLES) us[role] = (after[role] - before[role]) / Math.max(1, result.total)
  return { rps: result.rps, failures: result.failures, us }
}

const cpuText = (cpu: RoleCpu): string => ROLES.map((role) => cpu[role].toFixed(1).padStart(6)).join('') + cpu.total.toFixed(1).padStart(7)

function printPath(label: string, summary: PathSummary, aloneLabel: string): void {
  const line = (name: string, rps: number, ratio: string, cpu: RoleCpu): string =>
    `${name.padEnd(28)}${rps.toFixed(0).padStart(8)}${ratio.padStart(7)}${cpuText(cpu)}`
  console.log(line(aloneLabel, summary.aloneRps, '1.00', summary.aloneCpu))
  console.log(line(label, summary.rps, summary.rpsRatio.toFixed(2), summary.cpu))
  console.log(
    `${'  added by the auth step'.padEnd(43)}${cpuText(summary.added)}${summary.failures > 0 ? `  (${summary.failures} failed requests!)` : ''}`,
  )
}

const apacheReady = existsSync(APACHE) && existsSync(AUTH_OPENIDC)
if (!existsSync(NGINX) || !apacheReady) {
  const missing = [existsSync(NGINX) ? '' : NGINX, apacheReady ? '' : `${APACHE} with ${AUTH_OPENIDC}`].filter((name) => name !== '')
  console.log(`\nthe proxies: skipped (${missing.join(', ')} not installed; see BENCHMARKS.md, "The gate against mod_auth_openidc")`)
} else {
  const certDir = await mkdtemp(join(tmpdir(), 'voot-gate-bench-tls-'))
  // Apache's children (www-data when started as root) read the certificate as their CA bundle.
  await chmod(certDir, 0o755)
  const app = await startChild<AppReady>('./servers/app.js')
  const { certFile, keyFile } = makeSelfSigned(certDir)
  // The gate's rule asks for `group(ORG_ID, 'admin')`; the module's `Require claim`, for that group in the token's claims.
  const claims = { claim: 'groups', value: 'fc:org:example.org:admin' }
  const options: IntrospectionOptions = { token, certFile, keyFile, ...claims }
  const introspection = await startChild<IntrospectionReady>('./servers/introspection.js', { args: [JSON.stringify(options)] })
  const appPort = app.ready.port
  const nginxAlone = await startBenchNginx(appPort, undefined)
  const nginxGate = await startBenchNginx(appPort, gatePort)
  // The hop alone: the same nginx asking the floor (an empty 200, in the gate's process) instead of the gate.
  const nginxHop = await startBenchNginx(appPort, floorPort)
  const apacheAlone = await startBenchApache(appPort, undefined)
  const requireClaim = `${claims.claim}:${claims.value}`
  const apacheModule = await startBenchApache(appPort, { introspectionUrl: introspection.ready.url, caFile: certFile, requireClaim })
  try {
    const none: readonly number[] = []
    const configurations: Configuration[] = [
      { name: 'nginx alone', port: nginxAlone.port, pids: { proxy: [nginxAlone.pid], gate: none, app: [app.pid] } },
      { name: 'nginx + gate', port: nginxGate.port, pids: { proxy: [nginxGate.pid], gate: [server.pid], app: [app.pid] } },
      { name: 'nginx + no-op auth', port: nginxHop.port, pids: { proxy: [nginxHop.pid], gate: [server.pid], app: [app.pid] } },
      { name: 'apache alone', port: apacheAlone.port, pids: { proxy: [apacheAlone.pid], gate: none, app: [app.pid] } },
      { name: 'apache + mod_auth_openidc', port: apacheModule.port, pids: { proxy: [apacheModule.pid], gate: none, app: [app.pid] } },
    ]
    // Each auth path answers as it should before it is measured: 200 for alice (an admin of
    // the org), 403 for bob, 401 without a token (the answer to this also warms the caches).
    for (const [port, outsider] of [
      [nginxGate.port, outsiderToken],
      [apacheModule.port, `${token}-outsider`],
    ] as const) {
      await expectStatus(port, '/admin/reports', token, 200)
      await expectStatus(port, '/admin/reports', outsider, 403)
      await expectStatus(port, '/admin/reports', 'not-a-token', 401)
    }
    const headers = { authorization: `Bearer ${token}` }
    // Warm: connections, JIT, the answers cached by the gate and by mod_auth_openidc.
    for (const configuration of configurations) await measureConfiguration(configuration, headers)
    const upstreamBefore = { emulator: await emulator.call<number>('count'), introspection: await introspection.call<number>('count') }
    const rounds = new Map<string, ProxyRound[]>(configurations.map((configuration) => [configuration.name, []]))
    for (let round = 0; round < ROUNDS; round++) {
      for (const configuration of roundOrder(configurations, round))
        rounds.get(configuration.name)?.push(await measureConfiguration(configuration, headers))
    }
    const upstreamCalls = {
      emulator: (await emulator.call<number>('count')) - upstreamBefore.emulator,
      introspection: (await introspection.call<number>('count')) - upstreamBefore.introspection,
    }
    const of = (name: string): ProxyRound[] => rounds.get(name) ?? []
    const gatePath = summarisePath(of('nginx alone'), of('nginx + gate'))
    const modulePath = summarisePath(of('apache alone'), of('apache + mod_auth_openidc'))
    const hop = summarisePath(of('nginx alone'), of('nginx + no-op auth'))
    // What the gate adds over the hop, round by round.
    const gateOwn = summarisePath(of('nginx + no-op auth'), of('nginx + gate'))
    console.log(`\nthe proxies, in front of the same app (the floor, a process of its own); server CPU per request, µs, from /proc:`)
    console.log(
      `${'configuration'.padEnd(28)}${'req/s'.padStart(8)}${'ratio'.padStart(7)}${ROLES.map((role) => role.padStart(6)).join('')}${'total'.padStart(7)}`,
    )
    printPath('nginx + gate', gatePath, 'nginx alone')
    printPath('apache + mod_auth_openidc', modulePath, 'apache alone')
    printPath('nginx + no-op auth (the hop)', hop, 'nginx alone')
    const comparison = comparePaths(gatePath, modulePath)
    console.log(
      `\nnginx + gate / apache + mod_auth_openidc: ${comparison.rps.toFixed(2)}× the requests per second (goal: above 1), ` +
        `${comparison.addedCpu.toFixed(2)}× the CPU the auth step adds (goal: at most 1.5; ${gatePath.added.total.toFixed(1)} vs ${modulePath.added.total.toFixed(1)} µs)`,
    )
    console.log(
      `of the gate path's ${gatePath.added.total.toFixed(1)} µs, the hop (auth_request to a node:http server answering an empty 200) ` +
        `is ${hop.added.total.toFixed(1)} µs, the gate's own check ${gateOwn.added.total.toFixed(1)} µs ` +
        `(${(gateOwn.added.total / modulePath.added.total).toFixed(2)}× what the module adds)`,
    )
    console.log(
      `upstream calls while measured (warm caches: few or none): group service ${upstreamCalls.emulator}, introspection ${upstreamCalls.introspection}`,
    )
  } finally {
    for (const proxy of [nginxAlone, nginxGate, nginxHop, apacheAlone, apacheModule]) await proxy.stop()
    await introspection.stop()
    await app.stop()
    await rm(certDir, { recursive: true, force: true })
  }
}

await server.stop()
await emulator.stop()
