/**
 * Property: on random membership sets, random partial `me/groups` lists, random upstream
 * failures and random requirement trees, `resolver.check` agrees with a small reference
 * model of the decision rules of docs/decisions.md (three outcomes: allowed, denied, unknown), on
 * a cold cache and again on a warm one; and the synchronous warm path never disagrees.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { warmAllowed } from '../support/warm-check.js'
import {
  allOf,
  anyOf,
  createMembershipResolver,
  group,
  groupOfType,
  UpstreamError,
  type Decision,
  type GroupsClient,
  type MembershipResolver,
  type GroupWithMembership,
  type Membership,
  type Requirement,
} from '../../src/index.js'

const NOW = Date.parse('2026-11-21T12:00:00Z')
const DAY = 86_400_000
const ROLES = ['member', 'manager', 'admin', 'owner'] as const
const GROUPS = [
  { id: 'fc:adhoc:g0', type: 'tA' },
  { id: 'fc:adhoc:g1', type: 'tA' },
  { id: 'fc:org:g2', type: 'tB' },
  { id: 'fc:org:g3', type: 'tB' },
  { id: 'fc:fs:g4', type: 'tC' },
] as const

interface Held {
  readonly membership: Membership
  /** Whether me/groups lists it (a partial list leaves some out). */
  readonly listed: boolean
}

interface World {
  /** Per group index, the user's membership or null. */
  readonly held: readonly (Held | null)[]
  readonly listFails: boolean
  /** Per group index, whether me/groups/{id} fails. */
  readonly membershipFails: readonly boolean[]
}

const date = fc.constantFrom<string | undefined>(
  undefined,
  undefined,
  new Date(NOW - 30 * DAY).toISOString(),
  new Date(NOW + 30 * DAY).toISOString(),
  new Date(NOW).toISOString(),
  'not a date',
)

const membership: fc.Arbitrary<Membership> = fc
  .record({
    basic: fc.constantFrom<string | undefined>(...ROLES, 'prospect', 'superhero', undefined),
    active: fc.constantFrom<boolean | undefined>(undefined, true, false),
    notBefore: date,
    notAfter: date,
  })
  .map((m) => Object.fromEntries(Object.entries(m).filter(([, value]) => value !== undefined)) as Membership)

const world: fc.Arbitrary<World> = fc.record({
  held: fc.array(fc.option(fc.record({ membership, listed: fc.boolean() }), { nil: null, freq: 3 }), {
    minLength: GROUPS.length,
    maxLength: GROUPS.length,
  }),
  listFails: fc.constantFrom(false, false, false, false, false, false, true),
  membershipFails: fc.array(fc.constantFrom(false, false, false, false, true), {
    minLength: GROUPS.length,
    maxLength: GROUPS.length,
  }),
})

type Spec =
  | { kind: 'group'; index: number; role: string | undefined }
  | { kind: 'groupOfType'; type: string; role: string | undefined }
  | { kind: 'anyOf' | 'allOf'; parts: Spec[] }

const role = fc.constantFrom<string | undefined>(undefined, ...ROLES)
const { spec } = fc.letrec<{ spec: Spec; leaf: Spec }>((tie) => ({
  leaf: fc.oneof(
    { weight: 3, arbitrary: fc.record({ kind: fc.constant('group' as const), index: fc.nat({ max: GROUPS.length - 1 }), role }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('groupOfType' as const), type: fc.constantFrom('tA', 'tB', 'tC', 'tZ'), role }) },
  ),
  spec: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    tie('leaf'),
    fc.record({ kind: fc.constantFrom('anyOf' as const, 'allOf' as const), parts: fc.array(tie('spec'), { minLength: 1, maxLength: 3 }) }),
  ),
}))

function build(s: Spec): Requirement {
  switch (s.kind) {
    case 'group':
      return group(GROUPS[s.index]!.id, s.role)
    case 'groupOfType':
      return groupOfType(s.type, s.role)
    case 'anyOf':
      return anyOf(...s.parts.map(build))
    case 'allOf':
      return allOf(...s.parts.map(build))
  }
}

