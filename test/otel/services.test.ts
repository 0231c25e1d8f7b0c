/**
 * voot-guard/otel over two group services (createServiceResolvers, a Feide emulator and a
 * SURFconext one) beside a resolver of no service, everything exported to the SDK's
 * in-memory exporters: each service's spans, warm-decision attributes and metric points
 * carry `voot_guard.service` with its own name, the other resolver's carry none, and each
 * service's circuit breaker has its own series of `voot_guard.circuit.state`.
 */
import { context, trace, type Attributes } from '@opentelemetry/api'
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { AUTHORIZE_SPAN, instrumentVootGuard, RESOLVE_SPAN, type VootGuardInstrumentation } from 'voot-guard/otel'
import {
  anyOf,
  authenticated,
  createMembershipResolver,
  createServiceResolvers,
  group,
  type MembershipResolver,
  type ServiceResolvers,
} from '../../src/index.js'
import { ORG_ID, PROJECT_BOARD_GROUP_ID, startEmulator, type Emulator } from '../../testing/index.js'
import { pointsOf, startOtelHarness, type OtelHarness, type Point } from '../support/otel-harness.js'

const SERVICE = 'voot_guard.service'
const EITHER_ADMIN = anyOf(group(ORG_ID, 'admin'), group(PROJECT_BOARD_GROUP_ID, 'admin'))

let feide: Emulator
let surf: Emulator
let services: ServiceResolvers
let plain: MembershipResolver
beforeAll(async () => {
  feide = await startEmulator()
  surf = await startEmulator({ dialect: 'openconext' })
  services = createServiceResolvers({
    services: {
      feide: { baseUrl: feide.baseUrl, retries: 0, circuitBreaker: { failureThreshold: 1, cooldown: 60_000 } },
      surf: { baseUrl: surf.baseUrl, retries: 0, circuitBreaker: { failureThreshold: 1, cooldown: 60_000 } },
    },
    groupPrefixes: { 'fc:': 'feide', 'urn:collab:': 'surf' },
  })
  plain = createMembershipResolver({ baseUrl: feide.baseUrl })
})
afterAll(async () => {
  await services.close()
  await plain.close()
  await feide.close()
  await surf.close()
})

let harness: OtelHarness
let instrumentation: VootGuardInstrumentation
beforeEach(async () => {
  await services.invalidate()
  await plain.invalidate()
  harness = startOtelHarness()
  instrumentation = instrumentVootGuard({ tracerProvider: harness.tracerProvider, meterProvider: harness.meterProvider })
})
afterEach(async () => {
  instrumentation.disable()
  await harness.shutdown()
})

const named = (spans: ReadableSpan[], name: string): ReadableSpan[] => spans.filter((span) => span.name === name)
const servicesOf = (items: readonly { readonly attributes: Attributes }[]): unknown[] =>
  [...new Set(items.map((item) => item.attributes[SERVICE]))].sort()
const total = (points: readonly Point[]): number => points.reduce((sum, point) => sum + Number(point.value), 0)

let tokens: { readonly feide: string; readonly surf: string; readonly plain: string }
beforeEach(() => {
  tokens = { feide: feide.issueToken('alice'), surf: surf.issueToken('alice'), plain: feide.issueToken('bob') }
})

/** One decision of each service for its own admin, and one of the resolver without a service. */
async function decideOnEach(): Promise<void> {
  expect(await services.check(tokens.feide, EITHER_ADMIN, { service: 'feide' })).toMatchObject({ allowed: true })
  expect(await services.check(tokens.surf, EITHER_ADMIN, { service: 'surf' })).toMatchObject({ allowed: true })
  expect(await plain.check(tokens.plain, group(ORG_ID, 'admin'))).toMatchObject({ allowed: false })
}

