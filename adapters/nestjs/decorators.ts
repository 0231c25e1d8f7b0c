/**
 * The route decorators of `voot-guard/nestjs` and how a route's requirement is read back.
 *
 * Plain functions that return Nest decorators: the library's source uses no decorator
 * syntax, so it needs neither `experimentalDecorators` nor `emitDecoratorMetadata`.
 *
 * @module
 */
import { SetMetadata, createParamDecorator, type ExecutionContext } from '@nestjs/common'
import type { Reflector } from '@nestjs/core'
import { AUTHENTICATED, type AuthenticateOptions, readAuthenticateOptions, type VootContext } from '../../src/adapter-kit.js'
import { allOf, anyOf, group, InvalidArgumentError, type Requirement } from '../../src/index.js'
import { isRequirement } from '../../src/adapter-kit.js'
import type { NestGuardCore, NestGuardStep, NestHttpRequest } from './core.js'

/**
 * Metadata key of the requirements a class or method carries (an array: they all hold).
 *
 * @example
 * ```ts
 * const requirements = reflector.getAllAndMerge<Requirement[]>(VOOT_REQUIREMENTS, [context.getHandler(), context.getClass()])
 * ```
 */
export const VOOT_REQUIREMENTS = 'voot-guard:requirements'
/**
 * Metadata key of {@link Public}.
 *
 * @example
 * ```ts
 * const open = reflector.getAllAndOverride<boolean>(VOOT_PUBLIC, [context.getHandler(), context.getClass()])
 * ```
 */
export const VOOT_PUBLIC = 'voot-guard:public'
/** Metadata key of `Authenticated({ optional: true })`. */
const VOOT_OPTIONAL_SIGN_IN = 'voot-guard:optional-sign-in'

/**
 * What a voot decorator returns: it applies to a controller class or a route method.
 *
 * @example
 * ```ts
 * const staff: VootDecorator = RequireGroup('fc:org:example.org', 'admin')
 * ```
 */
export type VootDecorator = ClassDecorator & MethodDecorator

/** Reads metadata without requiring reflect-metadata's global types in the user's project. */
const metadata = Reflect as unknown as { getMetadata(key: string, target: object): unknown }

/**
 * The route's parameters, as the platform parsed them (`request.params` on Express and on
 * Fastify): what a computed requirement of a decorator reads.
 *
 * @example
 * ```ts
 * const courseGroup = (params: RouteParams) => `fc:fs:fs:emne:example.org:${params.id}:1`
 * ```
 */
export type RouteParams = Readonly<Record<string, string | undefined>>

/**
 * A requirement of a decorator computed per request from the route's parameters: a group
 * id with its role (`RequireGroup((params) => id, role)`) or a whole requirement
 * (`RequireVoot((params) => requirement)`). Kept as metadata; `VootGuard` makes it the
 * guard core's computed requirement when the route is first guarded.
 */
export interface ComputedDecoration {
  readonly computed: 'group' | 'requirement'
  readonly source: (params: RouteParams, request: NestHttpRequest) => unknown
  readonly role: string | undefined
}

/** What a voot decorator records: a requirement, or one computed per request. */
export type Decoration = Requirement | ComputedDecoration

function requiring(requirement: Decoration): VootDecorator {
  return (target: object, key?: string | symbol, descriptor?: PropertyDescriptor) => {
    // Several decorators on one target add up (they all hold), so the array grows per call;
    // a subclass keeps its parent controller's requirements and adds its own.
    const holder = (descriptor?.value as object | undefined) ?? target
    const previous = (metadata.getMetadata(VOOT_REQUIREMENTS, holder) as readonly Decoration[] | undefined) ?? []
    SetMetadata(VOOT_REQUIREMENTS, [...previous, requirement])(target, key as string | symbol, descriptor as PropertyDescriptor)
  }
}

function groupsOf(name: string, groupIds: readonly string[], role: string | undefined): Requirement[] {
  if (!Array.isArray(groupIds) || groupIds.length === 0) {
    throw new InvalidArgumentError(`${name}(): groupIds must be a non-empty array of group ids`)
  }
  // Each id is checked by group(), whatever its type.
  return (groupIds as readonly string[]).map((id) => group(id, role))
}

