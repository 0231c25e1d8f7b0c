/**
 * Answers that must never let a request through, on the cold path (`check`) and the warm
 * path (`checkCached`) alike: unreadable group-level validity, a 200 whose body is not an
 * object, and roles the resolver does not know (OpenConext's `prospect`, a missing `basic`).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { warmAllowed } from '../support/warm-check.js'
import {
  anyOf,
  createMembershipResolver,
  group,
  groupOfType,
  UpstreamError,
  type MembershipResolver,
  type Requirement,
} from '../../src/index.js'
import { createMockUpstream, BASE_URL, type MockUpstream } from '../support/mock-upstream.js'

const T0 = Date.parse('2026-11-21T12:00:00Z')
let upstream: MockUpstream
let resolver: MembershipResolver

beforeEach(() => {
  upstream = createMockUpstream()
  resolver = createMembershipResolver({ baseUrl: BASE_URL, dispatcher: upstream.agent, now: () => T0 })
})
afterEach(async () => {
  await resolver.close()
  await upstream.close()
})

/** The decision of `check`, then of the warm path on what `check` cached (`undefined`: the warm path could not tell). */
async function coldThenWarm(token: string, requirement: Requirement) {
  const cold = await resolver.check(token, requirement)
  const warm = warmAllowed(resolver, token, requirement)
  return { cold, warm }
}

describe("group-level validity fails closed, as a membership's does", () => {
  it.each([
    ['a numeric notAfter', { notAfter: 1577836800000 }],
    ['an unparsable notBefore', { notBefore: 'next week' }],
    ['active "false" as a string', { active: 'false' }],
    ['active null', { active: null }],
  ])('a listed group with %s is inactive', async (_label, fields) => {
    upstream.override = (path) => {
      const body = path.endsWith('/me/groups')
        ? [{ id: 'fc:org:example.org', displayName: 'Org', type: 'fc:org', membership: { basic: 'admin' }, ...fields }]
        : { basic: 'admin' }
      return { status: 200, body: JSON.stringify(body) }
    }
    const { cold, warm } = await coldThenWarm('t', group('fc:org:example.org'))
    expect(cold).toMatchObject({ allowed: false, reason: 'inactive' })
    expect(warm).toBeUndefined()
    expect((await resolver.check('t', groupOfType('fc:org'))).allowed).toBe(false)
  })

  it('a null bound is no bound', async () => {
    upstream.override = () => ({
      status: 200,
      body: JSON.stringify([{ id: 'g', membership: { basic: 'member', notAfter: null }, notBefore: null }]),
    })
    const { cold, warm } = await coldThenWarm('t', group('g'))
    expect(cold).toMatchObject({ allowed: true })
    expect(warm).toEqual(cold)
  })
})

describe('a 200 whose body is not an object is a failure, never "not a member"', () => {
  it.each([['null'], ['[]'], ['"member"'], ['42']])('me/groups/{id} answering 200 with %s is a 503 and is not cached', async (body) => {
    upstream.override = (path) => (path.endsWith('/me/groups') ? { status: 200, body: '[]' } : { status: 200, body })
    const failure = await resolver.check('t', group('fc:org:example.org')).catch((error: unknown) => error)
    expect(failure).toBeInstanceOf(UpstreamError)
    expect((failure as UpstreamError).status).toBe(503)
    expect((failure as UpstreamError).code).toBe('ERR_UPSTREAM_BODY')
    // Not cached: the next check asks again.
    const before = upstream.total()
    await resolver.check('t', group('fc:org:example.org')).catch(() => undefined)
    expect(upstream.total()).toBeGreaterThan(before)
  })

  it('groups/{id} answering 200 with null is a failure, not "no such group"', async () => {
    upstream.override = () => ({ status: 200, body: 'null' })
    await expect(resolver.client.group('fc:org:example.org')).rejects.toMatchObject({ code: 'ERR_UPSTREAM_BODY' })
  })

  it('a 404 is still "not a member"', async () => {
    upstream.override = (path) => (path.endsWith('/me/groups') ? { status: 200, body: '[]' } : { status: 404, body: '{}' })
    expect(await resolver.check('t', group('g'))).toMatchObject({ allowed: false, reason: 'not_member' })
  })
})

describe('roles: "any role" means any role in `roles`', () => {
  /** me/groups lists `listed`; me/groups/{id} answers the same membership for each id. */
  function serve(memberships: Record<string, unknown>, listed: boolean): void {
    upstream.override = (path) => {
      if (path.endsWith('/me/groups')) {
        const list = listed ? Object.entries(memberships).map(([id, membership]) => ({ id, type: 'voot:ad-hoc', membership })) : []
        return { status: 200, body: JSON.stringify(list) }
      }
      const id = decodeURIComponent(path.slice(path.lastIndexOf('/') + 1))
      const membership = memberships[id]
      return membership === undefined ? { status: 404, body: '{}' } : { status: 200, body: JSON.stringify({ id, membership }) }
    }
  }

  for (const listed of [true, false]) {
    const where = listed ? 'listed in me/groups' : 'only in me/groups/{id}'

    it(`a prospect satisfies no requirement (${where})`, async () => {
      serve({ p: { basic: 'prospect' }, q: 'prospect' }, listed)
      for (const requirement of [group('p'), group('p', 'member'), group('q'), anyOf(group('p'), group('q')), groupOfType('voot:ad-hoc')]) {
        const { cold, warm } = await coldThenWarm('t', requirement)
        expect(cold.allowed, cold.requirement).toBe(false)
        expect(warm).toBeUndefined()
      }
    })

    it(`a membership without a basic role satisfies nothing (${where})`, async () => {
      serve({ n: {}, e: { active: true } }, listed)
      for (const requirement of [group('n'), group('e'), group('n', 'member')]) {
        const { cold, warm } = await coldThenWarm('t', requirement)
        expect(cold).toMatchObject({ allowed: false, reason: 'role_too_low' })
        expect(warm).toBeUndefined()
      }
    })

    it(`a manager sits between member and admin (${where})`, async () => {
      serve({ m: { basic: 'manager' }, s: 'manager' }, listed)
      for (const id of ['m', 's']) {
        for (const role of [undefined, 'member', 'manager']) {
          const { cold, warm } = await coldThenWarm('t', group(id, role))
          expect(cold, `${id} ${role}`).toMatchObject({ allowed: true, reason: 'member', groupId: id })
          expect(warm).toEqual(cold)
        }
        expect((await resolver.check('t', group(id, 'admin'))).allowed).toBe(false)
      }
    })

    it(`a plain role string decides as { basic } does (${where})`, async () => {
      serve({ a: 'admin', b: { basic: 'admin' } }, listed)
      for (const role of [undefined, 'member', 'manager', 'admin', 'owner']) {
        const a = await resolver.check('t', group('a', role))
        const b = await resolver.check('t', group('b', role))
        expect({ ...a, requirement: '', groupId: '' }).toEqual({ ...b, requirement: '', groupId: '' })
      }
    })
  }
})
