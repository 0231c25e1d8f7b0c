/**
 * Requirements: plain, frozen values that say what a route or call needs. They are built
 * once, when a route is declared, and their arguments are validated there, so that a typo
 * fails at start-up rather than on some request.
 *
 * @module
 */
import { InvalidArgumentError, InvalidGroupIdError } from '../errors.js'
import { assertGroupId } from '../group-id.js'
import type { GroupWithMembership, Membership } from '../types.js'

/**
 * What a {@link where} predicate may ask about the current user. The token itself is not
 * exposed: predicates work through these bound, cached lookups.
 *
 * @example
 * ```ts
 * where('staff or course admin', async (ctx) =>
 *   (await ctx.isMember('fc:org:example.org', 'admin')) || (await ctx.groups()).length > 10)
 * ```
 */
export interface RequirementContext {
  /** The decision time. */
  readonly now: Date
  /** The user's active memberships (`me/groups`, cached). */
  groups(): Promise<readonly GroupWithMembership[]>
  /** The user's membership of one group (`me/groups/{id}`, cached); `null` if none. */
  membership(groupId: string): Promise<Membership | null>
  /** Whether the user holds an active membership of `groupId` with at least `role`. */
  isMember(groupId: string, role?: string): Promise<boolean>
}

/**
 * Active membership of one group, with at least `role` when given.
 *
 * @example
 * ```ts
 * const staff: GroupRequirement = group('fc:org:example.org', 'admin')
 * ```
 */
export interface GroupRequirement {
  readonly kind: 'group'
  readonly groupId: string
  readonly role: string | undefined
  /** The group service the group belongs to, when named (see {@link ServiceOption}); otherwise the services' `groupPrefixes` say. */
  readonly service?: string | undefined
}

/**
 * Names the group service a requirement's group belongs to, for an application that
 * guards with several (`createServiceResolvers`). A single resolver ignores it.
 *
 * @example
 * ```ts
 * const feideAdmin = group('fc:adhoc:1', 'admin', { service: 'feide' })
 * ```
 */
export interface ServiceOption {
  /** The name of the service in `createServiceResolvers({ services })`. */
  readonly service?: string | undefined
}

/**
 * Any active membership in a group of one type, with at least `role` when given.
 *
 * @example
 * ```ts
 * const student: GroupOfTypeRequirement = groupOfType('fc:fs:emne')
 * ```
 */
export interface GroupOfTypeRequirement {
  readonly kind: 'groupOfType'
  readonly groupType: string
  readonly role: string | undefined
  /** The group service of the groups, when named (see {@link ServiceOption}). */
  readonly service?: string | undefined
}

/**
 * At least one of several requirements.
 *
 * @example
 * ```ts
 * const either: AnyOfRequirement = anyOf(group('fc:adhoc:1'), group('fc:adhoc:2'))
 * ```
 */
export interface AnyOfRequirement {
  readonly kind: 'anyOf'
  readonly requirements: readonly Requirement[]
}

/**
 * Every one of several requirements.
 *
 * @example
 * ```ts
 * const both: AllOfRequirement = allOf(group('fc:org:example.org'), groupOfType('fc:fs:emne'))
 * ```
 */
export interface AllOfRequirement {
  readonly kind: 'allOf'
  readonly requirements: readonly Requirement[]
}

/**
 * A custom predicate; allowed only when it returns (or resolves to) exactly `true`.
 *
 * @example
 * ```ts
 * const custom: PredicateRequirement = where('has any group', async (ctx) => (await ctx.groups()).length > 0)
 * ```
 */
export interface PredicateRequirement {
  readonly kind: 'where'
  readonly description: string
  readonly predicate: (ctx: RequirementContext) => boolean | Promise<boolean>
}

/**
 * A valid personal token with the groups scope, nothing more.
 *
 * @example
 * ```ts
 * const anyUser: AuthenticatedRequirement = authenticated()
 * ```
 */
export interface AuthenticatedRequirement {
  readonly kind: 'authenticated'
}

/**
 * Any requirement. Build them with {@link group}, {@link anyOf}, {@link allOf},
 * {@link groupOfType}, {@link where} and {@link authenticated}.
 *
 * @example
 * ```ts
 * const staff: Requirement = anyOf(group('fc:org:example.org', 'admin'), groupOfType('fc:orgunit'))
 * ```
 */