// ---- The reference model, written from docs/decisions.md, independent of src/ ----

type Outcome = 'allowed' | 'denied' | 'unknown'

function inWindow(m: Membership): boolean {
  if (m.active === false) return false
  if (m.notBefore !== undefined) {
    const from = Date.parse(m.notBefore)
    if (Number.isNaN(from) || NOW < from) return false
  }
  if (m.notAfter !== undefined) {
    const until = Date.parse(m.notAfter)
    if (Number.isNaN(until) || NOW >= until) return false
  }
  return true
}

function satisfies(m: Membership, required: string | undefined): boolean {
  if (!inWindow(m)) return false
  // "Any role" is any role the resolver knows: an unknown or missing role satisfies nothing.
  const held = ROLES.indexOf(m.basic as never)
  return held >= 0 && (required === undefined || held >= ROLES.indexOf(required as never))
}

function model(s: Spec, w: World): Outcome {
  switch (s.kind) {
    case 'group': {
      if (w.listFails) return 'unknown'
      const held = w.held[s.index]
      // Allowed from the list; denied only by me/groups/{id}.
      if (held?.listed === true && satisfies(held.membership, s.role)) return 'allowed'
      if (w.membershipFails[s.index]) return 'unknown'
      if (held === null || held === undefined) return 'denied'
      return satisfies(held.membership, s.role) ? 'allowed' : 'denied'
    }
    case 'groupOfType': {
      if (w.listFails) return 'unknown'
      return GROUPS.some((g, i) => g.type === s.type && w.held[i]?.listed === true && satisfies(w.held[i]!.membership, s.role))
        ? 'allowed'
        : 'denied'
    }
    case 'anyOf': {
      const outcomes = s.parts.map((part) => model(part, w))
      if (outcomes.includes('allowed')) return 'allowed'
      return outcomes.includes('unknown') ? 'unknown' : 'denied'
    }
    case 'allOf': {
      const outcomes = s.parts.map((part) => model(part, w))
      if (outcomes.includes('denied')) return 'denied'
      return outcomes.includes('unknown') ? 'unknown' : 'allowed'
    }
  }
}

// ---- A groups client that serves the world ----

function clientFor(w: World): GroupsClient {
  const failure = (endpoint: string): UpstreamError =>
    new UpstreamError('ERR_UPSTREAM_STATUS', 'The group service answered with status 500', { endpoint, upstreamStatus: 500 })
  const unused = (): never => {
    throw new Error('not used by the resolver')
  }
  return {
    baseUrl: 'https://groups.example.org/groups',
    async myGroups() {
      if (w.listFails) throw failure('me/groups')
      const listed: GroupWithMembership[] = []
      GROUPS.forEach((g, i) => {
        const held = w.held[i]
        if (held?.listed === true) listed.push({ id: g.id, displayName: g.id, type: g.type, membership: held.membership })
      })
      return listed
    },
    async myMembership(_token, groupId) {
      const index = GROUPS.findIndex((g) => g.id === groupId)
      if (w.membershipFails[index]) throw failure('me/groups/{groupid}')
      return w.held[index]?.membership ?? null
    },
    group: unused,
    members: unused,
    groups: unused,
    groupTypes: unused,
    close: async () => {},
  }
}

/** `checkNow`'s decision when it gives one at once (warm: allowed or denied), `undefined` for the cold path. */
function warmDecision(resolver: MembershipResolver, requirement: Requirement): Decision | undefined {
  const decided = resolver.checkNow!('opaque-token', requirement)
  if (!(decided instanceof Promise)) return decided
  decided.catch(() => undefined)
  return undefined
}

