/**
 * The framework-agnostic guard: token extraction, the resolver's decision, and the HTTP
 * error contract. Adapters (`voot-guard/express`, `voot-guard/koa`, ...) are thin layers
 * over it that read a request and write a response.
 *
 * @module
 */
import type { Decision, DenialReason } from '../decision/types.js'
import { requiredText } from '../decision/required-text.js'
import { ForbiddenError, InvalidArgumentError, InvalidOptionError } from '../errors.js'
import { createHttpErrorRenderer, type HttpErrorAnswer } from './http-error.js'
import {
  createMembershipResolver,
  type MembershipResolver,
  type MembershipResolverOptions,
  type ResolveOptions,
  type ResolverHealth,
} from '../resolver/index.js'
import { allOf, anyOf, authenticated, group, type Requirement } from '../decision/requirements.js'
import { optionsMissing, rejectUnknownKeys } from '../option-checks.js'
import { RESOLVER_OPTION_KEYS } from '../resolver/options.js'
import { chooseService } from '../services/choose-service.js'
import type { ServiceResolvers } from '../services/service-resolvers.js'
import { BEARER_TOKEN_START, extractBearerToken, isBearerCandidate } from '../token.js'
import { checkAtOf } from '../resolver/check-at.js'
import { NO_OPTIONS, readFoundToken, type Credentials } from './credentials.js'
import { readAuthenticateOptions, type AuthenticateOptions } from './optional-sign-in.js'
import { RequestContext, type VootContext } from './voot-context.js'
import { GUARD_FACTORY_CALLS, refuseUncalled } from './uncalled-guard.js'
import { createRequirementInterner, MAX_COMPUTED_REQUIREMENTS, refused, type RequirementOf } from './computed-requirement.js'

export type { VootContext } from './voot-context.js'

/**
 * Options shared by every adapter's `createGuard`: either a `resolver`, or the resolver's
 * own options (`baseUrl`, `cache`, ...), plus the HTTP details.
 *
 * @example
 * ```ts
 * const options: GuardOptions = { baseUrl: 'https://groups-api.example.org/groups', realm: 'my-app' }
 * ```
 */
export interface GuardOptions extends MembershipResolverOptions {
  /** A resolver to share between guards (otherwise one is created from the other options). */
  resolver?: MembershipResolver
  /** The realm named in `WWW-Authenticate` challenges. Default `'voot-guard'`. */
  realm?: string
  /** Seconds for `Retry-After` on a 503 when the group service gave none. Default `5`. */
  retryAfter?: number
  /**
   * `'respond'` (default) answers errors with the JSON contract; `'delegate'` hands them
   * to the framework's own error handling (`next(err)` in Express, a thrown error in Koa).
   * The errors carry `status`, `headers` and `expose` either way.
   */
  errorHandling?: 'respond' | 'delegate'
  /**
   * What a 403 `forbidden` answer says. `'named'` (default) names the requirement that was
   * not met ("This resource requires the role admin or higher in the group
   * fc:org:example.org"), never what the user has; `'generic'` says only "The group
   * requirement of this resource is not met", for applications that do not reveal their
   * policy. The `ForbiddenError` carries the decision's `reason` either way.
   */
  denials?: 'named' | 'generic'
  /**
   * Several group services instead of one (from `createServiceResolvers`); not with
   * `resolver` or `baseUrl`. Each request's token goes to the one service chosen for it:
   * the `service` its `getToken` returned, else the service the token's JWT `iss` maps to,
   * else the `service` option; a token none of them chooses is answered 401. A requirement
   * with no part on that service is denied (`other_service`) without a call.
   */
  services?: ServiceResolvers
  /** With `services`: the service of the tokens neither `getToken` nor an issuer assigns (this route's or this host's). */
  service?: string
}

/** Every key of {@link GuardOptions}: the guard's own and the resolver's. */
export const GUARD_OPTION_KEYS: readonly string[] = [
  'resolver',
  'realm',
  'retryAfter',
  'errorHandling',
  'denials',
  'services',
  'service',
  ...RESOLVER_OPTION_KEYS,
]

/**
 * The core of every adapter's guard.
 *
 * @example
 * ```ts
 * const core = createGuardCore({ baseUrl })
 * const context = await core.authorizeNow({ authorization: req.headers.authorization }, group('fc:org:example.org'))
 * ```
 */