describe('voot-guard/otel over two services', () => {
  it("labels each service's spans with its name, and a resolver of no service's with none", async () => {
    await decideOnEach()
    const spans = harness.spans()
    const decisions = named(spans, AUTHORIZE_SPAN)
    const lookups = named(spans, RESOLVE_SPAN)
    expect(decisions).toHaveLength(3)
    expect(servicesOf(decisions)).toEqual(['feide', 'surf', undefined])
    const feideDecision = decisions.find((span) => span.attributes[SERVICE] === 'feide')
    const surfDecision = decisions.find((span) => span.attributes[SERVICE] === 'surf')
    // Each decided its own part of the requirement.
    expect(String(feideDecision?.attributes['voot_guard.requirement'])).toMatch(new RegExp(`^group ${ORG_ID} `))
    expect(String(surfDecision?.attributes['voot_guard.requirement'])).toMatch(new RegExp(`^group ${PROJECT_BOARD_GROUP_ID} `))
    // Each lookup span is its decision's, and says the same service.
    for (const decision of decisions) {
      const children = lookups.filter((span) => span.parentSpanContext?.spanId === decision.spanContext().spanId)
      expect(children.length).toBeGreaterThan(0)
      for (const child of children) expect(child.attributes[SERVICE]).toBe(decision.attributes[SERVICE])
    }
    const unlabelled = decisions.find((span) => !(SERVICE in span.attributes))
    expect(unlabelled?.attributes['voot_guard.reason']).toBe('role_too_low')
  })

  it("puts the service's name on the active span of a warm decision", async () => {
    await decideOnEach()
    const signedIn = authenticated()
    const tracer = harness.tracerProvider.getTracer('app')
    for (const service of ['feide', 'surf'] as const) {
      const token = tokens[service]
      const request = tracer.startSpan(`GET /board (${service})`)
      // Warm: answered synchronously, from the service's own cache.
      const decided = context.with(trace.setSpan(context.active(), request), () => services.checkNow(token, EITHER_ADMIN, service))
      expect(decided).toMatchObject({ allowed: true })
      request.end()
    }
    const plainRequest = tracer.startSpan('GET /staff')
    context.with(trace.setSpan(context.active(), plainRequest), () => plain.checkNow?.(tokens.plain, group(ORG_ID, 'admin')))
    plainRequest.end()
    // A requirement of one description on both services (each token's own, warm): each its own label.
    for (const service of ['feide', 'surf'] as const) {
      const request = tracer.startSpan(`GET /me (${service})`)
      const decided = context.with(trace.setSpan(context.active(), request), () => services.checkNow(tokens[service], signedIn, service))
      expect(decided).toMatchObject({ allowed: true })
      request.end()
    }
    const requests = harness.spans().filter((span) => span.name.startsWith('GET '))
    expect(requests.map((span) => [span.name, span.attributes[SERVICE], span.attributes['voot_guard.cache.tier']])).toEqual([
      ['GET /board (feide)', 'feide', 'l1'],
      ['GET /board (surf)', 'surf', 'l1'],
      ['GET /staff', undefined, 'l1'],
      ['GET /me (feide)', 'feide', 'l1'],
      ['GET /me (surf)', 'surf', 'l1'],
    ])
  })

  it('labels the decisions, lookups, upstream duration and calls in flight of each service', async () => {
    await decideOnEach()
    // And warm, once more each.
    await decideOnEach()
    const metrics = await harness.metrics()
    for (const name of ['voot_guard.decisions', 'voot_guard.cache.lookups', 'voot_guard.upstream.duration', 'voot_guard.upstream.active']) {
      expect(servicesOf(metrics.get(name) ?? []), name).toEqual(['feide', 'surf', undefined])
    }
    for (const service of ['feide', 'surf']) {
      expect(total(pointsOf(metrics, 'voot_guard.decisions', { [SERVICE]: service, 'voot_guard.outcome': 'allowed' }))).toBe(2)
      expect(pointsOf(metrics, 'voot_guard.cache.lookups', { [SERVICE]: service, 'voot_guard.cache.tier': 'l1' })).not.toEqual([])
      expect(pointsOf(metrics, 'voot_guard.upstream.duration', { [SERVICE]: service, 'http.response.status_code': 200 })).toHaveLength(1)
      expect(total(pointsOf(metrics, 'voot_guard.upstream.active', { [SERVICE]: service }))).toBe(0)
    }
    // The resolver without a service: its points as before, without the attribute.
    const denied = pointsOf(metrics, 'voot_guard.decisions', { 'voot_guard.outcome': 'denied' })
    expect(denied.map((point) => point.attributes)).toEqual([{ 'voot_guard.outcome': 'denied', 'voot_guard.reason': 'role_too_low' }])
  })

  it("counts a denial for a requirement with no part on the token's service (other_service) under that service, without a lookup", async () => {
    const decision = await services.check(tokens.surf, group(ORG_ID, 'admin'), { service: 'surf' })
    expect(decision).toMatchObject({ allowed: false, reason: 'other_service' })
    const metrics = await harness.metrics()
    const points = pointsOf(metrics, 'voot_guard.decisions', { [SERVICE]: 'surf', 'voot_guard.reason': 'other_service' })
    expect(total(points)).toBe(1)
    expect(metrics.get('voot_guard.cache.lookups') ?? []).toEqual([])
  })

  it("gives each service's circuit breaker its own series: one service's open circuit is its own", async () => {
    const fault = surf.faults.add({ kind: 'status', status: 503 })
    try {
      await expect(services.check(surf.issueToken('carol'), EITHER_ADMIN, { service: 'surf' })).rejects.toMatchObject({
        code: 'ERR_UPSTREAM_STATUS',
      })
      expect(await services.check(feide.issueToken('alice'), EITHER_ADMIN, { service: 'feide' })).toMatchObject({ allowed: true })
      const circuit = pointsOf(await harness.metrics(), 'voot_guard.circuit.state')
      expect(circuit.map((point) => [point.attributes[SERVICE], point.value])).toEqual([
        // The series of the resolvers without a service, as ever.
        [undefined, 0],
        ['surf', 2],
      ])
      // The failed decision is counted as SURFconext's.
      const failed = pointsOf(await harness.metrics(), 'voot_guard.decisions', { 'voot_guard.outcome': 'error' })
      expect(servicesOf(failed)).toEqual(['surf'])
    } finally {
      surf.faults.remove(fault)
    }
  })
})
