/**
 * voot-guard: guard routes and service code with group membership from a VOOT group
 * service (the Feide/Dataporten groups API, SURFconext's OpenConext-voot and their kin).
 *
 * This is the application API: the resolver, the groups client, requirements, errors and
 * types. Framework guards come from `voot-guard/express`, `voot-guard/koa`, ...; people who
 * write an adapter for another framework use `voot-guard/adapter-kit`.
 *
 * @example
 * ```ts
 * import { createMembershipResolver, group } from 'voot-guard'
 *
 * const resolver = createMembershipResolver({ baseUrl: 'https://groups-api.example.org/groups' })
 * const decision = await resolver.check(token, group('fc:org:example.org', 'admin'))
 * ```
 *
 * @module
 */
export { createGroupsClient, type CallOptions, type GroupsClient } from './client/groups-client.js'
export type { GroupsClientOptions } from './client/options.js'
export {
  createMembershipResolver,
  MISCONFIGURED_WARNING,
  type CacheOptions,
  type ExplainedAnswer,
  type ExplainedBranch,
  type ExplainedLeaf,
  type ExplainedMembership,
  type ExplainedNode,
  type ExplainedPart,
  type Explanation,
  type MembershipResolver,
  type MembershipResolverOptions,
  type ResolveOptions,
  type ResolverEvent,
  type ResolverHealth,
  type ResolverLogger,
  type ResolverStats,
} from './resolver/index.js'
export {
  allOf,
  anyOf,
  authenticated,
  describeRequirement,
  group,
  groupOfType,
  isRequirement,
  where,
  type AllOfRequirement,
  type AnyOfRequirement,
  type AuthenticatedRequirement,
  type GroupOfTypeRequirement,
  type GroupRequirement,
  type PredicateRequirement,
  type Requirement,
  type RequirementContext,
  type ServiceOption,
} from './decision/requirements.js'
export { createServiceResolvers, type ServiceResolvers, type ServiceResolversOptions } from './services/service-resolvers.js'
export type { CircuitBreakerOptions, CircuitState } from './resolver/upstream/circuit-breaker.js'
export type { AllowedReason, Decision, DecisionReason, DenialReason } from './decision/types.js'
export { DEFAULT_ROLES, isActiveAt, type Activity } from './decision/membership.js'
export type { GuardOptions, VootContext } from './guard/guard.js'
export type { GroupIdOf, RequirementOf } from './guard/computed-requirement.js'
export type { FoundToken } from './guard/credentials.js'
export type { SharedCache } from './shared-cache.js'
export {
  CHANNELS,
  type AuthorizeContext,
  type CacheTier,
  type CircuitContext,
  type ResolveContext,
  type UpstreamContext,
} from './tracing-channels.js'
export {
  AbortedError,
  ForbiddenError,
  InsufficientScopeError,
  InvalidArgumentError,
  InvalidGroupIdError,
  InvalidOptionError,
  InvalidTokenError,
  TokenMalformedError,
  TokenMissingError,
  UpstreamError,
  VootError,
  type ForbiddenErrorOptions,
  type UpstreamErrorCode,
  type UpstreamErrorOptions,
  type VootErrorCode,
  type VootErrorOptions,
} from './errors.js'
export { extractBearerToken, isWellFormedToken, MAX_TOKEN_LENGTH } from './token.js'
export { assertGroupId, MAX_GROUP_ID_LENGTH } from './group-id.js'
export { localize } from './client/translatable.js'
export { VERSION } from './version.js'
export type { Group, GroupType, GroupWithMembership, MemberEntry, Membership, Translatable } from './types.js'