export interface GuardCore {
  /** The resolver; with `services`, the resolver of the `service` option's service (else the first one). */
  readonly resolver: MembershipResolver
  /** The `services` option, when the guard has several group services. */
  readonly services: ServiceResolvers | undefined
  readonly realm: string
  readonly delegateErrors: boolean
  /** Validates a requirement once, at route declaration, and returns it. */
  prepare(requirement: Requirement): Requirement
  /** The requirement of `requireGroup(id, role?)`. */
  groupRequirement(groupId: string, role?: string): Requirement
  /** The requirement of `requireAnyGroup(ids, role?)` / `requireAllGroups(ids, role?)`. */
  groupsRequirement(mode: 'any' | 'all', groupIds: readonly string[], role?: string): Requirement
  /**
   * The per-request requirement of `requireGroup((request) => id, role?)`; the role is
   * checked here, once. Per request, an id `assertGroupId` refuses throws the contract's
   * 403 (`forbidden`, reason `not_member`) without a call; an equal requirement met before
   * (static or computed) is the same object, so its remembered verdicts serve it warm.
   */
  computedGroup<I>(groupId: (input: I) => string, role?: string): RequirementOf<I>
  /**
   * The per-request requirement of `require((request) => requirement)`: what the function
   * returns, found again by what it requires. A group id the function's `group()` refused
   * throws the contract's 403; any other error it throws is a bug (a 500).
   */
  computedRequirement<I>(source: RequirementOf<I>): RequirementOf<I>
  /**
   * Reads the token (from an `Authorization` header value, or a token a `getToken` option
   * found) and decides: the {@link VootContext} itself when fresh cached answers allow the
   * request, otherwise a promise of it. A refusal rejects with an HTTP-shaped `VootError`
   * (realm challenge, `Retry-After`; a warm denial rejects at once), or with the original
   * error when it is outside the contract (a bug: a 500). The token is read once and
   * digested once whichever way it goes: a cache miss hands both on to the cold path.
   * Never throws. The one way to authorize; `createGuardFlow` runs it for every adapter.
   */
  authorizeNow(credentials: Credentials, requirement: Requirement): VootContext | Promise<VootContext>
  /**
   * The answer for an error `authorizeNow` rejected with, or `undefined` for an error outside
   * the HTTP contract (a bug, for the framework's error handling to turn into 500). `accept`
   * is the request's `Accept` header: RFC 9457 problem details when it names
   * `application/problem+json`, the contract's JSON otherwise.
   */
  answer(error: unknown, accept?: string | null): HttpErrorAnswer | undefined
}

const CONTROL = /[\u0000-\u001f\u007f]/

/**
 * Creates a {@link GuardCore}. Options are validated here, once.
 *
 * @example
 * ```ts
 * const core = createGuardCore({ baseUrl: 'https://groups-api.example.org/groups', realm: 'my-app' })
 * ```
 */
