/**
 * The opt-in circuit breaker: opens after a run of upstream failures, fails fast for a
 * cool-down, lets exactly one probe through, never counts 401/403/404, and never stands
 * between a caller and a warm cache entry.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import express from 'express'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { createGuard } from '../../../adapters/express/index.js'
import {
  AbortedError,
  createMembershipResolver,
  group,
  InsufficientScopeError,
  InvalidGroupIdError,
  InvalidOptionError,
  InvalidTokenError,
  TokenMalformedError,
  UpstreamError,
  type MembershipResolver,
  type ResolverEvent,
} from '../../../src/index.js'
import {
  circuitBreakerOption,
  circuitOutcome,
  createCircuitBreaker,
  type CircuitChange,
} from '../../../src/resolver/upstream/circuit-breaker.js'
import { ADHOC_GROUP_ID, ORG_ID, startEmulator, type Emulator } from '../../../testing/index.js'

describe('createCircuitBreaker', () => {
  let clock: number
  let changes: CircuitChange[]
  const make = (failureThreshold = 3, cooldown = 10_000) => {
    clock = 1_000_000
    changes = []
    return createCircuitBreaker({ failureThreshold, cooldown, now: () => clock, onChange: (c) => changes.push(c) })
  }

  it('opens after failureThreshold failures in a row, and only then', () => {
    const breaker = make()
    breaker.admit()!.settle('failure')
    breaker.admit()!.settle('failure')
    expect(breaker.state).toBe('closed')
    breaker.admit()!.settle('failure')
    expect(breaker.state).toBe('open')
    expect(breaker.admit()).toBeUndefined()
    expect(changes).toEqual([{ state: 'open', failures: 3, cooldownMs: 10_000 }])
  })

  it('a success resets the run; neutral outcomes change nothing', () => {
    const breaker = make()
    breaker.admit()!.settle('failure')
    breaker.admit()!.settle('failure')
    breaker.admit()!.settle('success')
    breaker.admit()!.settle('failure')
    breaker.admit()!.settle('neutral')
    breaker.admit()!.settle('failure')
    expect(breaker.state).toBe('closed')
    breaker.admit()!.settle('failure')
    expect(breaker.state).toBe('open')
  })

  it('answers with the rest of the cool-down as Retry-After', () => {
    const breaker = make(1, 10_000)
    breaker.admit()!.settle('failure')
    clock += 2_500
    const error = breaker.openError('me/groups')
    expect(error).toBeInstanceOf(UpstreamError)
    expect(error).toMatchObject({ code: 'ERR_UPSTREAM_CIRCUIT_OPEN', status: 503, retryAfter: 8, endpoint: 'me/groups' })
  })

  it('after the cool-down lets exactly one probe through; its success closes the circuit', () => {
    const breaker = make(1, 10_000)
    breaker.admit()!.settle('failure')
    clock += 9_999
    expect(breaker.admit()).toBeUndefined()
    clock += 1
    expect(breaker.state).toBe('half-open')
    const probe = breaker.admit()
    expect(probe).toBeDefined()
    for (let i = 0; i < 5; i++) expect(breaker.admit()).toBeUndefined()
    probe!.settle('success')
    expect(breaker.state).toBe('closed')
    expect(breaker.admit()).toBeDefined()
    expect(changes.map((c) => c.state)).toEqual(['open', 'half-open', 'closed'])
  })

  it('a failed probe opens the circuit for another full cool-down', () => {
    const breaker = make(1, 10_000)
    breaker.admit()!.settle('failure')
    clock += 10_000
    breaker.admit()!.settle('failure')
    expect(breaker.state).toBe('open')
    clock += 9_999
    expect(breaker.admit()).toBeUndefined()
    clock += 1
    expect(breaker.admit()).toBeDefined()
    expect(changes.map((c) => c.state)).toEqual(['open', 'half-open', 'open', 'half-open'])
  })

  it('a neutral probe frees the probe slot without closing or opening', () => {
    const breaker = make(1, 10_000)
    breaker.admit()!.settle('failure')
    clock += 10_000
    breaker.admit()!.settle('neutral')
    expect(breaker.state).toBe('half-open')
    expect(breaker.admit()).toBeDefined()
    expect(breaker.admit()).toBeUndefined()
  })

  it('ignores the late outcome of a call admitted before the circuit opened, and double settles', () => {
    const breaker = make(2, 10_000)
    const slow = breaker.admit()!
    const fast = breaker.admit()!
    fast.settle('failure')
    fast.settle('failure')
    expect(breaker.state).toBe('closed')
    breaker.admit()!.settle('failure')
    expect(breaker.state).toBe('open')
    slow.settle('success')
    expect(breaker.state).toBe('open')
    clock += 10_000
    const probe = breaker.admit()!
    slow.settle('failure')
    probe.settle('success')
    expect(breaker.state).toBe('closed')
  })

  it('ignores exceptions of onChange', () => {
    const breaker = createCircuitBreaker({
      failureThreshold: 1,
      cooldown: 1000,
      now: () => 0,
      onChange: () => {
        throw new Error('logger down')
      },
    })
    expect(() => breaker.admit()!.settle('failure')).not.toThrow()
    expect(breaker.state).toBe('open')
  })
})

describe('circuitOutcome', () => {
  it.each([
    ['a network failure', new UpstreamError('ERR_UPSTREAM_NETWORK', 'x'), 'failure'],
    ['a timeout', new UpstreamError('ERR_UPSTREAM_TIMEOUT', 'x'), 'failure'],
    ['a 500', new UpstreamError('ERR_UPSTREAM_STATUS', 'x', { upstreamStatus: 500 }), 'failure'],
    ['a 503', new UpstreamError('ERR_UPSTREAM_STATUS', 'x', { upstreamStatus: 503 }), 'failure'],
    ['a 429', new UpstreamError('ERR_UPSTREAM_RATE_LIMITED', 'x', { upstreamStatus: 429 }), 'failure'],
    ['a connection broken mid-answer', new UpstreamError('ERR_UPSTREAM_NETWORK', 'x', { upstreamStatus: 200 }), 'failure'],
    // Outcomes one token's data can decide: a 503 for that lookup, nothing for the circuit.
    ['a redirect', new UpstreamError('ERR_UPSTREAM_REDIRECT', 'x', { upstreamStatus: 302 }), 'neutral'],
    ['a bad body', new UpstreamError('ERR_UPSTREAM_BODY', 'x', { upstreamStatus: 200 }), 'neutral'],
    ['an oversized body', new UpstreamError('ERR_UPSTREAM_BODY_TOO_LARGE', 'x', { upstreamStatus: 200 }), 'neutral'],
    ['an odd status (204)', new UpstreamError('ERR_UPSTREAM_STATUS', 'x', { upstreamStatus: 204 }), 'neutral'],
    ['a 401', new InvalidTokenError(), 'success'],
    ['a 403', new InsufficientScopeError(), 'success'],
    ['a 400', new UpstreamError('ERR_UPSTREAM_STATUS', 'x', { upstreamStatus: 400 }), 'success'],
    ['a 431', new UpstreamError('ERR_UPSTREAM_STATUS', 'x', { upstreamStatus: 431 }), 'success'],
    ['a malformed token', new TokenMalformedError(), 'neutral'],
    ['a refused group id', new InvalidGroupIdError('..'), 'neutral'],
    ['an abort', new AbortedError(), 'neutral'],
    ['an overload', new UpstreamError('ERR_UPSTREAM_OVERLOADED', 'x'), 'neutral'],
    ['a bug', new TypeError('x is undefined'), 'neutral'],
  ])('%s counts as %s', (_label, error, outcome) => {
    expect(circuitOutcome(error)).toBe(outcome)
  })
})

describe('circuitBreaker option', () => {
  it('is off by default and with false; true means the defaults', () => {
    expect(circuitBreakerOption(undefined)).toBeUndefined()
    expect(circuitBreakerOption(false)).toBeUndefined()
    expect(circuitBreakerOption(true)).toEqual({ failureThreshold: 5, cooldown: 30_000 })
    expect(circuitBreakerOption({ cooldown: 1000 })).toEqual({ failureThreshold: 5, cooldown: 1000 })
  })

  it.each([
    ['yes', 'circuitBreaker'],
    [null, 'circuitBreaker'],
    [[], 'circuitBreaker'],
    [{ failureThreshold: 0 }, 'circuitBreaker.failureThreshold'],
    [{ failureThreshold: 2.5 }, 'circuitBreaker.failureThreshold'],
    [{ cooldown: 0 }, 'circuitBreaker.cooldown'],
    [{ cooldown: 3_600_001 }, 'circuitBreaker.cooldown'],
    [{ cooldownMs: 1000 }, 'circuitBreaker.cooldownMs'],
  ])('refuses %j naming %s', (value, name) => {
    const create = (): unknown => createMembershipResolver({ baseUrl: 'https://groups.example.org/groups', circuitBreaker: value as never })
    expect(create).toThrow(InvalidOptionError)
    expect(create).toThrow(`options.${name}:`)
  })
})

describe('circuit breaker in the resolver, against the emulator', () => {
  let emulator: Emulator
  let resolver: MembershipResolver
  let clock: number
  let events: ResolverEvent[]

  beforeAll(async () => {
    emulator = await startEmulator()
  })
  afterAll(async () => {
    await emulator.close()
  })
  beforeEach(() => {
    clock = Date.parse('2026-11-21T12:00:00Z')
    events = []
    resolver = createMembershipResolver({
      baseUrl: emulator.baseUrl,
      now: () => clock,
      circuitBreaker: { failureThreshold: 3, cooldown: 10_000 },
      onEvent: (e) => events.push(e),
    })
  })
  afterEach(async () => {
    emulator.faults.clear()
    emulator.resetLog()
    await resolver.close()
  })

  const tokens = (n: number): string[] => Array.from({ length: n }, () => emulator.issueToken('alice'))

  async function openCircuit(): Promise<void> {
    emulator.faults.add({ kind: 'status', status: 503 })
    for (const token of tokens(3)) {
      await expect(resolver.check(token, group(ORG_ID))).rejects.toMatchObject({ code: 'ERR_UPSTREAM_STATUS' })
    }
    expect(resolver.stats().circuit).toBe('open')
  }

  it('fails fast once open, without calling the service; warm entries are still served', async () => {
    const warm = emulator.issueToken('alice')
    expect(await resolver.check(warm, group(ORG_ID))).toMatchObject({ allowed: true })
    await openCircuit()
    emulator.resetLog()

    const cold = emulator.issueToken('bob')
    const failure = await resolver.check(cold, group(ORG_ID)).catch((error: unknown) => error)
    expect(failure).toBeInstanceOf(UpstreamError)
    expect(failure).toMatchObject({ code: 'ERR_UPSTREAM_CIRCUIT_OPEN', status: 503, retryAfter: 10 })
    expect(emulator.count()).toBe(0)
    expect(await resolver.check(warm, group(ORG_ID))).toMatchObject({ allowed: true })
    expect(emulator.count()).toBe(0)

    expect(events).toContainEqual({ type: 'circuit_open', failures: 3, cooldownMs: 10_000 })
    expect(events).toContainEqual(
      expect.objectContaining({ type: 'upstream_rejected', endpoint: 'me/groups', code: 'ERR_UPSTREAM_CIRCUIT_OPEN', retryAfter: 10 }),
    )
    expect(resolver.stats().rejected).toBe(1)
    expect(JSON.stringify(events)).not.toContain(warm)
    expect(JSON.stringify(events)).not.toContain(cold)
  })

  it('after the cool-down exactly one of many concurrent callers probes; its success closes the circuit', async () => {
    await openCircuit()
    emulator.faults.clear()
    emulator.resetLog()
    clock += 10_000
    const outcomes = await Promise.allSettled(tokens(20).map((token) => resolver.check(token, group(ORG_ID))))
    expect(emulator.count()).toBe(1)
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1)
    for (const outcome of outcomes) {
      if (outcome.status === 'rejected') expect(outcome.reason).toMatchObject({ code: 'ERR_UPSTREAM_CIRCUIT_OPEN' })
    }
    expect(resolver.stats().circuit).toBe('closed')
    expect(events.map((e) => e.type).filter((t) => t.startsWith('circuit_'))).toEqual([
      'circuit_open',
      'circuit_half_open',
      'circuit_closed',
    ])
    expect(await resolver.check(emulator.issueToken('bob'), group(ORG_ID))).toMatchObject({ allowed: true })
  })

  it('a failed probe opens it again for another cool-down', async () => {
    await openCircuit()
    emulator.resetLog()
    clock += 10_000
    await expect(resolver.check(emulator.issueToken('alice'), group(ORG_ID))).rejects.toMatchObject({ code: 'ERR_UPSTREAM_STATUS' })
    expect(emulator.count()).toBe(1)
    expect(resolver.stats().circuit).toBe('open')
    await expect(resolver.check(emulator.issueToken('alice'), group(ORG_ID))).rejects.toMatchObject({
      code: 'ERR_UPSTREAM_CIRCUIT_OPEN',
      retryAfter: 10,
    })
    expect(emulator.count()).toBe(1)
  })

  it('401, 403 and 404 never open it, however many', async () => {
    const clientToken = emulator.issueClientToken()
    const erin = emulator.issueToken('erin')
    for (let i = 0; i < 10; i++) {
      const unknown = `sprayed-${i}-${'x'.repeat(20)}`
      await expect(resolver.check(unknown, group(ORG_ID))).rejects.toBeInstanceOf(InvalidTokenError)
      await expect(resolver.check(clientToken, group(ORG_ID))).rejects.toBeInstanceOf(InsufficientScopeError)
      expect(await resolver.check(erin, group(`fc:adhoc:missing-${i}`))).toMatchObject({ allowed: false, reason: 'not_member' })
    }
    expect(resolver.stats().circuit).toBe('closed')
    expect(events.some((e) => e.type === 'circuit_open')).toBe(false)
  })

  it.each([
    ['an oversized me/groups (a user in thousands of groups)', { kind: 'oversized', bytes: 256 * 1024 }, 'ERR_UPSTREAM_BODY_TOO_LARGE'],
    ['a body that does not parse', { kind: 'invalid-json' }, 'ERR_UPSTREAM_BODY'],
    ['a body of the wrong shape', { kind: 'wrong-shape' }, 'ERR_UPSTREAM_BODY'],
  ] as const)('one token whose answer is %s never opens it for the others', async (_label, fault, code) => {
    await resolver.close()
    resolver = createMembershipResolver({
      baseUrl: emulator.baseUrl,
      now: () => clock,
      maxResponseBytes: 64 * 1024,
      circuitBreaker: { failureThreshold: 3, cooldown: 10_000 },
      onEvent: (e) => events.push(e),
    })
    const mallory = emulator.issueToken('alice')
    emulator.faults.add(fault, { token: mallory })
    // Each asks anew: the failure is not cached, so every one is a call to the service.
    for (let i = 0; i < 10; i++) {
      await expect(resolver.check(mallory, group(ORG_ID))).rejects.toMatchObject({ code, status: 503 })
    }
    expect(emulator.count()).toBe(10)
    expect(resolver.stats().circuit).toBe('closed')
    expect(events.some((e) => e.type === 'circuit_open')).toBe(false)
    // Another user's uncached lookup still goes to the service and is answered.
    expect(await resolver.check(emulator.issueToken('bob'), group(ORG_ID))).toMatchObject({ allowed: true })
    expect(emulator.count()).toBe(11)
  })

  it('a stale answer within staleIfError is served while it is open', async () => {
    await resolver.close()
    resolver = createMembershipResolver({
      baseUrl: emulator.baseUrl,
      now: () => clock,
      cache: { ttl: 1000, staleIfError: 60_000 },
      circuitBreaker: { failureThreshold: 3, cooldown: 10_000 },
    })
    const warm = emulator.issueToken('alice')
    expect(await resolver.check(warm, group(ADHOC_GROUP_ID, 'owner'))).toMatchObject({ allowed: true })
    await openCircuit()
    clock += 5_000
    emulator.resetLog()
    expect(await resolver.check(warm, group(ADHOC_GROUP_ID, 'owner'))).toMatchObject({ allowed: true })
    expect(emulator.count()).toBe(0)
    expect(resolver.stats().staleServed).toBe(1)
  })

  it('through an Express guard: 503 temporarily_unavailable with the cool-down as Retry-After, handler not run', async () => {
    let handlerCalls = 0
    const guard = createGuard({ baseUrl: emulator.baseUrl, circuitBreaker: { failureThreshold: 2, cooldown: 20_000 } })
    const app = express()
    app.get('/staff', guard.requireGroup(ORG_ID), (_req, res) => {
      handlerCalls++
      res.json({ ok: true })
    })
    const server: Server = createServer(app)
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/staff`
    try {
      emulator.faults.add({ kind: 'status', status: 500 })
      const get = (token: string) => fetch(url, { headers: { authorization: `Bearer ${token}` } })
      for (const token of tokens(2)) expect((await get(token)).status).toBe(503)
      emulator.resetLog()
      const res = await get(emulator.issueToken('alice'))
      expect(res.status).toBe(503)
      expect(res.headers.get('retry-after')).toBe('20')
      expect(await res.json()).toMatchObject({ error: 'temporarily_unavailable' })
      expect(emulator.count()).toBe(0)
      expect(handlerCalls).toBe(0)
    } finally {
      await guard.resolver.close()
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  })
})
