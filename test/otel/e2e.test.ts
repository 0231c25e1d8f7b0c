/**
 * voot-guard/otel end to end: a real resolver (inside an Express app guarded by
 * voot-guard/express) against the emulator, its upstream calls traced by
 * @opentelemetry/instrumentation-undici, everything exported to the SDK's in-memory
 * exporters.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { context, SpanStatusCode, trace, type Tracer } from '@opentelemetry/api'
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base'
import express from 'express'
import { request } from 'undici'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { createGuard } from 'voot-guard/express'
import { AUTHORIZE_SPAN, instrumentVootGuard, RESOLVE_SPAN, type VootGuardInstrumentation } from 'voot-guard/otel'
import { ORG_ID, startEmulator, type Emulator } from 'voot-guard/testing'
import { pointsOf, startOtelHarness, type OtelHarness } from '../support/otel-harness.js'

let emulator: Emulator
let server: Server
let url: string
let aliceGroups: string[]
beforeAll(async () => {
  emulator = await startEmulator()
  // Alice's own groups, read before any instrumentation: none but the required one may show.
  const listed = await request(`${emulator.baseUrl}/me/groups`, { headers: { authorization: `Bearer ${emulator.issueToken('alice')}` } })
  aliceGroups = ((await listed.body.json()) as { id: string }[]).map((group) => group.id).filter((id) => id !== ORG_ID)
  const guard = createGuard({ baseUrl: emulator.baseUrl, realm: 'otel-e2e' })
  const app = express()
  // What an HTTP server instrumentation does: a span per request, active while it is handled.
  app.use((req, res, next) => {
    if (requestTracer === undefined) return void next()
    const span = requestTracer.startSpan(`GET ${req.path}`)
    res.on('finish', () => span.end())
    context.with(trace.setSpan(context.active(), span), next)
  })
  app.get('/api/staff', guard.requireGroup(ORG_ID, 'admin'), (_req, res) => void res.json({ ok: true }))
  app.get('/api/two-guards', guard.authenticate(), guard.requireGroup(ORG_ID, 'admin'), (_req, res) => void res.json({ ok: true }))
  server = createServer(app)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/staff`
})
afterAll(async () => {
  server.closeAllConnections()
  server.close()
  await emulator.close()
})

let harness: OtelHarness
let instrumentation: VootGuardInstrumentation
let requestTracer: Tracer | undefined
beforeEach(() => {
  harness = startOtelHarness()
  instrumentation = instrumentVootGuard({ tracerProvider: harness.tracerProvider, meterProvider: harness.meterProvider })
  requestTracer = harness.tracerProvider.getTracer('otel-e2e-server')
})
afterEach(async () => {
  requestTracer = undefined
  instrumentation.disable()
  await harness.shutdown()
})

async function get(token: string, path = '/api/staff'): Promise<number> {
  const response = await request(new URL(path, url), { headers: { authorization: `Bearer ${token}` } })
  await response.body.dump()
  return response.statusCode
}

const named = (spans: ReadableSpan[], name: string): ReadableSpan[] => spans.filter((span) => span.name === name)
const parentOf = (span: ReadableSpan): string | undefined => span.parentSpanContext?.spanId
// undici's spans of calls to the group service (not those of this test's own requests to the app).
const upstreamHttp = (spans: ReadableSpan[]): ReadableSpan[] =>
  spans.filter((span) => String(span.attributes['url.full'] ?? '').startsWith(emulator.baseUrl))

describe('voot-guard/otel with a real resolver behind voot-guard/express', () => {
  it('spans: authorize > resolve > the HTTP call to the group service, then a warm decision', async () => {
    const token = emulator.issueToken('alice')
    expect(await get(token)).toBe(200)
    const cold = harness.spans()
    const [authorize] = named(cold, AUTHORIZE_SPAN)
    expect(authorize?.attributes).toMatchObject({ 'voot_guard.outcome': 'allowed', 'voot_guard.reason': 'member' })
    const resolves = named(cold, RESOLVE_SPAN)
    expect(resolves.length).toBeGreaterThanOrEqual(1)
    for (const resolve of resolves) expect(parentOf(resolve)).toBe(authorize!.spanContext().spanId)
    const http = upstreamHttp(cold)
    expect(http.length).toBeGreaterThanOrEqual(1)
    const resolveIds = new Set(resolves.map((span) => span.spanContext().spanId))
    for (const call of http) {
      expect(resolveIds.has(parentOf(call) ?? '')).toBe(true)
      expect(call.spanContext().traceId).toBe(authorize!.spanContext().traceId)
    }
    expect(resolves.find((span) => parentOf(http[0]!) === span.spanContext().spanId)?.attributes['voot_guard.cache.tier']).toBe('upstream')

    // The cold decision's request span carries none of the decision's attributes: the decision has its span.
    const [coldRequest] = named(cold, 'GET /api/staff')
    expect(parentOf(authorize!)).toBe(coldRequest!.spanContext().spanId)
    expect(Object.keys(coldRequest!.attributes).filter((key) => key.startsWith('voot_guard.'))).toEqual([])
    expect(coldRequest?.events).toEqual([])

    expect(await get(token)).toBe(200)
    const warm = harness.spans().slice(cold.length)
    expect(upstreamHttp(warm)).toEqual([])
    // A warm decision: no span of its own (nor of its lookup), no event, its attributes on the request's span.
    expect(named(warm, AUTHORIZE_SPAN)).toEqual([])
    expect(named(warm, RESOLVE_SPAN)).toEqual([])
    const [warmRequest] = named(warm, 'GET /api/staff')
    expect(warmRequest?.events).toEqual([])
    expect(warmRequest?.attributes).toMatchObject({
      'voot_guard.requirement': `group ${ORG_ID} (role admin or higher)`,
      'voot_guard.outcome': 'allowed',
      'voot_guard.reason': 'member',
      'voot_guard.cache.tier': 'l1',
    })
  })

  it('a warm denial puts its reason on the request span; of two warm decisions, the span keeps the last', async () => {
    const bob = emulator.issueToken('bob')
    expect(await get(bob)).toBe(403)
    expect(await get(bob)).toBe(403)
    const [, warmDenied] = named(harness.spans(), 'GET /api/staff')
    expect(warmDenied?.attributes).toMatchObject({
      'voot_guard.outcome': 'denied',
      'voot_guard.reason': 'role_too_low',
      'voot_guard.cache.tier': 'l1',
    })

    const alice = emulator.issueToken('alice')
    expect(await get(alice, '/api/two-guards')).toBe(200)
    const before = harness.spans().length
    expect(await get(alice, '/api/two-guards')).toBe(200)
    const [twoGuards] = named(harness.spans().slice(before), 'GET /api/two-guards')
    // The same requirement as bob's denial above, now allowed: the span shows this decision, not a kept one.
    expect(twoGuards?.attributes).toMatchObject({
      'voot_guard.requirement': `group ${ORG_ID} (role admin or higher)`,
      'voot_guard.outcome': 'allowed',
      'voot_guard.reason': 'member',
    })
    const collected = await harness.metrics()
    // Both guards of both requests were counted: the span's attributes are the last decision's, the metrics every one's.
    expect(
      pointsOf(collected, 'voot_guard.decisions', { 'voot_guard.outcome': 'allowed', 'voot_guard.reason': 'authenticated' })[0]?.value,
    ).toBe(2)
    expect(pointsOf(collected, 'voot_guard.decisions', { 'voot_guard.outcome': 'allowed', 'voot_guard.reason': 'member' })[0]?.value).toBe(
      2,
    )
  })

  it('a warm decision without an active span records its metrics only', async () => {
    const token = emulator.issueToken('alice')
    expect(await get(token)).toBe(200)
    requestTracer = undefined
    const before = harness.spans().length
    expect(await get(token)).toBe(200)
    expect(await get(token)).toBe(200)
    const ours = harness
      .spans()
      .slice(before)
      .filter((span) => span.name.startsWith('voot-guard '))
    expect(ours).toEqual([])
    const collected = await harness.metrics()
    expect(pointsOf(collected, 'voot_guard.decisions', { 'voot_guard.outcome': 'allowed', 'voot_guard.reason': 'member' })[0]?.value).toBe(
      3,
    )
    expect(
      pointsOf(collected, 'voot_guard.cache.lookups', { 'voot_guard.cache.tier': 'l1', 'voot_guard.cache.result': 'hit' })[0]?.value,
    ).toBe(2)
  })

  it('a 503 is an ERROR span and an error decision; a 403 is a denial', async () => {
    const failing = emulator.issueToken('alice')
    const fault = emulator.faults.add({ kind: 'status', status: 500 }, { token: failing })
    expect(await get(failing)).toBe(503)
    emulator.faults.remove(fault)
    expect(await get(emulator.issueToken('bob'))).toBe(403)
    const [failed, denied] = named(harness.spans(), AUTHORIZE_SPAN)
    expect(failed?.status.code).toBe(SpanStatusCode.ERROR)
    expect(failed?.attributes).toMatchObject({
      'voot_guard.outcome': 'error',
      'voot_guard.reason': 'ERR_UPSTREAM_STATUS',
      'error.type': 'ERR_UPSTREAM_STATUS',
    })
    expect(denied?.status.code).toBe(SpanStatusCode.UNSET)
    expect(denied?.attributes['voot_guard.outcome']).toBe('denied')
    const collected = await harness.metrics()
    expect(
      pointsOf(collected, 'voot_guard.decisions', { 'voot_guard.outcome': 'error', 'voot_guard.reason': 'ERR_UPSTREAM_STATUS' })[0]?.value,
    ).toBe(1)
    expect(pointsOf(collected, 'voot_guard.decisions', { 'voot_guard.outcome': 'denied' })[0]?.value).toBeGreaterThanOrEqual(1)
    const failedCalls = pointsOf(collected, 'voot_guard.upstream.duration', { 'http.response.status_code': 500 })
    expect((failedCalls[0]?.value as { count: number } | undefined)?.count).toBeGreaterThanOrEqual(1)
  })

  it('metrics: decisions, lookups by tier, call durations, nothing left in flight', async () => {
    const token = emulator.issueToken('alice')
    expect(await get(token)).toBe(200)
    expect(await get(token)).toBe(200)
    const collected = await harness.metrics()
    expect(pointsOf(collected, 'voot_guard.decisions', { 'voot_guard.outcome': 'allowed', 'voot_guard.reason': 'member' })[0]?.value).toBe(
      2,
    )
    expect(
      pointsOf(collected, 'voot_guard.cache.lookups', { 'voot_guard.cache.tier': 'upstream', 'voot_guard.cache.result': 'miss' })[0]?.value,
    ).toBeGreaterThanOrEqual(1)
    expect(
      pointsOf(collected, 'voot_guard.cache.lookups', { 'voot_guard.cache.tier': 'l1', 'voot_guard.cache.result': 'hit' })[0]?.value,
    ).toBeGreaterThanOrEqual(1)
    const ok = pointsOf(collected, 'voot_guard.upstream.duration', { 'http.response.status_code': 200 })[0]?.value as
      { count: number; sum: number } | undefined
    expect(ok?.count).toBeGreaterThanOrEqual(1)
    for (const point of pointsOf(collected, 'voot_guard.upstream.active')) expect(point.value).toBe(0)
  })

  it('no token and none of the user groups in any span, attribute or metric', async () => {
    const tokens = [emulator.issueToken('alice'), emulator.issueToken('bob')]
    for (const token of tokens) await get(token)
    await get(tokens[0]!)
    const text = await harness.exportedText()
    expect(upstreamHttp(harness.spans()).length).toBeGreaterThanOrEqual(2)
    expect(aliceGroups.length).toBeGreaterThan(0)
    for (const secret of [...tokens, ...aliceGroups]) expect(text).not.toContain(secret)
  })
})
