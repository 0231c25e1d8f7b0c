/**
 * voot-guard: guard routes and service code with group membership from a VOOT group
 * service (the Feide/Dataporten groups API and its kin).
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
export { createGroupsClient, type CallOptions, type GroupsClient } from './client.js'
export type { GroupsClientOptions } from './client-options.js'
export {
  createMembershipResolver,
  type CacheOptions,
  type MembershipResolver,
  type MembershipResolverOptions,
  type ResolveOptions,
  type ResolverEvent,
  type ResolverStats,
} from './resolver.js'
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
} from './requirements.js'
export type { CircuitBreakerOptions, CircuitState } from './circuit-breaker.js'
export { decide, decideFromList, findListed, indexGroups, type Decision, type DecisionLookups, type DecisionReason, type GroupsIndex } from './decision.js'
export { DEFAULT_ROLES, isActiveAt, judgeMembership, type MembershipVerdict } from './membership.js'
export {
  AUTHENTICATED,
  createCredentialsReader,
  createGuardCore,
  createGuards,
  type Credentials,
  type FoundToken,
  type Guards,
  type GuardCore,
  type GuardOptions,
  type VootContext,
} from './guard.js'
export {
  createHttpErrorRenderer,
  quoteHeaderValue,
  type HttpErrorAnswer,
  type HttpErrorBody,
  type HttpErrorCode,
  type HttpErrorRenderer,
  type HttpErrorRendererOptions,
} from './http-error.js'
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
  type UpstreamErrorCode,
  type UpstreamErrorOptions,
  type VootErrorCode,
  type VootErrorOptions,
} from './errors.js'
export { authorizationOf, type RequestHeaders } from './authorization-header.js'
export { extractBearerToken, isWellFormedToken, MAX_TOKEN_LENGTH } from './token.js'
export { assertGroupId, encodeGroupId, MAX_GROUP_ID_LENGTH } from './group-id.js'
export { localize } from './translatable.js'
export { VERSION } from './version.js'
export type { Group, GroupType, GroupWithMembership, MemberEntry, Membership, Translatable } from './types.js'
