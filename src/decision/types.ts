/**
 * What a decision is: allowed or denied, and why. (Unknown is not a decision: when an answer
 * it depends on failed, `check()` rejects with the failure instead.)
 *
 * @module
 */

/**
 * Why a requirement was not met: the code a denial carries on the {@link Decision}, the
 * `ForbiddenError`, the `voot-guard:authorize` context and the OpenTelemetry attribute
 * `voot_guard.reason`. It names what the user lacks in one word, never a group of theirs.
 *
 * For a requirement of several parts the reason is the one closest to being met, in this
 * order: `role_too_low`, `not_yet_valid`, `expired`, `inactive`, `predicate`, `not_member`.
 *
 * @example
 * ```ts
 * if (!decision.allowed && decision.reason === 'role_too_low') console.info('member, but not admin')
 * ```
 */
export type DenialReason =
  /** No membership: `me/groups/{id}` answered 404, or no group of the required type is listed. */
  | 'not_member'
  /** A membership whose role is below the required one, or not a role the resolver knows. */
  | 'role_too_low'
  /** A membership (or its group) marked `active: false`, or with a date that cannot be read. */
  | 'inactive'
  /** A membership (or its group) whose `notBefore` is still ahead. */
  | 'not_yet_valid'
  /** A membership (or its group) whose `notAfter` has passed. */
  | 'expired'
  /** A `where` predicate did not return true. */
  | 'predicate'
  /**
   * Every part of the requirement is on another group service than the token's (with
   * `createServiceResolvers`): the token was not sent anywhere to find out.
   */
  | 'other_service'

/**
 * Why a requirement was met.
 *
 * @example
 * ```ts
 * const reason: AllowedReason = 'member'
 * ```
 */
export type AllowedReason =
  /** An active membership with a sufficient role. */
  | 'member'
  /** A valid personal token (the `authenticated()` requirement). */
  | 'authenticated'
  /** A `where` predicate returned true. */
  | 'predicate'

/**
 * Why a decision came out as it did: an {@link AllowedReason} when allowed, a
 * {@link DenialReason} when denied (`predicate` is both: the predicate settled it).
 *
 * @example
 * ```ts
 * if (decision.reason === 'role_too_low') console.info('member, but not admin')
 * ```
 */
export type DecisionReason = AllowedReason | DenialReason

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
  /** Why: an {@link AllowedReason} when allowed, a {@link DenialReason} when denied. */
  readonly reason: DecisionReason
  /**
   * Description of the requirement the decision rests on (for a denial, the one that failed).
   * When several alternatives of an `anyOf` hold, it names one that holds: the first the
   * decision found, which may depend on the answers already cached.
   */
  readonly requirement: string
  /** The group the decision rests on, for group requirements (with an `anyOf`, see {@link Decision.requirement}). */
  readonly groupId?: string
}
