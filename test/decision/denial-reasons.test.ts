/**
 * The reason a denial carries, from the one engine (`evaluate`) on known answers: one of
 * `not_member`, `role_too_low`, `inactive`, `not_yet_valid`, `expired`, `predicate`; for a
 * requirement of several parts, the one closest to being met, whatever the order.
 */
import { describe, expect, it } from 'vitest'
import { evaluate, Needs, UNKNOWN, type DecisionView } from '../../src/decision/evaluate.js'
import { indexGroups } from '../../src/decision/groups-index.js'
import { activityAt, judgeMembership } from '../../src/decision/membership.js'
import {
  allOf,
  anyOf,
  DEFAULT_ROLES,
  group,
  groupOfType,
  where,
  type Decision,
  type GroupWithMembership,
  type Membership,
  type Requirement,
} from '../../src/index.js'

const NOW = Date.parse('2026-11-21T12:00:00Z')
const PAST = '2026-01-01T00:00:00Z'
const FUTURE = '2027-01-01T00:00:00Z'

/** A view of known answers: the list, and `me/groups/{id}` for every group in `memberships` (404 for the others). */
function view(listed: readonly GroupWithMembership[], memberships: Record<string, Membership> = {}, predicate = false): DecisionView {
  const list = indexGroups(listed)
  return {
    now: NOW,
    roles: DEFAULT_ROLES,
    list: () => list,
    membership: (groupId) => memberships[groupId] ?? null,
    predicate: () => predicate,
  }
}

function decide(requirement: Requirement, known: DecisionView): Decision {
  const result = evaluate(requirement, known)
  if (!('allowed' in result)) throw new Error('not decided')
  return result
}

const listedAs = (
  id: string,
  membership: Membership,
  type = 'voot:ad-hoc',
  dates: Partial<GroupWithMembership> = {},
): GroupWithMembership => ({
  id,
  displayName: id,
  type,
  membership,
  ...dates,
})

describe('a group requirement', () => {
  it.each([
    ['a 404', undefined, 'not_member'],
    ['a lower role', { basic: 'member' }, 'role_too_low'],
    ['a role the resolver does not know', { basic: 'prospect' }, 'role_too_low'],
    ['no role at all', {}, 'role_too_low'],
    ['active: false', { basic: 'owner', active: false }, 'inactive'],
    ['a date that cannot be read', { basic: 'owner', notAfter: 'soon' }, 'inactive'],
    ['a notBefore ahead', { basic: 'owner', notBefore: FUTURE }, 'not_yet_valid'],
    ['a notAfter passed', { basic: 'owner', notAfter: PAST }, 'expired'],
    ['a notAfter of now', { basic: 'owner', notAfter: new Date(NOW).toISOString() }, 'expired'],
  ] as const)('denied for %s: %s', (_label, membership, reason) => {
    const known = view([], membership === undefined ? {} : { 'fc:adhoc:1': membership })
    expect(decide(group('fc:adhoc:1', 'admin'), known)).toEqual({
      allowed: false,
      reason,
      requirement: 'group fc:adhoc:1 (role admin or higher)',
      groupId: 'fc:adhoc:1',
    })
  })

  it("judges the group's own dates too, after the membership's", () => {
    const listed = listedAs('fc:adhoc:1', { basic: 'owner' }, 'voot:ad-hoc', { notAfter: PAST })
    expect(decide(group('fc:adhoc:1'), view([listed], { 'fc:adhoc:1': { basic: 'owner' } })).reason).toBe('expired')
    const early = listedAs('fc:adhoc:1', { basic: 'owner', active: false }, 'voot:ad-hoc', { notBefore: FUTURE })
    expect(decide(group('fc:adhoc:1'), view([early], { 'fc:adhoc:1': { basic: 'owner', active: false } })).reason).toBe('inactive')
  })

  it('keeps judgeMembership and its verdicts as they were (public since 0.1.0)', () => {
    expect(judgeMembership({ basic: 'member' }, 'admin', DEFAULT_ROLES, NOW)).toBe('insufficient_role')
    expect(judgeMembership({ basic: 'owner', notAfter: PAST }, 'admin', DEFAULT_ROLES, NOW)).toBe('inactive')
    expect(judgeMembership({ basic: 'owner', notBefore: FUTURE }, 'admin', DEFAULT_ROLES, NOW)).toBe('inactive')
    expect(judgeMembership({ basic: 'owner' }, 'admin', DEFAULT_ROLES, NOW)).toBe('ok')
    expect(activityAt({ basic: 'owner', notBefore: 'x' }, NOW)).toBe('inactive')
  })
})

