/**
 * What a decision is: allowed or denied, and why. (Unknown is not a decision: when an answer
 * it depends on failed, `check()` rejects with the failure instead.)
 *
 * @module
 */

/**
 * Why a decision came out as it did.
 *
 * @example
 * ```ts
 * if (decision.reason === 'insufficient_role') console.info('member, but not admin')
 * ```
 */
export type DecisionReason =
  /** Allowed: an active membership with a sufficient role. */
  | 'member'
  /** Allowed: a valid personal token (the `authenticated()` requirement). */
  | 'authenticated'
  /** Allowed: a `where` predicate returned true. */
  | 'predicate'
  /** Denied: `me/groups/{id}` answered 404. */
  | 'not_member'
  /** Denied: the membership is inactive, not yet valid, or expired. */
  | 'inactive'
  /** Denied: the membership's role is below the required one, or not a role the resolver knows. */
  | 'insufficient_role'
  /** Denied: no active membership in a group of the required type. */
  | 'no_group_of_type'
  /** Denied: a `where` predicate did not return true. */
  | 'predicate_false'
  /** Denied: no alternative of an `anyOf` was met. */
  | 'no_alternative'

/**
 * The outcome of a check. A decision is only ever allowed or denied: when the answer is
 * unknown (the group service failed), `check()` rejects with an `UpstreamError` instead.
 * A decision never lists the user's other groups. An allowed `anyOf` is the decision of
 * the alternative that held.
 *
 * @example
 * ```ts
 * const decision = await resolver.check(token, group('fc:org:example.org', 'admin'))
 * if (!decision.allowed) console.info(`denied: ${decision.reason} (${decision.requirement})`)
 * ```
 */
export interface Decision {
  /** Whether the requirement is met. */
  readonly allowed: boolean
  /** Why. */
  readonly reason: DecisionReason
  /** Description of the requirement the decision rests on (for a denial, the one that failed). */
  readonly requirement: string
  /** The group the decision rests on, for group requirements. */
  readonly groupId?: string
}