/**
 * Active membership of `groupId` with at least `role` (default any role). Arguments are
 * checked here, when the route is declared; roles against the resolver's once the module
 * is built.
 *
 * @example
 * ```ts
 * @RequireGroup('fc:org:example.org', 'admin')
 * @Get('staff') staff() {}
 * ```
 */
export function RequireGroup(groupId: string | ((params: RouteParams, request: NestHttpRequest) => string), role?: string): VootDecorator {
  if (typeof groupId === 'function') {
    // The role is the route's: its spelling checked now, against the resolver's roles once the route is first guarded.
    group('voot-guard:role-check', role)
    return requiring({ computed: 'group', source: groupId, role })
  }
  return requiring(group(groupId, role))
}

/**
 * Active membership of at least one of `groupIds`, with at least `role`.
 *
 * @example
 * ```ts
 * @RequireAnyGroup(['fc:gogroup:a', 'fc:gogroup:b'], 'admin')
 * ```
 */
export function RequireAnyGroup(groupIds: readonly string[], role?: string): VootDecorator {
  return requiring(anyOf(...groupsOf('RequireAnyGroup', groupIds, role)))
}

/**
 * Active membership of every one of `groupIds`, with at least `role`.
 *
 * @example
 * ```ts
 * @RequireAllGroups(['fc:org:example.org', 'fc:gogroup:board'])
 * ```
 */
export function RequireAllGroups(groupIds: readonly string[], role?: string): VootDecorator {
  return requiring(allOf(...groupsOf('RequireAllGroups', groupIds, role)))
}

/**
 * Any requirement built with `group`, `anyOf`, `allOf`, `groupOfType` or `where`.
 *
 * @example
 * ```ts
 * @RequireVoot(anyOf(group('fc:org:example.org', 'admin'), groupOfType('fc:fs:emne')))
 * ```
 */
export function RequireVoot(requirement: Requirement | ((params: RouteParams, request: NestHttpRequest) => Requirement)): VootDecorator {
  if (typeof requirement === 'function') return requiring({ computed: 'requirement', source: requirement, role: undefined })
  if (!isRequirement(requirement)) {
    throw new InvalidArgumentError('RequireVoot(): not a requirement built by voot-guard (use group(), anyOf(), ...)')
  }
  return requiring(requirement)
}

/**
 * A valid personal token with the groups scope, nothing more. What `VootGuard` asks of a
 * route without any voot decorator.
 *
 * With `{ optional: true }`, a request that presents no credentials reaches the route with
 * `@Voot()` `undefined`; one that presents any is answered as by `Authenticated()` (401,
 * 400, 503: never anonymous). It stands alone: with another voot requirement or `Public()`
 * on the route (its class's included) the module refuses to build, as they contradict it.
 *
 * @example
 * ```ts
 * @Authenticated() @Get('me') me(@Voot() voot: VootContext) {}
 * @Authenticated({ optional: true }) @Get() home(@Voot() voot: VootContext | undefined) {}
 * ```
 */
export function Authenticated(options?: AuthenticateOptions): VootDecorator {
  if (readAuthenticateOptions(options, 'Authenticated()')) return SetMetadata(VOOT_OPTIONAL_SIGN_IN, true)
  return requiring(AUTHENTICATED)
}

/**
 * Lets a route (or every route of a controller) through `VootGuard` without a token. It
 * only lifts the guard's default; a route that also carries a requirement is refused when
 * the module is built, since the two contradict each other.
 *
 * @example
 * ```ts
 * @Public() @Get('health') health() { return 'ok' }
 * ```
 */
export function Public(): VootDecorator {
  return SetMetadata(VOOT_PUBLIC, true)
}

/**
 * Parameter decorator: the {@link VootContext} of the request, which `VootGuard` set once it
 * allowed it (`undefined` on a `Public()` route, and on an `Authenticated({ optional: true })`
 * route for a request without credentials).
 *
 * @example
 * ```ts
 * @Get('me') async me(@Voot() voot: VootContext) { return (await voot.groups()).map((g) => g.id) }
 * ```
 */
