/**
 * voot-guard/otel against the OpenTelemetry SDK's in-memory exporters, fed by a test-only
 * publisher that drives the tracing channels as their TSDoc says (the resolver's own
 * publishing is tested end to end in otel-e2e.test.ts). The upstream calls are real undici
 * requests to a server on 127.0.0.1, traced by @opentelemetry/instrumentation-undici.
 */
import { randomBytes } from 'node:crypto'
import { tracingChannel } from 'node:diagnostics_channel'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { context, metrics, SpanStatusCode, trace } from '@opentelemetry/api'
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { InvalidOptionError } from '../../src/errors.js'
import { CHANNELS } from '../../src/tracing-channels.js'
import { createContextBinding } from '../../otel/context-binding.js'
import { AUTHORIZE_SPAN, instrumentVootGuard, RESOLVE_SPAN, type VootGuardInstrumentation } from 'voot-guard/otel'
import { createTestPublisher, type TestPublisher } from '../support/channel-publisher.js'
import { pointsOf, startOtelHarness, type OtelHarness } from '../support/otel-harness.js'

const REQUIRED = 'fc:org:example.org'
// The user's own groups: they must never reach telemetry.
const USER_GROUPS = [`fc:adhoc:${randomBytes(6).toString('hex')}`, `fc:fs:fs:emne:example.org:${randomBytes(6).toString('hex')}:1`]
const token = (): string => `tok-${randomBytes(16).toString('hex')}`

// Answers by token: member / non-member lists, 500, 401; `during` runs while a call is in flight.
const answers = new Map<string, { status: number; groups?: string[] }>()
let during: (() => Promise<void>) | undefined
let server: Server
let baseUrl: string

