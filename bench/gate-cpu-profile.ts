/**
 * `npm run bench:gate -- --cpu-prof`: where the gate's check spends its CPU. The gate's
 * benchmark child runs under `node --cpu-prof`; its `auth-request` endpoint (warm token)
 * and the floor beside it in the same process are loaded in turn, as in the check row of
 * `gate-main.ts`, and the samples of each window are broken down per request by kind of
 * code and by function (see `cpu-profile-analysis.ts`).
 *
 * Usage: `npm run bench:gate -- --cpu-prof [--seconds 8] [--interval 100] [--pipelining 8]`.
 *
 * @module
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startChild } from './child.js'
import { breakDown, type ProfileBreakdown } from './cpu-profile-analysis.js'
import { closedLoop } from './load.js'
import type { EmulatorReady } from './servers/emulator.js'
import type { GateBenchReady } from './servers/gate.js'

function option(name: string, fallback: number): number {
  const index = process.argv.indexOf(`--${name}`)
  const value = index === -1 ? fallback : Number(process.argv[index + 1])
  if (!(Number.isFinite(value) && value > 0)) throw new Error(`--${name} needs a positive number`)
  return value
}
const seconds = option('seconds', 8)
const interval = option('interval', 100)
// `--pipelining 8` (with 50 connections): saturated, as the check row's second measurement.
const pipelining = option('pipelining', 1)
const connections = pipelining > 1 ? 50 : 32

const directory = mkdtempSync(join(tmpdir(), 'voot-gate-cpu-profile-'))
const emulator = await startChild<EmulatorReady>('./servers/emulator.js', { args: ['0'] })
const server = await startChild<GateBenchReady>('./servers/gate.js', {
  args: [JSON.stringify({ baseUrl: emulator.ready.baseUrl })],
  nodeOptions: ['--cpu-prof', `--cpu-prof-dir=${directory}`, `--cpu-prof-interval=${interval}`],
})
const [token = ''] = await emulator.call<string[]>('issue', { user: 'alice', count: 1 })
const headers = { 'x-original-url': 'https://app.example.org/admin/reports', 'x-original-method': 'GET', authorization: `Bearer ${token}` }
const targets = [
  { name: 'node:http floor', port: server.ready.floorPort, path: '/' },
  { name: 'gate auth-request', port: server.ready.gatePort, path: '/_gate/auth-request' },
]
const windows: Array<{ name: string; fromUs: number; toUs: number; requests: number }> = []
try {
  for (const target of targets) {
    const load = (duration: number) =>
      closedLoop({ port: target.port, path: target.path, headers, duration, connections, pipelining }, server)
    await load(2) // warm: the cache, the JIT
    const before = await server.cpu()
    const result = await load(seconds)
    const after = await server.cpu()
    if (result.failures > 0) throw new Error(`${target.name}: ${result.failures} failed requests`)
    windows.push({ name: target.name, fromUs: Number(before.wallNs / 1000n), toUs: Number(after.wallNs / 1000n), requests: result.total })
  }
  await server.stop() // the profile is written as the child exits
  const file = readdirSync(directory).find((name) => name.endsWith('.cpuprofile'))
  if (file === undefined) throw new Error('no profile written')
  const breakdowns = new Map<string, ProfileBreakdown>(
    windows.map((window) => [window.name, breakDown(join(directory, file), window, window.requests)]),
  )
  const cell = (us: number | undefined): string => (us ?? 0).toFixed(2).padStart(10)
  const floor = breakdowns.get('node:http floor')
  const gate = breakdowns.get('gate auth-request')
  const kinds = [...new Set([...breakdowns.values()].flatMap((breakdown) => breakdown.kinds.map(([kind]) => kind)))]
  const kindUs = (breakdown: ProfileBreakdown | undefined, kind: string) => breakdown?.kinds.find(([k]) => k === kind)?.[1] ?? 0
  console.log(`CPU µs per request, sampled every ${interval} µs over ${seconds} s (the profiler's overhead included alike)\n`)
  console.log(`${'kind of code'.padEnd(44)}${'floor'.padStart(10)}${'gate'.padStart(10)}${'gate − floor'.padStart(14)}`)
  console.log(
    `${'all sampled CPU'.padEnd(44)}${cell(floor?.busyUs)}${cell(gate?.busyUs)}${cell((gate?.busyUs ?? 0) - (floor?.busyUs ?? 0))}`,
  )
  for (const kind of kinds)
    console.log(
      `${kind.slice(0, 43).padEnd(44)}${cell(kindUs(floor, kind))}${cell(kindUs(gate, kind))}${cell(kindUs(gate, kind) - kindUs(floor, kind))}`,
    )
  for (const [name, breakdown] of breakdowns) {
    console.log(`\n${name}: functions by self time (µs per request)`)
    for (const [frame, us] of breakdown.top) console.log(`${cell(us)}  ${frame}`)
  }
  console.log("\nthe gate: voot-guard's functions by self time (µs per request)")
  for (const [name, us] of gate?.vootGuard ?? []) console.log(`${cell(us)}  ${name}`)
} finally {
  await server.stop()
  await emulator.stop()
  rmSync(directory, { recursive: true, force: true })
}
