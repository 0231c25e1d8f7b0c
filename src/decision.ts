/**
 * Decisions: what a requirement comes to for one user, and why.
 *
 * The rule that shapes this module is **absence is not denial**: `me/groups` can be
 * partial (a backend of the group service timed out, and it still answered 200), so a
 * group missing from it proves nothing. A group requirement may be *allowed* from the
 * list, but it is *denied* only after `me/groups/{id}` answered 404 or a membership that
 * fails the role or active test.
 *
 * @module
 */
import { judgeMembership } from './membership.js'
import { describeRequirement, type Requirement, type RequirementContext } from './requirements.js'
import type { GroupWithMembership, Membership } from './types.js'

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
  /** Denied: the membership's role is below the required one (or unknown). */
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
 * A decision never lists the user's other groups.
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

/**
 * The user's `me/groups` answer, with an index by group id for long lists (a short list is
 * searched directly: a Map per cached list would cost more memory than it saves time).
 *
 * @example
 * ```ts
 * const index: GroupsIndex = indexGroups(await client.myGroups(token))
 * ```
 */
export interface GroupsIndex {
  readonly list: readonly GroupWithMembership[]
  readonly byId: ReadonlyMap<string, GroupWithMembership> | undefined
}

/** Lists longer than this get a Map index. */
const INDEX_FROM = 16

/**
 * Builds a {@link GroupsIndex}; the first entry wins when an id is listed twice.
 *
 * @example
 * ```ts
 * const index = indexGroups(await client.myGroups(token))
 * findListed(index, 'fc:org:example.org')?.membership
 * ```
 */
export function indexGroups(list: readonly GroupWithMembership[]): GroupsIndex {
  if (list.length <= INDEX_FROM) return { list, byId: undefined }
  const byId = new Map<string, GroupWithMembership>()
  for (const g of list) if (!byId.has(g.id)) byId.set(g.id, g)
  return { list, byId }
}

/**
 * The listed group with id `groupId`, if any.
 *
 * @example
 * ```ts
 * const listed = findListed(index, 'fc:org:example.org')
 * ```
 */
export function findListed(index: GroupsIndex, groupId: string): GroupWithMembership | undefined {
  if (index.byId !== undefined) return index.byId.get(groupId)
  for (const g of index.list) if (g.id === groupId) return g
  return undefined
}

/**
 * The cached lookups a decision may need, bound to one token by the resolver.
 *
 * @example
 * ```ts
 * const decision = await decide(requirement, lookups)
 * ```
 */
export interface DecisionLookups {
  readonly now: number
  readonly roles: readonly string[]
  groups(): Promise<GroupsIndex>
  membership(groupId: string): Promise<Membership | null>
  context(): RequirementContext
}

// Requirements are frozen and built once per route, so what depends on them alone is
// computed once too, instead of a string and an object on every request.
const descriptions = new WeakMap<Requirement, string>()
const allowedDecisions = new WeakMap<Requirement, Decision>()

function describe(requirement: Requirement): string {
  let description = descriptions.get(requirement)
  if (description === undefined) {
    description = describeRequirement(requirement)
    descriptions.set(requirement, description)
  }
  return description
}

/** An allowed decision: frozen and shared by every request that meets the requirement the same way. */
function allowed(requirement: Requirement, reason: DecisionReason, groupId?: string): Decision {
  const shared = allowedDecisions.get(requirement)
  if (shared !== undefined && shared.reason === reason && shared.groupId === groupId) return shared
  const decision: Decision = Object.freeze(
    groupId === undefined
      ? { allowed: true, reason, requirement: describe(requirement) }
      : { allowed: true, reason, requirement: describe(requirement), groupId },
  )
  allowedDecisions.set(requirement, decision)
  return decision
}

function denied(requirement: Requirement, reason: DecisionReason, groupId?: string): Decision {
  return Object.freeze(
    groupId === undefined
      ? { allowed: false, reason, requirement: describe(requirement) }
      : { allowed: false, reason, requirement: describe(requirement), groupId },
  )
}

/**
 * Decides from cached answers alone, without any further call: `me/groups`, and, when
 * `cachedMembership` is given, the `me/groups/{id}` answers it has (for groups the list
 * does not prove, as when a backend of the service failed and the list is partial).
 * Returns an allowed decision when those answers prove the requirement, and `undefined`
 * when they cannot tell (which is never a denial for group requirements). `where`
 * predicates are never decided here.
 *
 * @example
 * ```ts
 * const quick = decideFromList(requirement, index, Date.now(), DEFAULT_ROLES)
 * const withCache = decideFromList(requirement, index, Date.now(), DEFAULT_ROLES, (id) => memberships.get(id))
 * ```
 */
