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
} from '../resolver/index.js'
import { allOf, anyOf, group, type Requirement } from '../decision/requirements.js'
import { optionsMissing, rejectUnknownKeys } from '../option-checks.js'
import { RESOLVER_OPTION_KEYS } from '../resolver/options.js'
import { chooseService } from '../services/choose-service.js'
import type { ServiceResolvers } from '../services/service-resolvers.js'
import { BEARER_TOKEN_START, extractBearerToken, isBearerCandidate } from '../token.js'
import { checkAtOf } from '../resolver/check-at.js'
import { NO_OPTIONS, readFoundToken, type Credentials } from './credentials.js'
import { RequestContext, type VootContext } from './voot-context.js'
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
