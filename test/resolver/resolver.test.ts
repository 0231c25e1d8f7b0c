import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { warmAllowed } from '../support/warm-check.js'
import {
  allOf,
  anyOf,
  createMembershipResolver,
  group,
  groupOfType,
  InsufficientScopeError,
  InvalidArgumentError,
  InvalidOptionError,
  InvalidTokenError,
  UpstreamError,
  where,
  type MembershipResolver,
  type MembershipResolverOptions,
  type ResolverEvent,
} from '../../src/index.js'
import { describeRequirement } from '../../src/internal.js'
import { BASE_URL, createMockUpstream, type MockUpstream } from '../support/mock-upstream.js'

const ORG = 'fc:org:example.org'
const ADHOC = 'fc:adhoc:4b1c0d2e'
const COURSE = 'fc:fs:fs:emne:example.org:INF1000:1'
const T0 = Date.parse('2026-11-21T12:00:00Z')

let upstream: MockUpstream
let clock: number
let resolver: MembershipResolver

function make(options: Partial<MembershipResolverOptions> = {}): MembershipResolver {
  return createMembershipResolver({
    baseUrl: BASE_URL,
    dispatcher: upstream.agent,
    now: () => clock,
    ...options,
  })
}

beforeEach(() => {
  clock = T0
  upstream = createMockUpstream()
  upstream.users.set('alice-token', {
    listed: [
      { id: ORG, type: 'fc:org', membership: { basic: 'admin', affiliation: ['employee'] } },
      { id: ADHOC, type: 'voot:ad-hoc', membership: { basic: 'owner' } },
    ],
  })
  upstream.users.set('bob-token', {
    listed: [{ id: ORG, type: 'fc:org', membership: { basic: 'member' } }],
    hidden: [
      { id: COURSE, type: 'fc:fs:emne', membership: { basic: 'member', active: false } },
      { id: 'fc:fs:fs:emne:example.org:FUTURE:1', type: 'fc:fs:emne', membership: { basic: 'member', notBefore: '2027-01-01T00:00:00Z' } },
      { id: 'fc:fs:fs:emne:example.org:PAST:1', type: 'fc:fs:emne', membership: { basic: 'member', notAfter: '2026-01-01T00:00:00Z' } },
      { id: 'fc:adhoc:partial', type: 'voot:ad-hoc', membership: { basic: 'admin' } },
      { id: 'fc:adhoc:weird-role', type: 'voot:ad-hoc', membership: { basic: 'superhero' } },
    ],
  })
  resolver = make()
})

afterEach(async () => {
  await resolver.close()
  await upstream.close()
})