export function decideFromList(
  requirement: Requirement,
  index: GroupsIndex,
  now: number,
  roles: readonly string[],
  cachedMembership?: (groupId: string) => Membership | null | undefined,
): Decision | undefined {
  switch (requirement.kind) {
    case 'group': {
      const listed = findListed(index, requirement.groupId)
      if (listed !== undefined && judgeMembership(listed.membership, requirement.role, roles, now, listed) === 'ok') {
        return allowed(requirement, 'member', requirement.groupId)
      }
      // What `decide` would ask next, if it is already known: a cached 404 (`null`) or a
      // lower role proves nothing here, and `decide` gives the denial.
      const membership = cachedMembership?.(requirement.groupId)
      if (membership !== undefined && membership !== null && judgeMembership(membership, requirement.role, roles, now, listed) === 'ok') {
        return allowed(requirement, 'member', requirement.groupId)
      }
      return undefined
    }
    case 'groupOfType':
      return index.list.some(
        (g) => g.type === requirement.groupType && judgeMembership(g.membership, requirement.role, roles, now, g) === 'ok',
      )
        ? allowed(requirement, 'member')
        : undefined
    case 'authenticated':
      return allowed(requirement, 'authenticated')
    case 'anyOf':
      for (const inner of requirement.requirements) {
        if (decideFromList(inner, index, now, roles, cachedMembership)?.allowed === true) return allowed(requirement, 'member')
      }
      return undefined
    case 'allOf':
      for (const inner of requirement.requirements) {
        if (decideFromList(inner, index, now, roles, cachedMembership) === undefined) return undefined
      }
      return allowed(requirement, 'member')
    case 'where':
      return undefined
  }
}

/**
 * Decides a requirement completely, asking `me/groups/{id}` where the list cannot prove a
 * group membership. Rejects (with the lookup's error) when the outcome depends on an
 * answer that failed: unknown is never turned into allowed or denied.
 *
 * @example
 * ```ts
 * const decision = await decide(anyOf(group('a'), group('b', 'admin')), lookups)
 * ```
 */
export async function decide(requirement: Requirement, lookups: DecisionLookups): Promise<Decision> {
  switch (requirement.kind) {
    case 'group': {
      const index = await lookups.groups()
      const listed = findListed(index, requirement.groupId)
      if (
        listed !== undefined &&
        judgeMembership(listed.membership, requirement.role, lookups.roles, lookups.now, listed) === 'ok'
      ) {
        return allowed(requirement, 'member', requirement.groupId)
      }
      const membership = await lookups.membership(requirement.groupId)
      if (membership === null) return denied(requirement, 'not_member', requirement.groupId)
      const verdict = judgeMembership(membership, requirement.role, lookups.roles, lookups.now, listed)
      return verdict === 'ok'
        ? allowed(requirement, 'member', requirement.groupId)
        : denied(requirement, verdict, requirement.groupId)
    }
    case 'groupOfType': {
      const index = await lookups.groups()
      return decideFromList(requirement, index, lookups.now, lookups.roles) ?? denied(requirement, 'no_group_of_type')
    }
    case 'authenticated':
      await lookups.groups()
      return allowed(requirement, 'authenticated')
    case 'where': {
      const result = await requirement.predicate(lookups.context())
      return result === true ? allowed(requirement, 'predicate') : denied(requirement, 'predicate_false')
    }
    case 'anyOf': {
      // When the list already proves one alternative, no other alternative costs a call.
      const quick = await lookups.groups().then(
        (index) => decideFromList(requirement, index, lookups.now, lookups.roles),
        () => undefined,
      )
      if (quick !== undefined) return quick
      // An allowed alternative settles it even if another alternative's lookup failed;
      // without one, any failure makes the outcome unknown.
      const outcomes = await Promise.allSettled(requirement.requirements.map((inner) => decide(inner, lookups)))
      let failure: PromiseRejectedResult | undefined
      for (const outcome of outcomes) {
        if (outcome.status === 'fulfilled') {
          if (outcome.value.allowed) return outcome.value
        } else {
          failure ??= outcome
        }
      }
      if (failure !== undefined) throw failure.reason
      return denied(requirement, 'no_alternative')
    }
    case 'allOf': {
      // A definite denial settles it even if another part's lookup failed.
      const outcomes = await Promise.allSettled(requirement.requirements.map((inner) => decide(inner, lookups)))
      let failure: PromiseRejectedResult | undefined
      for (const outcome of outcomes) {
        if (outcome.status === 'fulfilled') {
          if (!outcome.value.allowed) return outcome.value
        } else {
          failure ??= outcome
        }
      }
      if (failure !== undefined) throw failure.reason
      return allowed(requirement, 'member')
    }
  }
}