export function createGuardCore(options: GuardOptions): GuardCore {
  if (typeof options !== 'object' || options === null) {
    throw optionsMissing('createGuard', options)
  }
  rejectUnknownKeys('', options, GUARD_OPTION_KEYS)
  const {
    resolver: given,
    realm: realmOption,
    retryAfter: retryOption,
    errorHandling,
    denials,
    services,
    service: defaultService,
    ...resolverOptions
  } = options
  const realm = realmOption ?? 'voot-guard'
  if (typeof realm !== 'string' || realm.length === 0 || realm.length > 256 || CONTROL.test(realm)) {
    throw new InvalidOptionError('realm', 'must be a non-empty string of at most 256 characters without control characters')
  }
  const retryAfter = retryOption ?? 5
  if (typeof retryAfter !== 'number' || !Number.isInteger(retryAfter) || retryAfter < 1 || retryAfter > 86_400) {
    throw new InvalidOptionError('retryAfter', 'must be an integer number of seconds from 1 to 86400')
  }
  if (errorHandling !== undefined && errorHandling !== 'respond' && errorHandling !== 'delegate') {
    throw new InvalidOptionError('errorHandling', "must be 'respond' or 'delegate'")
  }
  if (denials !== undefined && denials !== 'named' && denials !== 'generic') {
    throw new InvalidOptionError('denials', "must be 'named' or 'generic'")
  }
  const named = denials !== 'generic'
  let resolver: MembershipResolver
  if (services !== undefined) {
    if (typeof services !== 'object' || services === null || typeof services.checkNow !== 'function') {
      throw new InvalidOptionError('services', 'must be the ServiceResolvers of createServiceResolvers()')
    }
    if (given !== undefined || resolverOptions.baseUrl !== undefined) {
      throw new InvalidOptionError('services', 'give either `services` or a `resolver`/`baseUrl`, not both')
    }
    // Each service's resolver was made with its own options: one given here would not be in force.
    refuseIgnored(resolverOptions, "with `services`, give it to createServiceResolvers() (each service's, or its `sharedCache`)")
    if (defaultService !== undefined && (typeof defaultService !== 'string' || !services.names.includes(defaultService))) {
      throw new InvalidOptionError('service', `must name one of the services (${services.names.join(', ')})`)
    }
    resolver = services.resolver(defaultService ?? (services.names[0] as string))
  } else if (defaultService !== undefined) {
    throw new InvalidOptionError('service', 'needs `services` (from createServiceResolvers())')
  } else if (given !== undefined) {
    if (typeof given !== 'object' || given === null || typeof given.check !== 'function') {
      throw new InvalidOptionError('resolver', 'must be a MembershipResolver from createMembershipResolver()')
    }
    if (resolverOptions.baseUrl !== undefined) {
      throw new InvalidOptionError('resolver', 'give either `resolver` or `baseUrl` (with resolver options), not both')
    }
    // The resolver was made with its own options: one given here would not be in force.
    refuseIgnored(resolverOptions, 'with `resolver`, give it to createMembershipResolver()')
    resolver = given
  } else {
    resolver = createMembershipResolver(resolverOptions)
  }
  const renderer = createHttpErrorRenderer({ realm, retryAfter })

  function prepare(requirement: Requirement): Requirement {
    if (services === undefined) resolver.assertRequirement(requirement)
    else services.prepare(requirement)
    return requirement
  }

  // Requirements computed per request, found again by what they require.
  const interner = createRequirementInterner(prepare, named)

  function declare(requirement: Requirement): Requirement {
    prepare(requirement)
    interner.declare(requirement)
    return requirement
  }

  function computedGroup<I>(groupId: (input: I) => string, role?: string): RequirementOf<I> {
    // The role is the route's, not the request's: checked now, as a static one would be.
    const probe = group('voot-guard:role-check', role)
    if (services === undefined) resolver.assertRequirement(probe)
    // This guard's ids, looked up by the id itself (no key built on the warm path); the
    // core's table makes each one the object an equal requirement already is.
    const byId = new Map<string, Requirement>()
    return (input) => {
      const id = groupId(input)
      const known = byId.get(id)
      if (known !== undefined) return known
      let requirement: Requirement
      try {
        requirement = interner.group(id, role)
      } catch (error) {
        throw renderer.toHttpError(error) ?? error
      }
      if (byId.size >= MAX_COMPUTED_REQUIREMENTS) byId.delete(byId.keys().next().value as string)
      byId.set(id, requirement)
      return requirement
    }
  }

  function computedRequirement<I>(source: RequirementOf<I>): RequirementOf<I> {
    return (input) => {
      try {
        return interner.requirement(source(input))
      } catch (error) {
        const answered = refused(error, named)
        throw renderer.toHttpError(answered) ?? answered
      }
    }
  }

  function fail(error: unknown): never {
    throw renderer.toHttpError(error) ?? error
  }

  /** The refusal of a denied decision: the requirement named (unless `denials: 'generic'`), the reason carried. */
  function refusal(requirement: Requirement, decision: Decision): unknown {
    const reason = decision.reason as DenialReason
    const forbidden = named ? new ForbiddenError(requiredText(requirement), { reason }) : new ForbiddenError(undefined, { reason })
    return renderer.toHttpError(forbidden) ?? forbidden
  }

  // A resolver of ours reads a header's token in place (`checkAt`); found once, here.
  const checkAt = services === undefined ? checkAtOf(resolver) : undefined

  /** The request's context once `decided` allows it, else the refusal. */
  // eslint-disable-next-line max-params -- the decision, and what the request's context is made of
  function settle(
    decided: Decision | Promise<Decision>,
    requirement: Requirement,
    chosen: MembershipResolver,
    token: string,
    options: ResolveOptions,
  ): VootContext | Promise<VootContext> {
    if (decided instanceof Promise) {
      return decided.then((decision) => {
        if (!decision.allowed) throw refusal(requirement, decision)
        return new RequestContext(chosen, token, options, decision)
      }, fail)
    }
    return decided.allowed ? new RequestContext(chosen, token, options, decided) : Promise.reject(refusal(requirement, decided))
  }

  function authorizeNow(credentials: Credentials, requirement: Requirement): VootContext | Promise<VootContext> {
    // The usual case: a header of the usual shape, for a resolver of ours. Its token is
    // digested in place, unchecked: a warm hit proves it was checked before, and a miss is
    // checked there (`isBearerCandidate`). It is sliced out for the request's context only.
    if (checkAt !== undefined && 'authorization' in credentials) {
      const header = credentials.authorization
      if (isBearerCandidate(header)) {
        const decided = checkAt(header, BEARER_TOKEN_START, requirement, NO_OPTIONS)
        return settle(decided, requirement, resolver, header.slice(BEARER_TOKEN_START), NO_OPTIONS)
      }
    }
    let token: string
    let options: ResolveOptions
    let service: string | undefined
    try {
      if ('authorization' in credentials) {
        // Any other header, a resolver of someone else's, and the choice among several
        // services (it reads a JWT's `iss`): only checked tokens.
        token = extractBearerToken(credentials.authorization)
        options = NO_OPTIONS
        service = services === undefined ? undefined : chooseService(services, token, undefined, defaultService)
      } else {
        let named: string | undefined
        ;({ token, options, service: named } = readFoundToken(credentials))
        service = chooseService(services, token, named, defaultService)
      }
    } catch (error) {
      return Promise.reject(renderer.toHttpError(error) ?? error)
    }
    if (services !== undefined && service !== undefined) {
      return settle(services.checkNow(token, requirement, service, options), requirement, services.resolver(service), token, options)
    }
    // A resolver of someone else's may lack `checkNow`, or answer `check` with a thenable.
    const decided =
      resolver.checkNow === undefined
        ? Promise.resolve(resolver.check(token, requirement, options))
        : resolver.checkNow(token, requirement, options)
    return settle(decided, requirement, resolver, token, options)
  }

  return {
    resolver,
    services,
    realm,
    delegateErrors: errorHandling === 'delegate',
    prepare: declare,
    groupRequirement: (groupId, role) => declare(group(groupId, role)),
    groupsRequirement(mode, groupIds, role) {
      if (!Array.isArray(groupIds) || groupIds.length === 0) {
        throw new InvalidArgumentError('requireAnyGroup()/requireAllGroups(): groupIds must be a non-empty array of group ids')
      }
      // Each id is checked by group(), whatever its type.
      const parts = (groupIds as readonly string[]).map((id) => group(id, role))
      return declare(mode === 'any' ? anyOf(...parts) : allOf(...parts))
    },
    computedGroup,
    computedRequirement,
    authorizeNow,
    answer: (error, accept) => renderer.answer(error, accept),
  }
}