describe('decision rules', () => {
  it('allows from me/groups and lets a higher role satisfy a lower one (owner satisfies admin)', async () => {
    const decision = await resolver.check('alice-token', group(ADHOC, 'admin'))
    expect(decision).toMatchObject({ allowed: true, reason: 'member', groupId: ADHOC })
    expect(upstream.calls.get('/groups/me/groups')).toBe(1)
    expect(upstream.total()).toBe(1)
  })

  it('denies a role below the requirement only after me/groups/{id} confirms it', async () => {
    const decision = await resolver.check('bob-token', group(ORG, 'admin'))
    expect(decision).toMatchObject({ allowed: false, reason: 'role_too_low', groupId: ORG })
    expect(upstream.calls.get(`/groups/me/groups/${encodeURIComponent(ORG)}`)).toBe(1)
  })

  it('allows a group absent from a partial me/groups when me/groups/{id} confirms it', async () => {
    const decision = await resolver.check('bob-token', group('fc:adhoc:partial', 'admin'))
    expect(decision).toMatchObject({ allowed: true, reason: 'member' })
  })

  it('denies with not_member only on a 404 from me/groups/{id}', async () => {
    const decision = await resolver.check('bob-token', group('fc:adhoc:nope'))
    expect(decision).toMatchObject({ allowed: false, reason: 'not_member', groupId: 'fc:adhoc:nope' })
    expect(upstream.calls.get('/groups/me/groups/fc%3Aadhoc%3Anope')).toBe(1)
  })

  it('denies active:false as inactive, a future notBefore as not_yet_valid and a past notAfter as expired', async () => {
    for (const [id, reason] of [
      [COURSE, 'inactive'],
      ['fc:fs:fs:emne:example.org:FUTURE:1', 'not_yet_valid'],
      ['fc:fs:fs:emne:example.org:PAST:1', 'expired'],
    ] as const) {
      expect(await resolver.check('bob-token', group(id))).toMatchObject({ allowed: false, reason })
    }
  })

  it('evaluates dates at decision time with the injected clock', async () => {
    clock = Date.parse('2027-02-01T00:00:00Z')
    expect(await resolver.check('bob-token', group('fc:fs:fs:emne:example.org:FUTURE:1'))).toMatchObject({ allowed: true })
  })

  it('lets an unknown role satisfy no requirement, not even "any role"', async () => {
    expect(await resolver.check('bob-token', group('fc:adhoc:weird-role'))).toMatchObject({
      allowed: false,
      reason: 'role_too_low',
    })
    expect(await resolver.check('bob-token', group('fc:adhoc:weird-role', 'member'))).toMatchObject({
      allowed: false,
      reason: 'role_too_low',
    })
  })

  it('orders roles by the roles option', async () => {
    const custom = make({ roles: ['prospect', 'member', 'manager', 'admin', 'owner'] })
    expect(await custom.check('alice-token', group(ORG, 'manager'))).toMatchObject({ allowed: true })
    expect(await custom.check('bob-token', group(ORG, 'manager'))).toMatchObject({ allowed: false })
    expect(() => resolver.assertRequirement(group(ORG, 'steward'))).toThrow(InvalidArgumentError)
    await expect(resolver.check('bob-token', group(ORG, 'steward'))).rejects.toThrow(/Unknown role/)
  })

  it('an allowed anyOf names the alternative that held, cold and warm alike', async () => {
    const requirement = anyOf(group('fc:adhoc:nope'), group('fc:adhoc:partial'))
    const cold = await resolver.check('bob-token', requirement)
    expect(cold).toEqual({ allowed: true, reason: 'member', requirement: 'group fc:adhoc:partial', groupId: 'fc:adhoc:partial' })
    expect(warmAllowed(resolver, 'bob-token', requirement)).toEqual(cold)
    expect(await resolver.check('bob-token', requirement)).toEqual(cold)
  })

  it('anyOf is allowed by one alternative from the list without asking about the others', async () => {
    const decision = await resolver.check('alice-token', anyOf(group('fc:adhoc:other'), group(ORG, 'admin')))
    expect(decision.allowed).toBe(true)
    expect(upstream.total()).toBe(1)
  })

  it('anyOf is denied when no alternative holds, for the reason closest to being met', async () => {
    const requirement = anyOf(group('fc:adhoc:x'), group(ORG, 'owner'))
    const decision = await resolver.check('bob-token', requirement)
    expect(decision).toEqual({ allowed: false, reason: 'role_too_low', requirement: describeRequirement(requirement) })
    const either = await resolver.check('bob-token', anyOf(group(ORG, 'owner'), group('fc:adhoc:x')))
    expect(either).toMatchObject({ allowed: false, reason: 'role_too_low' })
  })

  it('allOf reports the part that failed', async () => {
    expect(await resolver.check('alice-token', allOf(group(ORG), group(ADHOC, 'owner')))).toMatchObject({ allowed: true })
    const denied = await resolver.check('bob-token', allOf(group(ORG), group(COURSE)))
    expect(denied).toMatchObject({ allowed: false, reason: 'inactive', groupId: COURSE })
  })

  it('groupOfType looks for any active membership of that type', async () => {
    expect(await resolver.check('alice-token', groupOfType('voot:ad-hoc', 'owner'))).toMatchObject({ allowed: true })
    expect(await resolver.check('bob-token', groupOfType('fc:fs:emne'))).toMatchObject({
      allowed: false,
      reason: 'not_member',
    })
  })

  it('where allows only on exactly true and sees cached lookups', async () => {
    const manyGroups = where('two or more groups', async (ctx) => (await ctx.groups()).length >= 2)
    expect(await resolver.check('alice-token', manyGroups)).toMatchObject({ allowed: true, reason: 'predicate' })
    expect(await resolver.check('bob-token', manyGroups)).toMatchObject({ allowed: false, reason: 'predicate' })
    const truthy = where('truthy is not true', () => 1 as unknown as boolean)
    expect(await resolver.check('alice-token', truthy)).toMatchObject({ allowed: false })
    const member = where('member of partial', (ctx) => ctx.isMember('fc:adhoc:partial', 'admin'))
    expect(await resolver.check('bob-token', member)).toMatchObject({ allowed: true })
    expect(upstream.calls.get('/groups/me/groups')).toBe(2)
  })

  it('finds a group in a long me/groups list (indexed) as in a short one', async () => {
    const many = Array.from({ length: 40 }, (_, i) => ({ id: `fc:adhoc:g${i}`, type: 'voot:ad-hoc', membership: { basic: 'member' } }))
    upstream.users.set('many-token', { listed: [...many, { id: 'fc:adhoc:g7', type: 'voot:ad-hoc', membership: { basic: 'owner' } }] })
    expect(await resolver.check('many-token', group('fc:adhoc:g33'))).toMatchObject({ allowed: true })
    // The first listing of an id counts, as in a short list.
    expect(await resolver.check('many-token', group('fc:adhoc:g7', 'member'))).toMatchObject({ allowed: true })
    expect(upstream.total()).toBe(1)
  })

  it('a decision never lists the user’s other groups', async () => {
    const denied = await resolver.check('alice-token', group('fc:adhoc:nope'))
    expect(JSON.stringify(denied)).not.toContain(ORG)
    expect(JSON.stringify(denied)).not.toContain(ADHOC)
  })
})

