/**
 * The data model of a VOOT group service, as parsed by the groups client.
 *
 * Parsing is tolerant (real services differ, see `spec/real-service-behaviour.md`):
 * unknown fields are kept, `displayName` may be a translatable object, and a membership
 * sent as a bare role string becomes `{ basic: role }`.
 *
 * @module
 */

/**
 * A human-readable text: a plain string, or an object of language tags to strings
 * (`{ "nb": "Ansatt", "en": "Employee" }`).
 *
 * @example
 * ```ts
 * const name: Translatable = { en: 'Employee', nb: 'Ansatt' }
 * ```
 */
export type Translatable = string | Readonly<Record<string, string>>

/**
 * One user's membership of one group.
 *
 * Beware: on `fc:org` (organisation) groups `basic: "admin"` means *employee*, and on
 * school groups it means *teacher*; it does not mean administrator of anything.
 *
 * @example
 * ```ts
 * const m: Membership = { basic: 'admin', active: true, notAfter: '2027-06-30T00:00:00Z' }
 * ```
 */
export interface Membership {
  /**
   * The basic role: `member`, `admin`, `owner` (Dataporten); `prospect`, `member`, `manager`,
   * `admin`, `owner` (OpenConext). A role not in the resolver's `roles` (such as `prospect`,
   * an invitee) or a missing one satisfies no requirement at all.
   */
  readonly basic?: string
  /** Human-readable name of the role. */
  readonly displayName?: Translatable
  /** `false` marks a passive or expired membership (listed only with `showAll`). */
  readonly active?: boolean
  /** ISO timestamp before which the membership is not active. */
  readonly notBefore?: string
  /** ISO timestamp from which the membership is no longer active. */
  readonly notAfter?: string
  /** Further attributes per group type (`affiliation`, `title`, `fsroles`, ...). */
  readonly [attribute: string]: unknown
}

/**
 * A group, as listed by `me/groups`, `groups` and `groups/{groupid}`.
 *
 * @example
 * ```ts
 * const g: Group = { id: 'fc:org:example.org', displayName: 'Example University', type: 'fc:org' }
 * ```
 */
export interface Group {
  /** Opaque identifier; may contain colons and percent signs. */
  readonly id: string
  /** Human-readable name. */
  readonly displayName: Translatable
  /** Free-text description. */
  readonly description?: Translatable
  /** Group type identifier, such as `fc:org` or `voot:ad-hoc`. */
  readonly type?: string
  /** The current user's membership (on `me/groups` answers). */
  readonly membership?: Membership
  /** `false` marks a group that is no longer active (any other non-boolean value is read as `false`). */
  readonly active?: boolean
  /** Present on some groups: ISO timestamp before which the group is not active. */
  readonly notBefore?: string
  /** Present on some groups: ISO timestamp from which the group is no longer active. */
  readonly notAfter?: string
  /** Further attributes per group type. */
  readonly [attribute: string]: unknown
}

/**
 * A group that carries the current user's membership, as `me/groups` lists it.
 *
 * @example
 * ```ts
 * const mine: GroupWithMembership[] = await resolver.groups(token)
 * ```
 */
export interface GroupWithMembership extends Group {
  readonly membership: Membership
}

/**
 * One entry of `groups/{groupid}/members`. Carries no user identifier by design.
 *
 * @example
 * ```ts
 * const e: MemberEntry = { name: 'Alice Admin', membership: { basic: 'admin' } }
 * ```
 */
export interface MemberEntry {
  /** Display name of the member. */
  readonly name: string
  /** The member's membership of the group. */
  readonly membership: Membership
  readonly [attribute: string]: unknown
}

/**
 * A group type, as listed by `grouptypes`.
 *
 * @example
 * ```ts
 * const t: GroupType = { id: 'fc:org', displayName: { en: 'Organisation' } }
 * ```
 */
export interface GroupType {
  readonly id: string
  readonly displayName: Translatable
  readonly [attribute: string]: unknown
}