async function outcomeOf(promise: Promise<{ allowed: boolean }>): Promise<Outcome> {
  try {
    return (await promise).allowed ? 'allowed' : 'denied'
  } catch (error) {
    // Unknown is an UpstreamError, never anything else.
    expect(error).toBeInstanceOf(UpstreamError)
    return 'unknown'
  }
}

describe('decisions against a reference model', () => {
  it('agree on random worlds and requirements, cold and warm', async () => {
    const seen = new Set<Outcome>()
    let warmDecided = 0
    await fc.assert(
      fc.asyncProperty(world, spec, async (w, s) => {
        const resolver = createMembershipResolver({ client: clientFor(w), now: () => NOW, cache: { max: 64 } })
        const expected = model(s, w)
        seen.add(expected)
        const requirement = build(s)
        expect(await outcomeOf(resolver.check('opaque-token', requirement))).toBe(expected)
        expect(await outcomeOf(resolver.check('opaque-token', requirement))).toBe(expected)
        // The synchronous warm path (what the adapters try first) never disagrees: it
        // allows only what the model allows, and says nothing otherwise.
        const warm = warmAllowed(resolver, 'opaque-token', requirement)
        if (warm !== undefined) expect(warm.allowed && expected === 'allowed').toBe(true)
        if (warm !== undefined) warmDecided++
      }),
      { numRuns: 400 },
    )
    // The generators reach all three outcomes, and the warm path decides some worlds.
    expect(seen).toEqual(new Set(['allowed', 'denied', 'unknown']))
    expect(warmDecided).toBeGreaterThan(0)
  })

  it('the warm path, whenever it decides (afresh, then from its remembered verdict), deep-equals what check decided on the same cache', async () => {
    let compared = 0
    let denials = 0
    await fc.assert(
      fc.asyncProperty(world, spec, fc.array(spec, { maxLength: 3 }), async (w, s, others) => {
        const resolver = createMembershipResolver({ client: clientFor(w), now: () => NOW, cache: { max: 64 } })
        // Other requirements first, so that the cache holds a random mix of answers.
        for (const other of others) await resolver.check('opaque-token', build(other)).catch(() => undefined)
        const requirement = build(s)
        const cold = await resolver.check('opaque-token', requirement).catch(() => undefined)
        // The first warm decision runs the rules; the second reads the verdict the first kept.
        const warm = warmDecision(resolver, requirement)
        if (warm === undefined) return
        const remembered = warmDecision(resolver, requirement)
        compared++
        if (!warm.allowed) denials++
        expect(warm).toEqual(cold)
        expect(remembered).toEqual(warm)
        expect(await resolver.check('opaque-token', requirement)).toEqual(warm)
      }),
      { numRuns: 300 },
    )
    expect(compared).toBeGreaterThan(0)
    expect(denials).toBeGreaterThan(0)
  })

  it('a partial me/groups never turns an allowed decision into a denial', async () => {
    await fc.assert(
      fc.asyncProperty(world, spec, async (w, s) => {
        const complete: World = { ...w, listFails: false, held: w.held.map((h) => (h === null ? null : { ...h, listed: true })) }
        const partial: World = {
          ...complete,
          held: w.held.map((h, i) => (h === null ? null : { ...h, listed: complete.held[i]!.listed && h.listed })),
        }
        const fromComplete = await outcomeOf(
          createMembershipResolver({ client: clientFor(complete), now: () => NOW, cache: { max: 64 } }).check('t', build(s)),
        )
        const fromPartial = await outcomeOf(
          createMembershipResolver({ client: clientFor(partial), now: () => NOW, cache: { max: 64 } }).check('t', build(s)),
        )
        // groupOfType can only look at the list: that is the one documented exception.
        const usesType = JSON.stringify(s).includes('groupOfType')
        if (fromComplete === 'allowed' && !usesType) expect(fromPartial).not.toBe('denied')
        if (fromComplete === 'denied') expect(fromPartial).not.toBe('allowed')
      }),
      { numRuns: 200 },
    )
  })
})
