/**
 * The decision rules for one membership: is it active now, and is its role high enough.
 *
 * @module
 */
import type { Group, Membership } from '../types.js'
import type { DenialReason } from './types.js'

/**
 * The default role order, ascending: a higher role satisfies a lower one. Dataporten sends
 * `member`, `admin` and `owner`; OpenConext (SURFconext) also `manager` (between member and
 * admin) and `prospect` (an invitee who is not yet a member), which is deliberately left
 * out: a role not in `roles` satisfies no requirement, not even "any role".
 *
 * @example
 * ```ts
 * createMembershipResolver({ baseUrl, roles: DEFAULT_ROLES })
 * ```
 */
export const DEFAULT_ROLES: readonly string[] = Object.freeze(['member', 'manager', 'admin', 'owner'])

/**
 * Why a membership does or does not satisfy a requirement.
 *
 * @example
 * ```ts
 * const verdict: MembershipVerdict = judgeMembership(m, 'admin', roles, Date.now())
 * ```
 */
export type MembershipVerdict = 'ok' | 'inactive' | 'insufficient_role'

/**
 * Whether a dated object (membership or group) is active at `now` (ms since the epoch):
 * `active !== false`, and `now` inside `notBefore`/`notAfter` when they are present.
 * An unparsable date counts as inactive: a rule we cannot read must not grant access.
 *
 * @example
 * ```ts
 * isActiveAt({ basic: 'member', notAfter: '2020-01-01T00:00:00Z' }, Date.now()) // false
 * ```
 */
export function isActiveAt(dated: Membership | Group, now: number): boolean {
  return activityAt(dated, now) === 'active'
}

/**
 * Whether a membership (or its group) is active at a given moment, or why not.
 *
 * @example
 * ```ts
 * const activity: Activity = 'expired' // the membership's notAfter has passed
 * ```
 */
export type Activity = 'active' | 'inactive' | 'not_yet_valid' | 'expired'

/**
 * Whether a dated object is active at `now`, and if not, why: `inactive` (`active: false`,
 * or a date that cannot be read), `not_yet_valid` (before `notBefore`) or `expired` (at or
 * after `notAfter`).
 */
export function activityAt(dated: Membership | Group, now: number): Activity {
  if (dated.active === false) return 'inactive'
  if (dated.notBefore === undefined && dated.notAfter === undefined) return 'active'
  const { from, until } = validityOf(dated)
  // NaN (an unparsable date) fails every comparison: inactive.
  if (now >= from && now < until) return 'active'
  if (now < from) return 'not_yet_valid'
  return now >= until ? 'expired' : 'inactive'
}

/**
 * The first instant after `at` at which {@link activityAt} of `dated` can change: its
 * `notBefore` or `notAfter` when still ahead; `Infinity` when neither is (an object marked
 * inactive, or a date that cannot be read, stays as it is).
 */
export function nextChangeAfter(dated: Membership | Group, at: number): number {
  if (dated.active === false || (dated.notBefore === undefined && dated.notAfter === undefined)) return Infinity
  const { from, until } = validityOf(dated)
  // NaN fails both comparisons: an unreadable date never changes.
  const next = from > at ? from : Infinity
  return until > at && until < next ? until : next
}

interface Validity {
  /** `notBefore` in ms, `-Infinity` when absent, `NaN` when unparsable. */
  readonly from: number
  /** `notAfter` in ms, `Infinity` when absent, `NaN` when unparsable. */
  readonly until: number
}

// Cached answers are deeply frozen and judged on every request: their dates are parsed
// once, not by `Date.parse` per request. Objects that could still change are not cached.
const validities = new WeakMap<object, Validity>()

function parseDate(value: unknown, absent: number): number {
  if (value === undefined) return absent
  return typeof value === 'string' ? Date.parse(value) : Number.NaN
}

function validityOf(dated: Membership | Group): Validity {
  const known = validities.get(dated)
  if (known !== undefined) return known
  const validity: Validity = { from: parseDate(dated.notBefore, -Infinity), until: parseDate(dated.notAfter, Infinity) }
  if (Object.isFrozen(dated)) validities.set(dated, validity)
  return validity
}

/**
 * Judges a membership against an optional minimum role. Roles compare by their index in
 * `roles`. "Any role" (`role` undefined) means any role IN `roles`: a role the resolver does
 * not know (`prospect`, a misspelling) or a membership without `basic` satisfies nothing,
 * so an invitee or an unreadable membership never passes a check.
 *
 * @param group - the group the membership belongs to, when known: its own dates count too.
 * @example
 * ```ts
 * judgeMembership({ basic: 'owner' }, 'admin', DEFAULT_ROLES, Date.now()) // 'ok'
 * ```
 */
// Public since 0.1.0 with this signature; a fifth, optional parameter rather than a break.
// eslint-disable-next-line max-params
export function judgeMembership(
  membership: Membership,
  role: string | undefined,
  roles: readonly string[],
  now: number,
  group?: Group,
): MembershipVerdict {
  const reason = membershipReason(membership, role, roles, now, group)
  if (reason === 'ok') return 'ok'
  return reason === 'role_too_low' ? 'insufficient_role' : 'inactive'
}

/**
 * {@link judgeMembership} with the reason of a refusal in the decision's words: `ok`, or the
 * {@link DenialReason} (`inactive`, `not_yet_valid`, `expired`, `role_too_low`). The
 * membership's own activity is judged first, then its group's, then the role.
 */
// The same parameters as judgeMembership, whose rule this is.
// eslint-disable-next-line max-params
export function membershipReason(
  membership: Membership,
  role: string | undefined,
  roles: readonly string[],
  now: number,
  group?: Group,
): 'ok' | Exclude<DenialReason, 'not_member' | 'predicate'> {
  const own = activityAt(membership, now)
  if (own !== 'active') return own
  if (group !== undefined) {
    const its = activityAt(group, now)
    if (its !== 'active') return its
  }
  const held = typeof membership.basic === 'string' ? roles.indexOf(membership.basic) : -1
  // "Any role" is the lowest known role. A required role missing from `roles` is a
  // configuration error caught at declaration; should one slip through, it grants nothing.
  const needed = role === undefined ? 0 : roles.indexOf(role)
  return needed >= 0 && held >= needed ? 'ok' : 'role_too_low'
}