export type Requirement =
  GroupRequirement | GroupOfTypeRequirement | AnyOfRequirement | AllOfRequirement | PredicateRequirement | AuthenticatedRequirement

// Only values made by the builders below are requirements; a look-alike object literal is
// refused, so a requirement is always one that passed validation.
const built = new WeakSet<object>()

function seal<R extends Requirement>(requirement: R): R {
  Object.freeze(requirement)
  built.add(requirement)
  return requirement
}

/**
 * Refuses a blank or space-padded id or type: no group service has one, so a requirement
 * of it would refuse everyone in silence (a pasted id, an environment variable with a
 * trailing space). The path encoding would send it as it is; the declaration is the place
 * to say so.
 */
function assertUnpadded(id: string, where: string, what: 'group id' | 'group type'): void {
  const trimmed = id.trim()
  if (trimmed === id) return
  const Refusal = what === 'group id' ? InvalidGroupIdError : InvalidArgumentError
  if (trimmed.length === 0) throw new Refusal(`${where}: the ${what} is blank (only spaces): give the ${what} itself`)
  throw new Refusal(
    `${where}: the ${what} starts or ends with spaces, which no group service's ${what}s do: remove the spaces (${JSON.stringify(trimmed)})`,
  )
}

function assertRole(role: unknown, where: string): asserts role is string | undefined {
  if (role === undefined) return
  if (typeof role !== 'string' || role.length === 0 || role.length > 64 || /[\u0000-\u001f\u007f]/.test(role)) {
    throw new InvalidArgumentError(`${where}: role must be a non-empty string without control characters`)
  }
}

/** The `service` of a builder's options, checked: a name such as `feide`, or `undefined`. */
function serviceOption(options: ServiceOption | undefined, where: string): string | undefined {
  if (options === undefined) return undefined
  if (typeof options !== 'object' || options === null)
    throw new InvalidArgumentError(`${where}: options must be an object such as { service: 'feide' }`)
  const { service } = options
  if (service === undefined) return undefined
  if (typeof service !== 'string' || !SERVICE_NAME.test(service)) {
    throw new InvalidArgumentError(`${where}: service must be a service name (letters, digits, '-' and '_', at most 64)`)
  }
  return service
}

/** What a service may be called: short, and safe in a metric label, a log line and a URL path. */
export const SERVICE_NAME = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/

/**
 * Whether `value` is a requirement built by this module.
 *
 * @example
 * ```ts
 * isRequirement(group('fc:org:example.org')) // true
 * isRequirement({ kind: 'group' })            // false
 * ```
 */
export function isRequirement(value: unknown): value is Requirement {
  return typeof value === 'object' && value !== null && built.has(value)
}

/**
 * Active membership of `groupId`, with at least `role` when given (roles compare by their
 * order in the resolver's `roles` option; default any role).
 *
 * Note: on `fc:org` groups, `admin` means employee, not administrator.
 *
 * @example
 * ```ts
 * group('fc:org:example.org', 'admin') // employees of example.org
 * ```
 */
export function group(groupId: string, role?: string, options?: ServiceOption): GroupRequirement {
  assertGroupId(groupId)
  const where = `group(${JSON.stringify(groupId)})`
  assertUnpadded(groupId, where, 'group id')
  assertRole(role, where)
  const service = serviceOption(options, where)
  return seal(service === undefined ? { kind: 'group', groupId, role } : { kind: 'group', groupId, role, service })
}

/**
 * Any active membership in a group of type `groupType` (such as `fc:fs:emne`), with at
 * least `role` when given. Decided from `me/groups` alone, which can be partial: a user
 * whose only such group sits in a failing backend is denied.
 *
 * @example
 * ```ts
 * groupOfType('fc:fs:emne') // enrolled in at least one course
 * ```
 */
export function groupOfType(groupType: string, role?: string, options?: ServiceOption): GroupOfTypeRequirement {
  if (typeof groupType !== 'string' || groupType.length === 0 || /[\u0000-\u001f\u007f]/.test(groupType)) {
    throw new InvalidArgumentError('groupOfType(): groupType must be a non-empty string without control characters')
  }
  const where = `groupOfType(${JSON.stringify(groupType)})`
  assertUnpadded(groupType, where, 'group type')
  assertRole(role, where)
  const service = serviceOption(options, where)
  return seal(service === undefined ? { kind: 'groupOfType', groupType, role } : { kind: 'groupOfType', groupType, role, service })
}

