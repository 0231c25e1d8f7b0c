/**
 * What a caller may see: which memberships count as active at a given time, which of a
 * user's memberships a token's scopes reveal, and which groups a caller may look at.
 *
 * Scopes follow the real service: `groups` reveals every group. Newer deployments split it
 * into `groups-org` (organisation and units), `groups-edu` (courses, programmes, school
 * groups) and `groups-other` (ad-hoc and the rest); a missing one silently hides those
 * groups (from `me/groups`, and `me/groups/{id}` answers 404 for them).
 *
 * @module
 */
import type { Membership } from '../../src/index.js'
import type { EmulatorData, EmulatorGroup, EmulatorUser } from '../data/data.js'
import type { TokenRecord } from '../token-store.js'

/**
 * A membership together with its group.
 */
export interface OwnMembership {
  readonly group: EmulatorGroup
  /** As the data has it: an object, or a plain role string. */
  readonly membership: Membership | string
}

const ORG_TYPES = new Set(['fc:org', 'fc:orgunit'])
const EDU_TYPE = /^fc:(?:fs:|gogroup$|grep$)/

/**
 * Whether a membership is active at `now`: `active !== false`, and `now` inside the
 * `notBefore`/`notAfter` of both the membership and its group. A plain role string has
 * no dates of its own.
 */
export function isActiveMembership(membership: Membership | string, group: EmulatorGroup, now: number): boolean {
  if (typeof membership === 'string') return insideDates(group, now)
  if (membership.active === false) return false
  return insideDates(membership, now) && insideDates(group, now)
}

/**
 * The memberships of the token's user that the token's scopes reveal, in data order;
 * empty for a client-only token. Whether the token may call `me/*` at all is
 * {@link meAccess}'s question.
 */
export function ownMemberships(data: EmulatorData, record: TokenRecord): OwnMembership[] {
  const user = record.userId === undefined ? undefined : data.users.find((candidate) => candidate.id === record.userId)
  if (user === undefined) return []
  const reveals = scopeFilter(record.scopes)
  return userMemberships(data, user).filter((entry) => reveals(entry.group))
}

/**
 * Every membership of a user with its group, in data order, whatever a token's scopes
 * (what a client-credentials route that names the user sees).
 */
export function userMemberships(data: EmulatorData, user: EmulatorUser): OwnMembership[] {
  const groups = new Map(data.groups.map((group) => [group.id, group]))
  const result: OwnMembership[] = []
  for (const entry of user.memberships) {
    const group = groups.get(entry.groupId)
    // A test may have edited emulator.data into an inconsistent state; skip, don't crash.
    if (group === undefined) continue
    result.push({ group, membership: entry.membership })
  }
  return result
}

/**
 * Whether a token may call `me/*`: `'personal-token-required'` for a client-only token,
 * `'scope-required'` for a personal token without any groups scope, else `'ok'`.
 */
export function meAccess(record: TokenRecord): 'ok' | 'personal-token-required' | 'scope-required' {
  if (record.userId === undefined) return 'personal-token-required'
  return record.scopes.some(isGroupsScope) ? 'ok' : 'scope-required'
}

function isGroupsScope(scope: string): boolean {
  return scope === 'groups' || scope === 'groups-org' || scope === 'groups-edu' || scope === 'groups-other'
}

function scopeFilter(scopes: readonly string[]): (group: EmulatorGroup) => boolean {
  if (scopes.includes('groups')) return () => true
  const org = scopes.includes('groups-org')
  const edu = scopes.includes('groups-edu')
  const other = scopes.includes('groups-other')
  return (group) => {
    const type = group.type ?? ''
    if (ORG_TYPES.has(type)) return org
    if (EDU_TYPE.test(type)) return edu
    return other
  }
}

function insideDates(value: { notBefore?: unknown; notAfter?: unknown }, now: number): boolean {
  if (typeof value.notBefore === 'string' && now < Date.parse(value.notBefore)) return false
  if (typeof value.notAfter === 'string' && now >= Date.parse(value.notAfter)) return false
  return true
}