/** Refuses the first resolver option given where it would not be in force, naming it and `where` it belongs. */
function refuseIgnored(resolverOptions: Readonly<Record<string, unknown>>, where: string): void {
  const ignored = Object.entries(resolverOptions).find(([, value]) => value !== undefined)
  if (ignored !== undefined) throw new InvalidOptionError(ignored[0], `is a resolver option: ${where}`)
}

/**
 * The requirement behind every adapter's `authenticate()`.
 *
 * @example
 * ```ts
 * const context = await core.authorizeNow({ authorization: req.headers.authorization }, AUTHENTICATED)
 * ```
 */
export const AUTHENTICATED: Requirement = authenticated()

/**
 * The guard factories every adapter offers, for a framework whose middleware type is `M`;
 * `O` types the middleware of `authenticate({ optional: true })` where the framework types
 * what a middleware gives the handler (Hono's `c.var.voot`, `protect`'s `voot` may then be
 * `undefined`), `M` elsewhere. `I` is the framework's request (Express `req`, Koa `ctx`,
 * Fastify `request`, Hono `c`, fetch `Request`) that a requirement may be computed from.
 *
 * @example
 * ```ts
 * const guard: Guards<RequestHandler, RequestHandler, Request> = createGuard({ baseUrl })
 * app.get('/staff', guard.requireGroup('fc:org:example.org', 'admin'), handler)
 * app.get('/courses/:id', guard.requireGroup((req) => `fc:fs:fs:emne:example.org:${req.params.id}:1`, 'admin'), handler)
 * ```
 */