export const Voot: () => ParameterDecorator = createParamDecorator(
  (_data: unknown, context: ExecutionContext): VootContext | undefined => context.switchToHttp().getRequest<{ voot?: VootContext }>().voot,
)

/** The route requirement of `Authenticated({ optional: true })`. */
export const OPTIONAL_SIGN_IN: unique symbol = Symbol('voot-guard:optional-sign-in')

/**
 * `null`: the route is public; {@link OPTIONAL_SIGN_IN}: sign-in is optional; otherwise
 * what every decorator of the route requires (all of them hold), at least one.
 */
export type RouteRequirement = readonly Decoration[] | null | typeof OPTIONAL_SIGN_IN

/**
 * The one requirement of a route: its class's and method's requirements all hold; with
 * none, a valid token (secure by default), unless the route is `Public()` or sign-in is optional.
 */
export function routeRequirement(reflector: Reflector, handler: Function, controller: Function): RouteRequirement {
  const all = reflector.getAll<(readonly Decoration[] | undefined)[]>(VOOT_REQUIREMENTS, [controller, handler]).flat()
  const requirements = all.filter((requirement): requirement is Decoration => requirement !== undefined)
  const isPublic = reflector.getAllAndOverride<boolean | undefined>(VOOT_PUBLIC, [handler, controller]) === true
  if (isPublic && requirements.length > 0) {
    throw new InvalidArgumentError(`${controller.name}.${handler.name}: Public() and a voot requirement contradict each other`)
  }
  if (reflector.getAllAndOverride<boolean | undefined>(VOOT_OPTIONAL_SIGN_IN, [handler, controller]) === true) {
    if (isPublic || requirements.length > 0) {
      const other = isPublic ? 'Public()' : 'a voot requirement'
      throw new InvalidArgumentError(
        `${controller.name}.${handler.name}: Authenticated({ optional: true }) and ${other} contradict each other`,
      )
    }
    return OPTIONAL_SIGN_IN
  }
  if (requirements.length === 0) return isPublic ? null : [AUTHENTICATED]
  return requirements
}

/**
 * The guard of a route (`null`: public), its decorations checked against the guard core
 * (roles against the resolver's, groups against the services'); a mistake names the
 * controller and the method. Computed decorations become the core's computed requirement,
 * all of the route's decorations holding together.
 */
export function routeStep(nest: NestGuardCore, reflector: Reflector, handler: Function, controller: Function): NestGuardStep | null {
  const route = routeRequirement(reflector, handler, controller)
  if (route === null) return null
  try {
    if (route === OPTIONAL_SIGN_IN) return nest.guard(AUTHENTICATED, true)
    const { core } = nest
    if (!route.some(isComputed))
      return nest.guard(route.length === 1 ? (route[0] as Requirement) : allOf(...(route as Requirement[])), false)
    const parts = route.map((part): ((request: NestHttpRequest) => Requirement) => {
      if (!isComputed(part)) {
        core.prepare(part)
        return () => part
      }
      const { source, role } = part
      const paramsOf = (request: NestHttpRequest): RouteParams => (request.params ?? {}) as RouteParams
      return part.computed === 'group'
        ? core.computedGroup((request: NestHttpRequest) => source(paramsOf(request), request) as string, role)
        : core.computedRequirement((request: NestHttpRequest) => source(paramsOf(request), request) as Requirement)
    })
    const only = parts.length === 1 ? parts[0] : undefined
    return nest.guard(only ?? core.computedRequirement((request) => allOf(...parts.map((part) => part(request)))), false)
  } catch (error) {
    if (error instanceof InvalidArgumentError)
      throw new InvalidArgumentError(`${controller.name}.${handler.name}: ${error.message}`, { cause: error })
    throw error
  }
}

function isComputed(decoration: Decoration): decoration is ComputedDecoration {
  return 'computed' in decoration
}