beforeAll(async () => {
  server = createServer((req, res) => {
    const presented = (req.headers.authorization ?? '').replace(/^Bearer /, '')
    const answer = answers.get(presented) ?? { status: 401 }
    void (during?.() ?? Promise.resolve()).then(() => {
      res.writeHead(answer.status, { 'content-type': 'application/json' })
      res.end(JSON.stringify(answer.groups?.map((id) => ({ id, type: 'fc:adhoc', membership: { basic: 'member' } })) ?? { error: 'no' }))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/groups`
})
afterAll(() => {
  server.closeAllConnections()
  server.close()
})

function member(): string {
  const issued = token()
  answers.set(issued, { status: 200, groups: [...USER_GROUPS, REQUIRED] })
  return issued
}
function outsider(): string {
  const issued = token()
  answers.set(issued, { status: 200, groups: [...USER_GROUPS] })
  return issued
}
function failing(status: number): string {
  const issued = token()
  answers.set(issued, { status })
  return issued
}

let harness: OtelHarness
let instrumentation: VootGuardInstrumentation
let publisher: TestPublisher
beforeEach(() => {
  harness = startOtelHarness()
  instrumentation = instrumentVootGuard({ tracerProvider: harness.tracerProvider, meterProvider: harness.meterProvider })
  publisher = createTestPublisher(baseUrl)
  during = undefined
})
afterEach(async () => {
  instrumentation.disable()
  await harness.shutdown()
})

const named = (spans: ReadableSpan[], name: string): ReadableSpan[] => spans.filter((span) => span.name === name)
const parentOf = (span: ReadableSpan): string | undefined => span.parentSpanContext?.spanId
const isHttpSpan = (span: ReadableSpan): boolean => span.attributes['http.request.method'] === 'GET'

describe('spans', () => {
  it('nest: authorize > resolve > undici HTTP client span, with outcome, reason and tier', async () => {
    expect(await publisher.check(member(), REQUIRED)).toEqual({ allowed: true })
    const spans = harness.spans()
    const [authorize] = named(spans, AUTHORIZE_SPAN)
    const [resolve] = named(spans, RESOLVE_SPAN)
    const http = spans.filter(isHttpSpan)
    expect(authorize?.attributes).toMatchObject({
      'voot_guard.outcome': 'allowed',
      'voot_guard.reason': 'member',
      'voot_guard.cache.tier': 'upstream',
      'voot_guard.requirement': `group ${REQUIRED}`,
    })
    expect(authorize?.status.code).toBe(SpanStatusCode.UNSET)
    expect(resolve?.attributes).toMatchObject({
      'voot_guard.cache.tier': 'upstream',
      'voot_guard.endpoint': 'me/groups',
      'http.response.status_code': 200,
    })
    expect(http).toHaveLength(1)
    expect(parentOf(resolve!)).toBe(authorize!.spanContext().spanId)
    expect(parentOf(http[0]!)).toBe(resolve!.spanContext().spanId)
    expect(http[0]!.spanContext().traceId).toBe(authorize!.spanContext().traceId)
  })

  it('nest under the span active where the decision was asked for', async () => {
    const tracer = harness.tracerProvider.getTracer('app')
    const request = tracer.startSpan('GET /api/staff')
    await context.with(trace.setSpan(context.active(), request), () => publisher.check(member(), REQUIRED))
    request.end()
    const [authorize] = named(harness.spans(), AUTHORIZE_SPAN)
    expect(parentOf(authorize!)).toBe(request.spanContext().spanId)
  })

  it('keep concurrent decisions apart: each HTTP span under its own resolve span', async () => {
    await Promise.all([publisher.check(member(), REQUIRED), publisher.check(outsider(), REQUIRED), publisher.check(member(), REQUIRED)])
    const spans = harness.spans()
    const resolves = named(spans, RESOLVE_SPAN)
    const http = spans.filter(isHttpSpan)
    expect(resolves).toHaveLength(3)
    expect(new Set(http.map(parentOf))).toEqual(new Set(resolves.map((span) => span.spanContext().spanId)))
    for (const resolve of resolves) {
      const authorize = named(spans, AUTHORIZE_SPAN).find((span) => span.spanContext().spanId === parentOf(resolve))
      expect(authorize?.spanContext().traceId).toBe(resolve.spanContext().traceId)
    }
  })

  it('come from a synchronous warm decision too (traceSync): resolve under authorize, tier l1', async () => {
    const issued = member()
    await publisher.check(issued, REQUIRED)
    const before = harness.spans().length
    expect(publisher.checkCached(issued, REQUIRED)).toEqual({ allowed: true })
    const warm = harness.spans().slice(before)
    const [authorize] = named(warm, AUTHORIZE_SPAN)
    const [resolve] = named(warm, RESOLVE_SPAN)
    expect(authorize?.attributes).toMatchObject({ 'voot_guard.outcome': 'allowed', 'voot_guard.cache.tier': 'l1' })
    expect(resolve?.attributes).toMatchObject({ 'voot_guard.cache.tier': 'l1' })
    expect(parentOf(resolve!)).toBe(authorize!.spanContext().spanId)
    expect(warm.filter(isHttpSpan)).toHaveLength(0)
  })

  it('mark a 503 (upstream failure) as ERROR with error.type, a denial and a 401 not', async () => {
    await expect(publisher.check(failing(500), REQUIRED)).rejects.toMatchObject({ code: 'ERR_UPSTREAM_STATUS' })
    await publisher.check(outsider(), REQUIRED)
    await expect(publisher.check(failing(401), REQUIRED)).rejects.toMatchObject({ code: 'ERR_TOKEN_INVALID' })
    const [failed, denied, invalid] = named(harness.spans(), AUTHORIZE_SPAN)
    expect(failed?.status).toEqual({ code: SpanStatusCode.ERROR, message: 'ERR_UPSTREAM_STATUS' })
    expect(failed?.attributes).toMatchObject({
      'voot_guard.outcome': 'error',
      'voot_guard.reason': 'ERR_UPSTREAM_STATUS',
      'error.type': 'ERR_UPSTREAM_STATUS',
    })
    expect(denied?.status.code).toBe(SpanStatusCode.UNSET)
    expect(denied?.attributes).toMatchObject({ 'voot_guard.outcome': 'denied', 'voot_guard.reason': 'not_member' })
    expect(invalid?.status.code).toBe(SpanStatusCode.UNSET)
    expect(invalid?.attributes).toMatchObject({ 'voot_guard.outcome': 'error', 'voot_guard.reason': 'ERR_TOKEN_INVALID' })
    expect(invalid?.attributes['error.type']).toBeUndefined()
    const [failedLookup] = named(harness.spans(), RESOLVE_SPAN)
    expect(failedLookup?.status.code).toBe(SpanStatusCode.ERROR)
    expect(failedLookup?.attributes).toMatchObject({ 'error.type': 'ERR_UPSTREAM_STATUS', 'http.response.status_code': 500 })
  })
})

describe('metrics', () => {
  it('count decisions by outcome and reason, lookups by tier and result', async () => {
    const issued = member()
    await publisher.check(issued, REQUIRED)
    publisher.checkCached(issued, REQUIRED)
    publisher.checkCached(issued, REQUIRED)
    await publisher.check(outsider(), REQUIRED)
    await expect(publisher.check(failing(503), REQUIRED)).rejects.toThrow()
    const collected = await harness.metrics()
    const decisions = (outcome: string, reason: string): unknown =>
      pointsOf(collected, 'voot_guard.decisions', { 'voot_guard.outcome': outcome, 'voot_guard.reason': reason })[0]?.value
    expect(decisions('allowed', 'member')).toBe(3)
    expect(decisions('denied', 'not_member')).toBe(1)
    expect(decisions('error', 'ERR_UPSTREAM_STATUS')).toBe(1)
    const lookups = (match: Record<string, string>): unknown => pointsOf(collected, 'voot_guard.cache.lookups', match)[0]?.value
    expect(lookups({ 'voot_guard.cache.tier': 'l1', 'voot_guard.cache.result': 'hit' })).toBe(2)
    expect(lookups({ 'voot_guard.cache.tier': 'upstream', 'voot_guard.cache.result': 'miss' })).toBe(2)
    // The failed lookup: no tier answered.
    const failed = pointsOf(collected, 'voot_guard.cache.lookups').filter(
      (point) => point.attributes['voot_guard.cache.tier'] === undefined,
    )
    expect(failed).toEqual([{ attributes: { 'voot_guard.cache.result': 'miss' }, value: 1 }])
  })

  it('time upstream calls in seconds, by status or error.type', async () => {
    // The first answer waits 50 ms: at least 0.05 in seconds, at least 50 if it were ms.
    during = () => new Promise((resolve) => setTimeout(resolve, 50))
    await publisher.check(member(), REQUIRED)
    during = undefined
    await expect(publisher.check(failing(502), REQUIRED)).rejects.toThrow()
    const closed = createServer()
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve))
    const refused = createTestPublisher(`http://127.0.0.1:${(closed.address() as AddressInfo).port}/groups`)
    await new Promise((resolve) => closed.close(resolve))
    await expect(refused.check(member(), REQUIRED)).rejects.toMatchObject({ code: 'ERR_UPSTREAM_NETWORK' })
    const collected = await harness.metrics()
    const histogram = (match: Record<string, string | number>): { count: number; sum: number } | undefined =>
      pointsOf(collected, 'voot_guard.upstream.duration', match)[0]?.value as { count: number; sum: number } | undefined
    const ok = histogram({ 'http.response.status_code': 200, 'voot_guard.endpoint': 'me/groups' })
    expect(ok?.count).toBe(1)
    expect(ok?.sum).toBeGreaterThanOrEqual(0.045)
    expect(ok?.sum).toBeLessThan(20) // seconds: 50 ms would read 50 (and the test times out at 20 s)
    expect(histogram({ 'http.response.status_code': 502 })?.count).toBe(1)
    expect(histogram({ 'error.type': 'ERR_UPSTREAM_NETWORK' })?.count).toBe(1)
    expect(
      pointsOf(collected, 'voot_guard.upstream.duration', { 'error.type': 'ERR_UPSTREAM_NETWORK' })[0]?.attributes[
        'http.response.status_code'
      ],
    ).toBeUndefined()
  })

  it('count calls in flight while they are', async () => {
    let inFlight: unknown
    during = async () => {
      inFlight = pointsOf(await harness.metrics(), 'voot_guard.upstream.active')[0]?.value
    }
    await Promise.all([publisher.check(member(), REQUIRED), publisher.check(member(), REQUIRED)])
    expect(inFlight).toBeGreaterThanOrEqual(1)
    expect(pointsOf(await harness.metrics(), 'voot_guard.upstream.active', { 'voot_guard.endpoint': 'me/groups' })[0]?.value).toBe(0)
  })

  it('gauge the circuit: 0 closed, 1 half-open, 2 open', async () => {
    const state = async (): Promise<unknown> => pointsOf(await harness.metrics(), 'voot_guard.circuit.state')[0]?.value
    expect(await state()).toBe(0)
    publisher.circuitChanged('open')
    expect(await state()).toBe(2)
    publisher.circuitChanged('half-open')
    expect(await state()).toBe(1)
    publisher.circuitChanged('closed')
    expect(await state()).toBe(0)
  })
})

describe('privacy', () => {
  it('no token and none of the user groups in any span, attribute or metric', async () => {
    const tokens = [member(), outsider(), failing(500), failing(401)]
    for (const issued of tokens) await publisher.check(issued, REQUIRED).catch(() => undefined)
    publisher.checkCached(tokens[0]!, REQUIRED)
    const text = await harness.exportedText()
    expect(harness.spans().filter(isHttpSpan).length).toBe(4) // the HTTP spans are in the text too
    expect(text).toContain(REQUIRED) // configuration: the requirement names it
    for (const secret of [...tokens, ...USER_GROUPS]) expect(text).not.toContain(secret)
    expect(text).not.toMatch(/Bearer/i)
  })
})

describe('instrumentVootGuard', () => {
  it('activates spans through the public API (context.with as the bound store), not a private field', () => {
    expect(createContextBinding().activation).toBe('context-with')
  })

  it('uses the global providers when none are given', async () => {
    instrumentation.disable()
    trace.setGlobalTracerProvider(harness.tracerProvider)
    metrics.setGlobalMeterProvider(harness.meterProvider)
    const global = instrumentVootGuard()
    try {
      await publisher.check(member(), REQUIRED)
      expect(named(harness.spans(), AUTHORIZE_SPAN)).toHaveLength(1)
      expect(pointsOf(await harness.metrics(), 'voot_guard.decisions')[0]?.value).toBe(1)
    } finally {
      global.disable()
      trace.disable()
      metrics.disable()
    }
  })

  it('disable() unsubscribes: nothing more is recorded and nothing is published', async () => {
    instrumentation.disable()
    instrumentation.disable() // idempotent
    for (const name of [CHANNELS.authorize, CHANNELS.resolve, CHANNELS.upstream]) expect(tracingChannel(name).hasSubscribers).toBe(false)
    await publisher.check(member(), REQUIRED)
    expect(named(harness.spans(), AUTHORIZE_SPAN)).toHaveLength(0)
    expect(named(harness.spans(), RESOLVE_SPAN)).toHaveLength(0)
    expect(pointsOf(await harness.metrics(), 'voot_guard.decisions')).toEqual([])
  })

  it('rejects providers that are not providers, naming the option', () => {
    expect(() => instrumentVootGuard({ tracerProvider: {} as never })).toThrow(InvalidOptionError)
    expect(() => instrumentVootGuard({ meterProvider: 'global' as never })).toThrow(/meterProvider/)
  })

  it('a failing meter does not break the decision', async () => {
    instrumentation.disable()
    const meter = harness.meterProvider.getMeter('broken')
    // A counter whose add() throws, as an exporter bug might make it.
    const broken = Object.assign(Object.create(meter) as typeof meter, {
      createCounter: () => ({
        add: () => {
          throw new Error('exporter down')
        },
      }),
    })
    const throwing = instrumentVootGuard({ tracerProvider: harness.tracerProvider, meterProvider: { getMeter: () => broken } })
    try {
      const issued = member()
      expect(await publisher.check(issued, REQUIRED)).toEqual({ allowed: true })
      expect(publisher.checkCached(issued, REQUIRED)).toEqual({ allowed: true })
      expect(named(harness.spans(), AUTHORIZE_SPAN)).toHaveLength(2) // the spans still end
    } finally {
      throwing.disable()
    }
  })
})