export interface Guards<M, O = M, I = never> {
  /** The resolver behind the guards (for `invalidate`, `stats`, direct checks). */
  readonly resolver: MembershipResolver
  /**
   * Active membership of `groupId` with at least `role` (default any role). `groupId` may
   * be a function of the request, called once per request: an id it returns that
   * `assertGroupId` refuses (empty, too long, control characters, not a string) is a 403
   * `forbidden` without a call.
   */
  requireGroup(groupId: string | ((input: I) => string), role?: string): M
  /** Active membership of at least one of `groupIds` with at least `role`. */
  requireAnyGroup(groupIds: readonly string[], role?: string): M
  /** Active membership of every one of `groupIds` with at least `role`. */
  requireAllGroups(groupIds: readonly string[], role?: string): M
  /**
   * Any requirement built with `group`, `anyOf`, `allOf`, `groupOfType`, `where`; or a
   * function of the request that builds one, called once per request (a group id its
   * `group()` refuses is a 403 `forbidden` without a call; any other error it throws is a 500).
   */
  require(requirement: Requirement | RequirementOf<I>): M
  /**
   * A valid personal token with the groups scope, nothing more. With `{ optional: true }`,
   * a request that presents no credentials goes on without a context (see
   * {@link AuthenticateOptions}); one that presents any is answered as without the option.
   */
  authenticate(options: AuthenticateOptions & { readonly optional: true }): O
  authenticate(options?: AuthenticateOptions & { readonly optional?: false }): M
  authenticate(options: AuthenticateOptions): M | O
  /** What a readiness probe needs: the resolver's {@link MembershipResolver.health}. */
  health(): ResolverHealth
  /**
   * Resolves once the group service answered like one (`resolver.verify()`); rejects with
   * an `UpstreamError` naming the likely mistake otherwise. Await it at start-up to fail
   * there instead of on the first user.
   */
  ready(options?: { signal?: AbortSignal }): Promise<void>
}

/**
 * Builds the {@link Guards} of an adapter from its one framework-specific piece: a function
 * that turns a validated requirement (or a requirement computed per request from the
 * framework's request `I`) into a middleware. Requirements are validated here, when the
 * route is declared. `optional` is true for `authenticate({ optional: true })`:
 * the middleware then lets a request through without a context when `isAnonymous` says it
 * presents no credentials (an adapter that ignores it answers such a route as
 * `authenticate()`, which fails closed).
 *
 * @example
 * ```ts
 * const guards = createGuards(core, (requirement, optional) => (req, res, next) => { ... })
 * ```
 */
export function createGuards<M, O = M, I = never>(
  core: GuardCore,
  middleware: {
    (requirement: Requirement | RequirementOf<I>, optional: false): M
    (requirement: Requirement, optional: true): O
  },
): Guards<M, O, I> {
  function authenticate(options?: AuthenticateOptions): M | O {
    return readAuthenticateOptions(options, 'authenticate()') ? middleware(AUTHENTICATED, true) : middleware(AUTHENTICATED, false)
  }
  // Each factory refuses to run as a middleware itself (`app.use(guard.authenticate)`), saying to call it.
  return {
    resolver: core.resolver,
    requireGroup: refuseUncalled(
      'requireGroup',
      2,
      GUARD_FACTORY_CALLS.requireGroup,
      (groupId: string | ((input: I) => string), role?: string) =>
        middleware(typeof groupId === 'function' ? core.computedGroup(groupId, role) : core.groupRequirement(groupId, role), false),
    ),
    requireAnyGroup: refuseUncalled(
      'requireAnyGroup',
      2,
      GUARD_FACTORY_CALLS.requireAnyGroup,
      (groupIds: readonly string[], role?: string) => middleware(core.groupsRequirement('any', groupIds, role), false),
    ),
    requireAllGroups: refuseUncalled(
      'requireAllGroups',
      2,
      GUARD_FACTORY_CALLS.requireAllGroups,
      (groupIds: readonly string[], role?: string) => middleware(core.groupsRequirement('all', groupIds, role), false),
    ),
    require: refuseUncalled('require', 1, GUARD_FACTORY_CALLS.require, (requirement: Requirement | RequirementOf<I>) =>
      middleware(typeof requirement === 'function' ? core.computedRequirement(requirement) : core.prepare(requirement), false),
    ),
    // The overloads narrow what the flag decides at run time.
    authenticate: refuseUncalled('authenticate', 1, GUARD_FACTORY_CALLS.authenticate, authenticate) as Guards<M, O>['authenticate'],
    health: () => core.resolver.health(),
    ready: (options) => (core.services === undefined ? core.resolver.verify(options) : core.services.verify(options)),
  }
}
