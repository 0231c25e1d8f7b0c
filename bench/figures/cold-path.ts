/**
 * Figure 4: a new token on every request (the cold path) against the bare route; and the
 * bare route's throughput on its own, for figure 6 when figure 2 did not run.
 *
 * @module
 */
import { LOAD_CPU } from '../cpus.js'
import { LOAD, type Profile } from '../profile.js'
import { checkFailures, details, progress, rows, rps, start, startServer, stop } from '../run-context.js'
import type { EmulatorReady } from '../servers/emulator.js'
import { formatRatio } from '../stats.js'
import { interleavedRounds, type LoadedRoute, medianCpu, medianRps, ratioOf } from '../suites/throughput.js'

/** Runs figure 4 with an emulator of its own and adds its row. */
export async function coldPath(cold: NonNullable<Profile['cold']>): Promise<void> {
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
    measure: "cold path (new token per request; emulator 0 ms, on the load generator's CPU): guarded / bare",
    result:
      `${formatRatio(ratio.median)} (worst ${formatRatio(ratio.worst)}); ${rps(medianRps(results, 'voot-guard cold'))} vs ${rps(medianRps(results, 'bare'))}; ` +
      `server CPU ${medianCpu(results, 'voot-guard cold').toFixed(0)} vs ${medianCpu(results, 'bare').toFixed(0)} µs/request; ${stats.upstreamCalls} upstream calls for ${requests} requests`,
    target: '',
    met: undefined,
  })
}

/** The bare Express 5 route's throughput, when figure 6 runs without figure 2. */
export async function bareMaximum(): Promise<number> {
  const emulator = await start<EmulatorReady>('./servers/emulator.js', ['0'], LOAD_CPU)
  const server = await startServer({ framework: 'express5', baseUrl: emulator.ready.baseUrl })
  const results = await interleavedRounds(
    server,
    [{ name: 'bare', path: '/bare' }],
    { rounds: 3, duration: 1, warmup: 1, ...LOAD },
    progress,
  )
  await stop(server, emulator)
  return medianRps(results, 'bare')
}
