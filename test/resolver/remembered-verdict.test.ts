/**
 * Remembered verdicts (issue 41): a warm decision for a token and a requirement decided
 * before reads the verdict kept on the token's `me/groups` entry. These tests show when
 * one is used and everything that ends it, and (as a property) that whatever is used
 * always equals what the rules decide afresh on the same cache: `resolver.explain` always
 * runs the rules, so it is the fresh decision to compare with.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  anyOf,
  allOf,
  createMembershipResolver,
  group,
  groupOfType,
  UpstreamError,
  type Decision,
  type GroupsClient,
  type GroupWithMembership,
  type Membership,
  type MembershipResolver,
  type Requirement,
} from '../../src/index.js'
import { describeRequirement } from '../../src/internal.js'

const T0 = Date.parse('2026-11-28T12:00:00Z')
const TOKEN = 'remembered-token'
const IDS = ['fc:org:a', 'fc:org:b', 'fc:adhoc:c', 'fc:fs:d'] as const

/** The group service's state, changed by the tests while the resolver caches what it said. */
interface Held {
  membership: Membership
  listed: boolean
}

function clientOf(world: Map<string, Held>, calls: { list: number; membership: number }): GroupsClient {
  const unused = (): never => {
    throw new Error('not used by the resolver')
  }
  return {
    baseUrl: 'https://groups.example.org/groups',
    async myGroups() {
      calls.list++
      const listed: GroupWithMembership[] = []
      for (const [id, held] of world)
        if (held.listed) listed.push({ id, displayName: id, type: id.split(':')[1]!, membership: held.membership })
      return listed
    },
    async myMembership(_token, groupId) {
      calls.membership++
      return world.get(groupId)?.membership ?? null
    },
    group: unused,
    members: unused,
    groups: unused,
    groupTypes: unused,
    close: async () => {},
  }
}

function setUp(entries: Record<string, Held>, cache: { ttl?: number; negativeTtl?: number; max?: number } = {}) {
  const world = new Map(Object.entries(entries))
  const calls = { list: 0, membership: 0 }
  const clock = { now: T0 }
  const resolver = createMembershipResolver({ client: clientOf(world, calls), now: () => clock.now, cache: { ttl: 60_000, ...cache } })
  return { world, calls, clock, resolver }
}

/** `checkNow`'s decision when it is given at once (warm), `'cold'` otherwise. */
function now(resolver: MembershipResolver, requirement: Requirement): Decision | 'cold' {
  const decided = resolver.checkNow!(TOKEN, requirement)
  if (decided instanceof Promise) {
    decided.catch(() => undefined)
    return 'cold'
  }
  return decided
}

