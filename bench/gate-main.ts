/**
 * The gate's figure (`npm run bench:gate`, compiled by `bench/gate.ts`): requests per
 * second of the gate's `auth-request` endpoint on a warm token, against a `node:http`
 * server in the same process that answers 200 doing nothing (the floor; goal: at least
 * 0.85 of it); then nginx + gate against nginx alone, in front of that floor app.
 * Rounds alternate the two sides of each pair; the medians are compared.
 *
 * @module
 */
import { existsSync } from 'node:fs'
import { startChild } from './child.js'
import { closedLoop } from './load.js'
import { NGINX, startBenchNginx } from './gate-nginx.js'
import type { EmulatorReady } from './servers/emulator.js'
import type { GateBenchReady } from './servers/gate.js'

const quick = process.argv.includes('--quick')
const ROUNDS = quick ? 2 : 3
const DURATION = quick ? 3 : 8
const CONNECTIONS = 32

const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? (sorted[middle] as number) : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2
}

const emulator = await startChild<EmulatorReady>('./servers/emulator.js', { args: ['0'], cpu: 1 })
const server = await startChild<GateBenchReady>('./servers/gate.js', {
  args: [JSON.stringify({ baseUrl: emulator.ready.baseUrl })],
  cpu: 0,
})
const [token] = await emulator.call<string[]>('issue', { user: 'alice', count: 1 })
const checkHeaders = {
  'x-original-url': 'https://app.example.org/admin/reports',
  'x-original-method': 'GET',
  authorization: `Bearer ${token ?? ''}`,
}

interface Round {
  readonly rps: number
  readonly failures: number
  /** Server CPU per request, µs (NaN when the server is not a sampled child). */
  readonly cpuUs: number
}

async function rps(port: number, path: string, headers: Record<string, string>, child?: typeof server): Promise<Round> {
  const result = await closedLoop({ port, path, headers, duration: DURATION, connections: CONNECTIONS, pipelining: 1 }, child)
  return { rps: result.rps, failures: result.failures, cpuUs: result.cpuUsPerRequest }
}

async function pair(label: string, base: () => Promise<Round>, measured: () => Promise<Round>): Promise<void> {
  // Warm both (connections, JIT, the token's cached answer).
  await base()
  await measured()
  const bases: Round[] = []
  const measures: Round[] = []
  for (let round = 0; round < ROUNDS; round++) {
    bases.push(await base())
    measures.push(await measured())
  }
  const failures = [...bases, ...measures].reduce((sum, round) => sum + round.failures, 0)
  const measuredRps = median(measures.map((round) => round.rps))
  const baseRps = median(bases.map((round) => round.rps))
  const cpu = (rounds: Round[]) => median(rounds.map((round) => round.cpuUs))
  const cpuText = Number.isNaN(cpu(measures)) ? '' : `  server CPU ${cpu(measures).toFixed(1)} vs ${cpu(bases).toFixed(1)} µs/request`
  console.log(
    `${label.padEnd(44)} ${measuredRps.toFixed(0).padStart(8)} req/s vs ${baseRps.toFixed(0).padStart(8)} req/s  ratio ${(measuredRps / baseRps).toFixed(2)}${cpuText}` +
      (failures > 0 ? `  (${failures} failed requests!)` : ''),
  )
}

console.log(`voot-guard gate benchmark: ${ROUNDS} rounds of ${DURATION} s, ${CONNECTIONS} connections, medians\n`)
const { floorPort, gatePort } = server.ready
// The floor gets the same request as the gate (the same three headers to parse): the figure
// is what the gate's check costs, not what reading a longer request costs (about 1 µs here).
await pair(
  'gate auth-request (warm) / node:http floor',
  () => rps(floorPort, '/', checkHeaders, server),
  () => rps(gatePort, '/_gate/auth-request', checkHeaders, server),
)

if (existsSync(NGINX)) {
  const withGate = await startBenchNginx(floorPort, gatePort)
  const alone = await startBenchNginx(floorPort, undefined)
  try {
    const appHeaders = { authorization: checkHeaders.authorization }
    await pair(
      'nginx + gate / nginx alone (app: the floor)',
      () => rps(alone.port, '/admin/reports', appHeaders),
      () => rps(withGate.port, '/admin/reports', appHeaders),
    )
  } finally {
    await withGate.stop()
    await alone.stop()
  }
} else {
  console.log(`nginx + gate / nginx alone: skipped (${NGINX} is not installed)`)
}

await server.stop()
await emulator.stop()
