/**
 * `npm run bench:profile`: where a guarded Express 5 request's CPU time goes, against the
 * same route with a no-op middleware (and the bare route). Each route gets a server of its
 * own, under `node --cpu-prof`, loaded like figure 2 (50 connections, warm cache); the
 * profile's samples within the measured window are broken down per request by kind of
 * code (see `cpu-profile-analysis.ts`). The sampling interval (`--interval`, µs) trades
 * resolution for the profiler's own overhead, which every route pays alike.
 *
 * Usage: `npm run bench:profile -- [--seconds 15] [--rounds 2] [--interval 500] [--framework express5 | node-http | fastify] [--realtime]`;
 * `node-http` and `fastify` run the same guard in a plain Node server and in Fastify, as controls.
 *
 * @module
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { breakDown, type ProfileBreakdown } from './cpu-profile-analysis.js'
import { LOAD_CPU, pinSelf, raisePriority, SERVER_CPU } from './cpus.js'
import { closedLoop } from './load.js'
import { LOAD } from './profile.js'
import { children, progress, start, startIdleSpinners, stop } from './run-context.js'
import type { ServerConfig, ServerReady } from './servers/config.js'
import type { EmulatorReady } from './servers/emulator.js'
import { median } from './stats.js'

function option(name: string, fallback: number): number {
  const index = process.argv.indexOf(`--${name}`)
  const value = index === -1 ? fallback : Number(process.argv[index + 1])
  if (!(Number.isFinite(value) && value > 0)) throw new Error(`--${name} needs a positive number`)
  return value
}

// `--framework node-http` or `fastify`: the same routes in another server, as a control for Express's figures.
const frameworkIndex = process.argv.indexOf('--framework')
const framework = (frameworkIndex === -1 ? 'express5' : process.argv[frameworkIndex + 1]) as ServerConfig['framework']
const SCRIPTS: Partial<Record<ServerConfig['framework'], string>> = {
  express5: './servers/express.js',
  fastify: './servers/fastify.js',
  'node-http': './servers/node-http.js',
}
const chosen = SCRIPTS[framework]
if (chosen === undefined) throw new Error(`--framework must be one of ${Object.keys(SCRIPTS).join(', ')}`)
const script: string = chosen
const seconds = option('seconds', 15)
const rounds = option('rounds', 2)
const interval = option('interval', 500)
const ROUTES = [
  { name: 'bare', path: '/bare' },
  { name: 'no-op middleware', path: '/noop' },
  { name: 'voot-guard', path: '/guarded' },
] as const

pinSelf(LOAD_CPU)
raisePriority(process.pid)
await startIdleSpinners()
const emulator = await start<EmulatorReady>('./servers/emulator.js', ['0'], LOAD_CPU)
const [token] = await emulator.call<string[]>('issue', { user: 'alice', count: 1 })
const headers = { authorization: `Bearer ${token ?? ''}` }
const directory = mkdtempSync(join(tmpdir(), 'voot-guard-cpu-profile-'))

/** One route in a server of its own under the profiler: its breakdown over the measured window. */
async function profileRoute(route: (typeof ROUTES)[number], round: number): Promise<ProfileBreakdown> {
  const profileDir = join(directory, `${round}-${route.path.slice(1)}`)
  const server = await start<ServerReady>(script, [JSON.stringify({ framework, baseUrl: emulator.ready.baseUrl })], SERVER_CPU, {
    nodeOptions: ['--cpu-prof', `--cpu-prof-dir=${profileDir}`, `--cpu-prof-interval=${interval}`],
  })
  const load = (duration: number) => closedLoop({ port: server.ready.port, path: route.path, duration, headers, ...LOAD }, server)
  await load(2) // warm-up: the cache, the JIT
  const before = await server.cpu()
  const result = await load(seconds)
  const after = await server.cpu()
  await stop(server) // the profile is written as the server exits
  if (result.failures > 0) throw new Error(`${route.name}: ${result.failures} failed requests`)
  const file = readdirSync(profileDir).find((name) => name.endsWith('.cpuprofile'))
  if (file === undefined) throw new Error(`${route.name}: no profile written`)
  // The profile's clock is the server's process.hrtime, in µs.
  const window = { fromUs: Number(before.wallNs / 1000n), toUs: Number(after.wallNs / 1000n) }
  const breakdown = breakDown(join(profileDir, file), window, result.total)
  progress(`  round ${round + 1}, ${route.name}: ${Math.round(result.rps)}/s, ${breakdown.busyUs.toFixed(1)} µs sampled CPU per request`)
  return breakdown
}

progress(
  `CPU profiles of ${framework} routes on Node ${process.version}: ${rounds} round(s) of ${seconds} s per route, sampling every ${interval} µs`,
)
const results = new Map<string, ProfileBreakdown[]>(ROUTES.map((route) => [route.name, []]))
try {
  for (let round = 0; round < rounds; round++) {
    for (const route of round % 2 === 0 ? ROUTES : [...ROUTES].reverse()) results.get(route.name)?.push(await profileRoute(route, round))
  }
} finally {
  for (const child of [...children]) await child.stop()
  rmSync(directory, { recursive: true, force: true })
}

/** The median over rounds of one kind's µs per request. */
function kindUs(name: string, kind: string): number {
  return median((results.get(name) ?? []).map((breakdown) => breakdown.kinds.find(([k]) => k === kind)?.[1] ?? 0))
}
const kinds = [...new Set([...results.values()].flatMap((list) => list.flatMap((breakdown) => breakdown.kinds.map(([kind]) => kind))))]
kinds.sort((a, b) => kindUs('voot-guard', b) - kindUs('voot-guard', a))
const cell = (us: number): string => us.toFixed(1).padStart(8)
const lines = [
  `CPU µs per request (median of ${rounds} round(s) of ${seconds} s; sampled every ${interval} µs, so the profiler's overhead is included alike)`,
  '',
  `${'kind of code'.padEnd(44)}${'bare'.padStart(8)}${'no-op'.padStart(8)}${'guarded'.padStart(8)}${'g − n'.padStart(8)}`,
  `${'all sampled CPU'.padEnd(44)}${ROUTES.map((route) => cell(median((results.get(route.name) ?? []).map((b) => b.busyUs)))).join('')}${cell(
    median((results.get('voot-guard') ?? []).map((b) => b.busyUs)) - median((results.get('no-op middleware') ?? []).map((b) => b.busyUs)),
  )}`,
  ...kinds.map(
    (kind) =>
      `${kind.slice(0, 43).padEnd(44)}${ROUTES.map((route) => cell(kindUs(route.name, kind))).join('')}${cell(kindUs('voot-guard', kind) - kindUs('no-op middleware', kind))}`,
  ),
  '',
  'voot-guard functions by self time in the guarded route (last round, µs per request):',
  ...(results.get('voot-guard')?.at(-1)?.vootGuard ?? []).map(([name, us]) => `${cell(us)}  ${name}`),
]
console.log(lines.join('\n'))
process.exit(0)