describe('remembered verdicts', () => {
  it('a warm decision for the same token and requirement is the remembered one, and its hits are still counted', async () => {
    const { resolver } = setUp({ 'fc:org:a': { membership: { basic: 'member' }, listed: true } })
    const admin = group('fc:org:a', 'admin')
    const first = await resolver.check(TOKEN, admin)
    expect(first).toMatchObject({ allowed: false, reason: 'role_too_low' })
    // A denial is a new object each time the rules run: the same object is the remembered one.
    const warm = now(resolver, admin)
    expect(warm).toEqual(first)
    expect(now(resolver, admin)).toBe(warm)
    // Each use counts the answers its decision read, as a fresh one would: me/groups and
    // the membership for the admin's; the list alone for a member's (allowed from it).
    const member = group('fc:org:a')
    const hits = resolver.stats().hits
    now(resolver, admin)
    expect(now(resolver, member)).toMatchObject({ allowed: true })
    now(resolver, member)
    now(resolver, admin)
    expect(resolver.stats().hits - hits).toBe(2 + 1 + 1 + 2)
  })

  it('ends at the next notBefore or notAfter of what it read, and does not cover an instant before it was decided', async () => {
    const { clock, resolver } = setUp({
      'fc:org:a': { membership: { basic: 'admin', notAfter: new Date(T0 + 100).toISOString() }, listed: true },
    })
    const admin = group('fc:org:a', 'admin')
    expect(await resolver.check(TOKEN, admin)).toMatchObject({ allowed: true })
    clock.now = T0 + 99
    expect(now(resolver, admin)).toMatchObject({ allowed: true })
    clock.now = T0 + 100
    // Expired now: the rules run again and need me/groups/{id} to deny (absence is not denial).
    expect(now(resolver, admin)).toBe('cold')
    expect(await resolver.check(TOKEN, admin)).toMatchObject({ allowed: false, reason: 'expired' })
    const expired = now(resolver, admin)
    expect(now(resolver, admin)).toBe(expired)
    clock.now = T0 + 50
    // Before the instant the remembered denial was decided: decided afresh (allowed again).
    expect(now(resolver, admin)).toMatchObject({ allowed: true })
  })

  it('ends when a membership answer of the token is stored, so that a fresh decision that reads it wins', async () => {
    const { world, resolver } = setUp({ 'fc:org:a': { membership: { basic: 'member' }, listed: true } })
    // b is unknown (not listed, not fetched); a allows: the anyOf is settled by a.
    const either = anyOf(group('fc:org:b'), group('fc:org:a'))
    expect(await resolver.check(TOKEN, either)).toMatchObject({ allowed: true, groupId: 'fc:org:a' })
    expect(now(resolver, either)).toMatchObject({ groupId: 'fc:org:a' })
    world.set('fc:org:b', { membership: { basic: 'member' }, listed: false })
    await resolver.membership(TOKEN, 'fc:org:b')
    // The rules now read b first, and b settles it.
    expect(now(resolver, either)).toMatchObject({ allowed: true, groupId: 'fc:org:b' })
    expect((await resolver.explain(TOKEN, either)).decision).toEqual(now(resolver, either))
  })

  it('ends when a membership answer it read is evicted, and with an invalidation', async () => {
    const { world, calls, resolver } = setUp({ 'fc:org:a': { membership: { basic: 'member' }, listed: false } }, { max: 3 })
    const a = group('fc:org:a')
    expect(await resolver.check(TOKEN, a)).toMatchObject({ allowed: true })
    // The first warm decision runs the rules (reading both answers) and keeps its verdict;
    // the second reads the verdict, which leaves the membership the least recently used.
    expect(now(resolver, a)).toMatchObject({ allowed: true })
    expect(now(resolver, a)).toMatchObject({ allowed: true })
    world.delete('fc:org:a')
    // Another token's two answers push the membership out, the least recently used (the
    // warm path reads only the me/groups entry while a verdict holds), and leave the entry.
    await resolver.check('t1', group('fc:org:b'))
    expect(resolver.stats().size).toBe(3)
    expect(now(resolver, a)).toBe('cold')
    expect(await resolver.check(TOKEN, a)).toMatchObject({ allowed: false, reason: 'not_member' })
    const membershipCalls = calls.membership
    world.set('fc:org:a', { membership: { basic: 'member' }, listed: true })
    await resolver.invalidate(TOKEN)
    expect(now(resolver, a)).toBe('cold')
    expect(await resolver.check(TOKEN, a)).toMatchObject({ allowed: true })
    expect(calls.membership).toBe(membershipCalls)
  })

  it('ends with the answers it read: a new me/groups answer is a new entry', async () => {
    const { world, clock, resolver } = setUp({ 'fc:org:a': { membership: { basic: 'member' }, listed: true } }, { ttl: 1000 })
    const a = group('fc:org:a', 'admin')
    const denied = await resolver.check(TOKEN, a)
    expect(now(resolver, a)).toStrictEqual(denied)
    world.set('fc:org:a', { membership: { basic: 'admin' }, listed: true })
    clock.now = T0 + 1000
    expect(now(resolver, a)).toBe('cold')
    expect(await resolver.check(TOKEN, a)).toMatchObject({ allowed: true })
  })

  it('a malformed token is refused on a miss, before anything is looked up or sent', async () => {
    const { calls, resolver } = setUp({ 'fc:org:a': { membership: { basic: 'member' }, listed: true } })
    await expect(resolver.check('not a token', group('fc:org:a'))).rejects.toMatchObject({
      name: 'TokenMalformedError',
      message: 'The bearer token contains characters RFC 6750 does not allow',
    })
    await expect(resolver.check('x'.repeat(4097), group('fc:org:a'))).rejects.toMatchObject({ name: 'TokenMalformedError' })
    expect(calls).toEqual({ list: 0, membership: 0 })
  })
})

// ---- The property: a remembered verdict always equals a fresh one ----

const DATES = [undefined, undefined, -20, -1, 0, 1, 5, 10, 20, 40] as const
const date = fc.constantFrom(...DATES).map((offset) => (offset === undefined ? undefined : new Date(T0 + offset).toISOString()))
const membership = fc
  .record({
    basic: fc.constantFrom('member', 'manager', 'admin', 'owner', 'prospect'),
    active: fc.constantFrom<boolean | undefined>(undefined, undefined, false),
    notBefore: date,
    notAfter: date,
  })
  .map((m) => Object.fromEntries(Object.entries(m).filter(([, value]) => value !== undefined)) as unknown as Membership)
const held = fc.option(fc.record({ membership, listed: fc.boolean() }), { nil: undefined, freq: 3 })