describe('caching', () => {
  it('100 concurrent cold checks make one upstream call per distinct path', async () => {
    const results = await Promise.all(
      Array.from({ length: 100 }, (_, i) => resolver.check('bob-token', i % 2 === 0 ? group(ORG) : group('fc:adhoc:partial'))),
    )
    expect(results.every((d) => d.allowed)).toBe(true)
    expect(Object.fromEntries(upstream.calls)).toEqual({
      '/groups/me/groups': 1,
      '/groups/me/groups/fc%3Aadhoc%3Apartial': 1,
    })
    expect(resolver.stats().coalesced).toBeGreaterThanOrEqual(98)
  })

  it('a warm token makes no upstream call, and two routes share one me/groups call', async () => {
    await resolver.check('alice-token', group(ORG, 'admin'))
    await resolver.check('alice-token', group(ADHOC))
    const before = upstream.total()
    for (let i = 0; i < 10; i++) await resolver.check('alice-token', group(ORG, 'admin'))
    expect(upstream.total()).toBe(before)
    expect(before).toBe(1)
  })

  it('expires positive answers after ttl', async () => {
    const short = make({ cache: { ttl: 1000 } })
    await short.check('alice-token', group(ORG))
    clock += 999
    await short.check('alice-token', group(ORG))
    expect(upstream.calls.get('/groups/me/groups')).toBe(1)
    clock += 2
    await short.check('alice-token', group(ORG))
    expect(upstream.calls.get('/groups/me/groups')).toBe(2)
  })

  it('caches a 404 for negativeTtl', async () => {
    const path = '/groups/me/groups/fc%3Aadhoc%3Anope'
    await resolver.check('bob-token', group('fc:adhoc:nope'))
    clock += 9_999
    await resolver.check('bob-token', group('fc:adhoc:nope'))
    expect(upstream.calls.get(path)).toBe(1)
    clock += 2
    await resolver.check('bob-token', group('fc:adhoc:nope'))
    expect(upstream.calls.get(path)).toBe(2)
  })

  it('caches a 401 for negativeTtl', async () => {
    await expect(resolver.check('stranger', group(ORG))).rejects.toBeInstanceOf(InvalidTokenError)
    await expect(resolver.check('stranger', group(ADHOC))).rejects.toBeInstanceOf(InvalidTokenError)
    await expect(resolver.membership('stranger', ORG)).rejects.toBeInstanceOf(InvalidTokenError)
    expect(upstream.total()).toBe(1)
    clock += 10_001
    await expect(resolver.check('stranger', group(ORG))).rejects.toBeInstanceOf(InvalidTokenError)
    expect(upstream.total()).toBe(2)
  })

  it.each([
    ['a 500', { status: 500, body: '{"message":"Internal server error"}' }, 'ERR_UPSTREAM_STATUS'],
    // Without Retry-After: with one, the token backs off (test/resolver/upstream/backoff.test.ts).
    ['a 429', { status: 429, body: '' }, 'ERR_UPSTREAM_RATE_LIMITED'],
    ['invalid JSON', { status: 200, body: '[{"id":' }, 'ERR_UPSTREAM_BODY'],
    ['a wrong shape', { status: 200, body: '{"id":"x"}' }, 'ERR_UPSTREAM_BODY'],
  ])('never caches %s', async (_label, reply, code) => {
    upstream.override = () => reply
    await expect(resolver.check('alice-token', group(ORG))).rejects.toMatchObject({ code })
    await expect(resolver.check('alice-token', group(ORG))).rejects.toMatchObject({ code })
    expect(upstream.total()).toBe(2)
    upstream.override = undefined
    expect(await resolver.check('alice-token', group(ORG))).toMatchObject({ allowed: true })
  })

  it('keeps a 429 Retry-After on the error', async () => {
    upstream.override = () => ({ status: 429, body: '', headers: { 'retry-after': '7' } })
    await expect(resolver.check('alice-token', group(ORG))).rejects.toMatchObject({ retryAfter: 7 })
  })

  it('a 403 is an insufficient-scope error, not a denial, and is not cached', async () => {
    upstream.override = () => ({ status: 403, body: '{"message":"This resource requires a personal token"}' })
    await expect(resolver.check('alice-token', group(ORG))).rejects.toBeInstanceOf(InsufficientScopeError)
    await expect(resolver.check('alice-token', group(ORG))).rejects.toBeInstanceOf(InsufficientScopeError)
    expect(upstream.total()).toBe(2)
  })

  it('serves an expired answer within staleIfError when the refresh fails, never beyond', async () => {
    const stale = make({ cache: { ttl: 1000, staleIfError: 5000 } })
    await stale.check('alice-token', group(ORG))
    upstream.override = () => ({ status: 503, body: '' })
    clock += 1000 + 4999
    expect(await stale.check('alice-token', group(ORG))).toMatchObject({ allowed: true })
    expect(stale.stats().staleServed).toBe(1)
    clock += 2
    await expect(stale.check('alice-token', group(ORG))).rejects.toBeInstanceOf(UpstreamError)
  })

  it('never serves stale answers after a 401', async () => {
    const stale = make({ cache: { ttl: 1000, negativeTtl: 1000, staleIfError: 60_000 } })
    await stale.check('alice-token', group(ORG))
    clock += 1001
    upstream.users.delete('alice-token')
    await expect(stale.check('alice-token', group(ORG))).rejects.toBeInstanceOf(InvalidTokenError)
    clock += 1001
    upstream.override = () => ({ status: 500, body: '' })
    await expect(stale.check('alice-token', group(ORG))).rejects.toBeInstanceOf(UpstreamError)
  })

  it('never serves a membership cached before a 401 again, even after negativeTtl', async () => {
    const path = `/groups/me/groups/${encodeURIComponent(ORG)}`
    expect(await resolver.membership('alice-token', ORG)).toMatchObject({ basic: 'admin' })
    upstream.users.delete('alice-token')
    // A lookup that reaches the service learns of the revocation...
    await expect(resolver.membership('alice-token', ADHOC)).rejects.toBeInstanceOf(InvalidTokenError)
    // ...and the membership cached before it is not served while the 401 is remembered,
    await expect(resolver.membership('alice-token', ORG)).rejects.toBeInstanceOf(InvalidTokenError)
    // nor after (negativeTtl 10 s < ttl 60 s): the service is asked again.
    clock += 12_000
    await expect(resolver.membership('alice-token', ORG)).rejects.toBeInstanceOf(InvalidTokenError)
    expect(upstream.calls.get(path)).toBe(2)
  })

  it('two tokens never share an entry', async () => {
    upstream.users.set('alice-token-2', { listed: [] })
    expect(await resolver.check('alice-token', group(ORG, 'admin'))).toMatchObject({ allowed: true })
    expect(await resolver.check('alice-token-2', group(ORG, 'admin'))).toMatchObject({ allowed: false, reason: 'not_member' })
    expect(upstream.calls.get('/groups/me/groups')).toBe(2)
  })

  it('invalidate(token) drops one token, invalidate() drops all', async () => {
    await resolver.check('alice-token', group(ORG))
    await resolver.check('bob-token', group(ORG))
    resolver.invalidate('alice-token')
    await resolver.check('alice-token', group(ORG))
    await resolver.check('bob-token', group(ORG))
    expect(upstream.calls.get('/groups/me/groups')).toBe(3)
    resolver.invalidate()
    await resolver.check('alice-token', group(ORG))
    await resolver.check('bob-token', group(ORG))
    expect(upstream.calls.get('/groups/me/groups')).toBe(5)
  })

  it('an answer that arrives after invalidate() is not stored', async () => {
    const pending = resolver.check('alice-token', group(ORG))
    resolver.invalidate()
    await pending
    await resolver.check('alice-token', group(ORG))
    expect(upstream.calls.get('/groups/me/groups')).toBe(2)
  })

  it('keeps at most cache.max entries', async () => {
    const small = make({ cache: { max: 3 } })
    for (let i = 0; i < 10; i++) {
      upstream.users.set(`t${i}`, { listed: [] })
      await small.groups(`t${i}`)
    }
    expect(small.stats().size).toBe(3)
  })

  it('never caches past the token expiry it is told, and refuses an expired token without a call', async () => {
    await resolver.check('alice-token', group(ORG), { tokenExpiresAt: T0 + 500 })
    clock += 501
    await expect(resolver.check('alice-token', group(ORG), { tokenExpiresAt: T0 + 500 })).rejects.toBeInstanceOf(InvalidTokenError)
    expect(upstream.total()).toBe(1)
  })

  it('a caller that aborts does not reject the other waiters', async () => {
    const controller = new AbortController()
    const first = resolver.groups('alice-token', { signal: controller.signal })
    const second = resolver.groups('alice-token')
    controller.abort()
    await expect(first).rejects.toMatchObject({ code: 'ERR_ABORTED' })
    expect((await second).map((g) => g.id)).toEqual([ORG, ADHOC])
    expect(upstream.total()).toBe(1)
  })

  it('fails fast past maxInflight', async () => {
    const tight = make({ maxInflight: 1 })
    upstream.users.set('other', { listed: [] })
    const first = tight.groups('alice-token')
    await expect(tight.groups('other')).rejects.toMatchObject({ code: 'ERR_UPSTREAM_OVERLOADED' })
    await first
  })

  it('hands out frozen answers so one caller cannot change another’s', async () => {
    const groups = await resolver.groups('alice-token')
    expect(Object.isFrozen(groups)).toBe(true)
    expect(Object.isFrozen(groups[0]?.membership)).toBe(true)
  })
})

