/**
 * The resolver's check of a token read in place: inside a longer string (an
 * `Authorization` header), from an offset to its end. Not public: the guard finds it for a
 * resolver made by `createMembershipResolver` (once, when the guard is created) and falls
 * back to `checkNow` for any other.
 *
 * Why: a warm decision's dearest step is the token's digest, and inside a server reading
 * the token through a slice of the header cost more than the hash's rounds (BENCHMARKS.md,
 * issue 41). Read in place, the digest sees the header's own characters; the token is
 * sliced out only for what needs it as a string (a miss's lookups, the request's context).
 *
 * @module
 */
import type { Decision } from '../decision/types.js'
import type { Requirement } from '../decision/requirements.js'
import type { ResolveOptions } from './lookups.js'
import type { MembershipResolver } from './types.js'

/**
 * `checkNow` for the token that starts at `from` in `source` and runs to its end: the same
 * decision as `checkNow(source.slice(from), requirement, options)`, its characters checked
 * on a miss only, as `checkNow` checks them.
 */
export type CheckAt = (
  source: string,
  from: number,
  requirement: Requirement,
  options: ResolveOptions | undefined,
) => Decision | Promise<Decision>

const checks = new WeakMap<MembershipResolver, CheckAt>()

/** Makes `check` the {@link CheckAt} of `resolver` (by `createMembershipResolver`, for its own resolvers). */
export function registerCheckAt(resolver: MembershipResolver, check: CheckAt): void {
  checks.set(resolver, check)
}

/** The {@link CheckAt} of a resolver made by `createMembershipResolver`; `undefined` for any other. */
export function checkAtOf(resolver: MembershipResolver): CheckAt | undefined {
  return checks.get(resolver)
}