type Step =
  | { kind: 'tick'; ms: number }
  | { kind: 'decide'; requirement: number }
  | { kind: 'fetch'; group: number }
  | { kind: 'invalidate' }
  | { kind: 'change'; group: number; to: Held | undefined }

const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('tick' as const), ms: fc.constantFrom(0, 1, 1, 2, 5, 9, -1, -7) }) },
  { weight: 8, arbitrary: fc.record({ kind: fc.constant('decide' as const), requirement: fc.nat({ max: 7 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('fetch' as const), group: fc.nat({ max: IDS.length - 1 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('invalidate' as const) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('change' as const), group: fc.nat({ max: IDS.length - 1 }), to: held }) },
)

/** Every requirement shape, built once so that verdicts are reused across steps. */
function requirements(): Requirement[] {
  const [a, b, c, d] = IDS
  return [
    group(a),
    group(b, 'admin'),
    groupOfType('org', 'manager'),
    anyOf(group(c), group(a, 'owner')),
    allOf(group(a), group(d)),
    anyOf(allOf(group(b), group(c, 'admin')), groupOfType('fs')),
    allOf(anyOf(group(d, 'admin'), group(b)), group(c)),
    anyOf(group(d), group(c), group(b), group(a)),
  ]
}

type Outcome = Decision | 'unknown'

/** The part of `requirement` (itself, or one inside an anyOf or allOf) described as `text`. */
function partNamed(requirement: Requirement, text: string): Requirement | undefined {
  if (describeRequirement(requirement) === text) return requirement
  const parts = 'requirements' in requirement ? requirement.requirements : []
  for (const part of parts) {
    const found = partNamed(part, text)
    if (found !== undefined) return found
  }
  return undefined
}

async function settle(promise: Promise<Decision>): Promise<Outcome> {
  try {
    return await promise
  } catch (error) {
    expect(error).toBeInstanceOf(UpstreamError)
    return 'unknown'
  }
}

describe('remembered verdicts against fresh decisions (property)', () => {
  it('at every instant around the dates and expiries, across fetches, invalidations and changes upstream', async () => {
    let remembered = 0
    let compared = 0
    let differentPart = 0
    await fc.assert(
      fc.asyncProperty(
        fc.array(held, { minLength: IDS.length, maxLength: IDS.length }),
        fc.array(step, { minLength: 5, maxLength: 40 }),
        async (start, steps) => {
          const entries: Record<string, Held> = {}
          start.forEach((h, i) => {
            if (h !== undefined) entries[IDS[i]!] = h
          })
          // Short lives, so that answers expire among the dates' instants.
          const { world, clock, resolver } = setUp(entries, { ttl: 12, negativeTtl: 4, max: 64 })
          const wanted = requirements()
          const last = new Map<number, Decision>()
          for (const s of steps) {
            switch (s.kind) {
              case 'tick':
                clock.now += s.ms
                break
              case 'fetch':
                await resolver.membership(TOKEN, IDS[s.group]!).catch(() => undefined)
                break
              case 'invalidate':
                await resolver.invalidate(TOKEN)
                break
              case 'change':
                if (s.to === undefined) world.delete(IDS[s.group]!)
                else world.set(IDS[s.group]!, s.to)
                break
              case 'decide': {
                const requirement = wanted[s.requirement]!
                // The fresh decision first (it may fetch what is missing, as check would).
                const fresh: Outcome = await settle(resolver.explain(TOKEN, requirement).then((explained) => explained.decision))
                const decided = resolver.checkNow!(TOKEN, requirement)
                const given: Outcome = decided instanceof Promise ? await settle(decided) : decided
                if (given !== 'unknown' && fresh !== 'unknown' && given.allowed && fresh.allowed && given.groupId !== fresh.groupId) {
                  // Two alternatives of an anyOf hold: the warm path names the first it knows
                  // to hold, and may know more than a fresh decision fetched (an answer cached
                  // by another lookup). Either is true: the one it names holds, decided fresh.
                  const part = partNamed(requirement, given.requirement)
                  expect(part, given.requirement).toBeDefined()
                  const alone = await settle(resolver.explain(TOKEN, part!).then((explained) => explained.decision))
                  expect(alone).toEqual(given)
                  differentPart++
                } else expect(given).toEqual(fresh)
                compared++
                if (given !== 'unknown' && !given.allowed && last.get(s.requirement) === given) remembered++
                if (given !== 'unknown') last.set(s.requirement, given)
                break
              }
            }
          }
        },
      ),
      { numRuns: 300 },
    )
    // Remembered denials were compared (a denial is a new object each time the rules run).
    expect(compared).toBeGreaterThan(1000)
    expect(remembered).toBeGreaterThan(50)
  })
})