describe('checkNow (the synchronous warm path)', () => {
  it('decides at once only from fresh cached answers, never calling upstream then', async () => {
    const requirement = group(ORG, 'admin')
    expect(resolver.checkNow?.('alice-token', requirement)).toBeInstanceOf(Promise) // nothing cached yet
    await resolver.check('alice-token', requirement)
    let calls = upstream.total()
    expect(warmAllowed(resolver, 'alice-token', requirement)).toMatchObject({ allowed: true, reason: 'member' })
    expect(upstream.total()).toBe(calls)
    // A denial needs me/groups/{id}: decided at once only once its 404 is cached.
    const denied = group('fc:adhoc:nope')
    await resolver.check('alice-token', denied)
    calls = upstream.total()
    expect(resolver.checkNow?.('alice-token', denied)).toMatchObject({ allowed: false })
    expect(upstream.total()).toBe(calls)
    // Another token, an expired token and a stale answer take the cold path.
    expect(warmAllowed(resolver, 'other-token', requirement)).toBeUndefined()
    expect(warmAllowed(resolver, 'alice-token', requirement, { tokenExpiresAt: clock })).toBeUndefined()
    clock += 60_001
    expect(resolver.checkNow?.('alice-token', requirement)).toBeInstanceOf(Promise)
  })
  it('also decides from cached me/groups/{id} answers for groups a partial list lacks, never denying', async () => {
    const events: ResolverEvent[] = []
    const observed = make({ onEvent: (e) => events.push(e) })
    const partial = group('fc:adhoc:partial', 'admin')
    const inactive = group(COURSE)
    const either = anyOf(group('fc:adhoc:nope'), partial)
    const both = allOf(group(ORG), partial)
    for (const requirement of [partial, inactive, either, both]) await observed.check('bob-token', requirement)
    const calls = upstream.total()
    const hits = observed.stats().hits
    events.length = 0
    expect(warmAllowed(observed, 'bob-token', partial)).toMatchObject({ allowed: true, reason: 'member', groupId: 'fc:adhoc:partial' })
    expect(warmAllowed(observed, 'bob-token', either)).toMatchObject({ allowed: true })
    expect(warmAllowed(observed, 'bob-token', both)).toMatchObject({ allowed: true })
    // The list and the membership each count as a hit, as on the asynchronous path.
    expect(observed.stats().hits).toBe(hits + 6)
    expect(events.filter((e) => e.type === 'cache_hit' && e.endpoint === 'me/groups/{groupid}')).toHaveLength(3)
    // A cached inactive membership, or a cached 404, proves nothing: `check` decides the denial.
    expect(warmAllowed(observed, 'bob-token', inactive)).toBeUndefined()
    expect(warmAllowed(observed, 'bob-token', group('fc:adhoc:nope'))).toBeUndefined()
    expect(await observed.check('bob-token', inactive)).toMatchObject({ allowed: false })
    expect(upstream.total()).toBe(calls)
    // Past the membership's ttl, or after the token's expiry, nothing is decided here.
    expect(warmAllowed(observed, 'bob-token', partial, { tokenExpiresAt: clock })).toBeUndefined()
    clock += 60_001
    expect(warmAllowed(observed, 'bob-token', partial)).toBeUndefined()
    await observed.close()
  })

  it('never serves a membership cached before a 401 on the warm path', async () => {
    const partial = group('fc:adhoc:partial', 'admin')
    const short = make({ cache: { ttl: 60_000, negativeTtl: 1000 } })
    await short.check('bob-token', partial)
    expect(warmAllowed(short, 'bob-token', partial)).toMatchObject({ allowed: true })
    const bob = upstream.users.get('bob-token')
    upstream.users.delete('bob-token')
    await expect(short.membership('bob-token', 'fc:adhoc:other')).rejects.toBeInstanceOf(InvalidTokenError)
    // The 401 is forgotten after negativeTtl and the service takes the token again: a new
    // list is cached, but the membership cached before the 401 must not prove anything.
    clock += 1001
    if (bob !== undefined) upstream.users.set('bob-token', bob)
    const org = group(ORG)
    await short.check('bob-token', org)
    expect(warmAllowed(short, 'bob-token', org)).toMatchObject({ allowed: true })
    expect(warmAllowed(short, 'bob-token', partial)).toBeUndefined()
    await short.close()
  })
})