function assertRequirements(name: string, requirements: readonly unknown[]): asserts requirements is Requirement[] {
  if (requirements.length === 0) throw new InvalidArgumentError(`${name}() needs at least one requirement`)
  requirements.forEach((requirement, index) => {
    if (!isRequirement(requirement)) {
      throw new InvalidArgumentError(`${name}(): argument ${index} is not a requirement built by voot-guard`)
    }
  })
}

/**
 * Met when at least one of `requirements` is met.
 *
 * @example
 * ```ts
 * anyOf(group('fc:adhoc:1234', 'admin'), group('fc:org:example.org', 'admin'))
 * ```
 */
export function anyOf(...requirements: Requirement[]): AnyOfRequirement {
  assertRequirements('anyOf', requirements)
  return seal({ kind: 'anyOf', requirements: Object.freeze([...requirements]) })
}

/**
 * Met when every one of `requirements` is met.
 *
 * @example
 * ```ts
 * allOf(group('fc:org:example.org'), groupOfType('fc:fs:emne'))
 * ```
 */
export function allOf(...requirements: Requirement[]): AllOfRequirement {
  assertRequirements('allOf', requirements)
  return seal({ kind: 'allOf', requirements: Object.freeze([...requirements]) })
}

/**
 * A custom predicate over the user's groups. Allowed only when it returns exactly `true`;
 * if it throws, the error propagates (the request fails, it is not allowed).
 *
 * @param description - says what the predicate checks; used in decisions and logs.
 * @example
 * ```ts
 * where('teaches any course', async (ctx) =>
 *   (await ctx.groups()).some((g) => g.type === 'fc:fs:emne' && g.membership.basic === 'admin'))
 * ```
 */
export function where(description: string, predicate: (ctx: RequirementContext) => boolean | Promise<boolean>): PredicateRequirement {
  if (typeof description !== 'string' || description.trim().length === 0) {
    throw new InvalidArgumentError('where(): description must be a non-empty string')
  }
  if (typeof predicate !== 'function') throw new InvalidArgumentError('where(): predicate must be a function')
  return seal({ kind: 'where', description, predicate })
}

/**
 * Met by any valid personal token with the groups scope (one `me/groups` call, cached).
 *
 * @example
 * ```ts
 * await resolver.check(token, authenticated())
 * ```
 */
export function authenticated(): AuthenticatedRequirement {
  return AUTHENTICATED
}

const AUTHENTICATED: AuthenticatedRequirement = seal({ kind: 'authenticated' })

/**
 * A short human-readable description of a requirement, for decisions and logs.
 *
 * @example
 * ```ts
 * describeRequirement(group('fc:org:example.org', 'admin')) // 'group fc:org:example.org (role admin or higher)'
 * ```
 */
export function describeRequirement(requirement: Requirement): string {
  let text = descriptions.get(requirement)
  if (text === undefined) {
    text = describe(requirement)
    // Frozen requirements (every one the builders make) never change: described once.
    if (Object.isFrozen(requirement)) descriptions.set(requirement, text)
  }
  return text
}

// Traced decisions name their requirement on every request; routes declare it once.
const descriptions = new WeakMap<Requirement, string>()

function describe(requirement: Requirement): string {
  switch (requirement.kind) {
    case 'group':
      return `group ${requirement.groupId}${requirement.role === undefined ? '' : ` (role ${requirement.role} or higher)`}`
    case 'groupOfType':
      return `a group of type ${requirement.groupType}${requirement.role === undefined ? '' : ` (role ${requirement.role} or higher)`}`
    case 'anyOf':
      return `any of [${requirement.requirements.map(describeRequirement).join('; ')}]`
    case 'allOf':
      return `all of [${requirement.requirements.map(describeRequirement).join('; ')}]`
    case 'where':
      return requirement.description
    case 'authenticated':
      return 'a valid personal token'
  }
}

/**
 * Every role a requirement names, so that a resolver can check them against its `roles`
 * when the route is declared.
 */
export function rolesOf(requirement: Requirement): string[] {
  switch (requirement.kind) {
    case 'group':
    case 'groupOfType':
      return requirement.role === undefined ? [] : [requirement.role]
    case 'anyOf':
    case 'allOf':
      return requirement.requirements.flatMap(rolesOf)
    case 'where':
    case 'authenticated':
      return []
  }
}