describe('a groupOfType requirement', () => {
  it('is not_member when me/groups lists no group of the type', () => {
    const known = view([listedAs('fc:org:x', { basic: 'owner' }, 'fc:org')])
    expect(decide(groupOfType('fc:fs:emne'), known)).toEqual({
      allowed: false,
      reason: 'not_member',
      requirement: 'a group of type fc:fs:emne',
    })
  })

  it('names the closest of the groups of the type, in any order', () => {
    const expired = listedAs('fc:fs:a', { basic: 'admin', notAfter: PAST }, 'fc:fs:emne')
    const low = listedAs('fc:fs:b', { basic: 'member' }, 'fc:fs:emne')
    const inactive = listedAs('fc:fs:c', { basic: 'admin', active: false }, 'fc:fs:emne')
    const requirement = groupOfType('fc:fs:emne', 'admin')
    expect(decide(requirement, view([expired, low, inactive])).reason).toBe('role_too_low')
    expect(decide(requirement, view([inactive, low, expired])).reason).toBe('role_too_low')
    expect(decide(requirement, view([inactive, expired])).reason).toBe('expired')
    expect(decide(requirement, view([expired, inactive])).reason).toBe('expired')
  })
})

describe('a where requirement', () => {
  it('is allowed and denied with the reason predicate', () => {
    const custom = where('teaches a course', () => true)
    expect(decide(custom, view([], {}, true))).toEqual({ allowed: true, reason: 'predicate', requirement: 'teaches a course' })
    expect(decide(custom, view([], {}, false))).toEqual({ allowed: false, reason: 'predicate', requirement: 'teaches a course' })
  })
})

describe('anyOf and allOf', () => {
  const low = { 'fc:adhoc:low': { basic: 'member' } }
  const future = { 'fc:adhoc:future': { basic: 'owner', notBefore: FUTURE } }

  it('a denied anyOf names its own requirement and the alternative closest to being met, in any order', () => {
    const parts = [
      group('fc:adhoc:none', 'admin'),
      group('fc:adhoc:low', 'admin'),
      group('fc:adhoc:future', 'admin'),
      where('p', () => false),
    ]
    const known = view([], { ...low, ...future })
    for (const order of [parts, [...parts].reverse(), [parts[2]!, parts[0]!, parts[3]!, parts[1]!]]) {
      const requirement = anyOf(...order)
      const decision = decide(requirement, known)
      expect(decision).toMatchObject({ allowed: false, reason: 'role_too_low' })
      expect(decision.groupId).toBeUndefined()
    }
    expect(
      decide(
        anyOf(
          group('fc:adhoc:none'),
          where('p', () => false),
        ),
        known,
      ).reason,
    ).toBe('predicate')
    expect(decide(anyOf(group('fc:adhoc:none'), group('fc:adhoc:future')), known).reason).toBe('not_yet_valid')
    expect(decide(anyOf(group('fc:adhoc:none'), group('fc:adhoc:other')), known).reason).toBe('not_member')
  })

  it('a denied allOf is the decision of the first part that failed', () => {
    const known = view([listedAs('fc:adhoc:ok', { basic: 'owner' })], { ...low, ...future })
    const decision = decide(allOf(group('fc:adhoc:ok'), group('fc:adhoc:future'), group('fc:adhoc:low', 'admin')), known)
    expect(decision).toEqual({ allowed: false, reason: 'not_yet_valid', requirement: 'group fc:adhoc:future', groupId: 'fc:adhoc:future' })
  })

  it('nothing is decided while an answer a part needs is missing', () => {
    const known: DecisionView = { ...view([]), membership: () => UNKNOWN }
    expect(evaluate(anyOf(group('fc:adhoc:a'), group('fc:adhoc:b')), known)).toBeInstanceOf(Needs)
  })
})
