/**
 * Smoke test of examples/otel-prometheus: the app against the emulator, its metrics
 * scraped in Prometheus' text format.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { request } from 'undici'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startEmulator, type Emulator } from 'voot-guard/testing'
import { createObservedApp, type ObservedApp } from '../../examples/otel-prometheus/app.js'

let emulator: Emulator
let observed: ObservedApp
let app: Server
let metrics: Server
const urlOf = (server: Server, path: string): string => `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`

beforeAll(async () => {
  emulator = await startEmulator()
  observed = createObservedApp(emulator.baseUrl)
  app = createServer(observed.app)
  metrics = createServer(observed.metrics)
  await Promise.all([app, metrics].map((server) => new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))))
})
afterAll(async () => {
  for (const server of [app, metrics]) {
    server.closeAllConnections()
    server.close()
  }
  await observed.shutdown()
  await emulator.close()
})

async function status(token: string): Promise<number> {
  const response = await request(urlOf(app, '/api/staff'), { headers: { authorization: `Bearer ${token}` } })
  await response.body.dump()
  return response.statusCode
}

describe('examples/otel-prometheus', () => {
  it('counts decisions, lookups and upstream calls in the scraped metrics', async () => {
    const alice = emulator.issueToken('alice')
    expect(await status(alice)).toBe(200)
    expect(await status(emulator.issueToken('bob'))).toBe(403)
    const failing = emulator.issueToken('alice')
    const fault = emulator.faults.add({ kind: 'status', status: 500 }, { token: failing })
    expect(await status(failing)).toBe(503)
    emulator.faults.remove(fault)
    expect(await status(alice)).toBe(200)

    const scraped = await request(urlOf(metrics, '/metrics'))
    expect(scraped.headers['content-type']).toMatch(/^text\/plain/)
    const text = await scraped.body.text()
    // Labels after ours: otel_scope_name and otel_scope_version.
    expect(text).toMatch(/^voot_guard_decisions_total\{voot_guard_outcome="allowed",voot_guard_reason="member",[^}]*\} 2$/m)
    expect(text).toMatch(/^voot_guard_decisions_total\{voot_guard_outcome="denied",voot_guard_reason="[a-z_]+",[^}]*\} 1$/m)
    expect(text).toMatch(/^voot_guard_decisions_total\{voot_guard_outcome="error",voot_guard_reason="ERR_UPSTREAM_STATUS",[^}]*\} 1$/m)
    expect(text).toMatch(/^voot_guard_cache_lookups_total\{voot_guard_cache_tier="l1",voot_guard_cache_result="hit",[^}]*\} [1-9]\d*$/m)
    expect(text).toMatch(/^voot_guard_upstream_duration_count\{[^}]*http_response_status_code="500"[^}]*\} [1-9]\d*$/m)
    expect(text).toMatch(/^voot_guard_circuit_state\{[^}]*\} 0$/m)
    expect(text).not.toContain(alice)
  })
})