describe('events and secrecy', () => {
  it('reports hits, misses, upstream calls and coalescing without the token', async () => {
    const events: ResolverEvent[] = []
    const observed = make({ onEvent: (e) => events.push(e) })
    await Promise.all([observed.check('alice-token', group(ORG)), observed.check('alice-token', group(ORG))])
    await observed.check('alice-token', group(ORG))
    upstream.override = () => ({ status: 500, body: '' })
    await expect(observed.check('bob-token', group(ORG))).rejects.toBeInstanceOf(UpstreamError)
    const types = events.map((e) => e.type)
    expect(types).toEqual(expect.arrayContaining(['cache_miss', 'coalesced', 'upstream_response', 'cache_hit', 'upstream_error']))
    expect(JSON.stringify(events)).not.toMatch(/alice-token|bob-token/)
    expect(observed.stats()).toMatchObject({ upstreamCalls: 2, coalesced: 1 })
  })

  it('an onEvent hook that throws changes nothing', async () => {
    const loud = make({
      onEvent: () => {
        throw new Error('logger down')
      },
    })
    expect(await loud.check('alice-token', group(ORG))).toMatchObject({ allowed: true })
  })

  it('no error carries the token, nor the warning a redirect gives', async () => {
    // The warning is caught here, not printed by process.emitWarning.
    const warnings: string[] = []
    const warned = make({ logger: { warn: (message) => void warnings.push(message) } })
    for (const reply of [{ status: 500 }, { status: 200, body: 'nope' }, { status: 302, headers: { location: 'https://evil.test/' } }]) {
      upstream.override = () => reply
      const error = await warned.check('alice-token', group(ORG)).catch((e: unknown) => e)
      expect(error).toBeInstanceOf(UpstreamError)
      const err = error as Error
      expect(`${err.message} ${err.stack} ${JSON.stringify(err)} ${String(err.cause)}`).not.toContain('alice-token')
    }
    expect(warnings).toEqual([expect.stringContaining('answered with a redirect (302)')])
    expect(warnings.join(' ')).not.toContain('alice-token')
    await warned.close()
  })
})

describe('options', () => {
  it.each([
    [{ cache: { ttl: -1 } }, 'cache.ttl'],
    [{ cache: { max: 0 } }, 'cache.max'],
    [{ cache: { negativeTtl: 1.5 } }, 'cache.negativeTtl'],
    [{ cache: { staleIfError: 'x' } }, 'cache.staleIfError'],
    [{ cache: 'big' }, 'cache'],
    [{ roles: [] }, 'roles'],
    [{ roles: ['a', 'a'] }, 'roles'],
    [{ maxInflight: 0 }, 'maxInflight'],
    [{ now: 5 }, 'now'],
    [{ baseUrl: 'ftp://x/groups' }, 'baseUrl'],
    [{ timeout: 0 }, 'timeout'],
    [{ maxResponseBytes: -5 }, 'maxResponseBytes'],
  ])('rejects %j at creation, naming the option', (bad, name) => {
    expect(() => make(bad as Partial<MembershipResolverOptions>)).toThrow(InvalidOptionError)
    expect(() => make(bad as Partial<MembershipResolverOptions>)).toThrow(name)
  })

  it('needs a baseUrl or a client', () => {
    expect(() => createMembershipResolver({})).toThrow(/baseUrl/)
  })
})
