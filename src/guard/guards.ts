/**
 * The guard factories every adapter offers (`requireGroup`, `requireAnyGroup`,
 * `requireAllGroups`, `require`, `authenticate`), built over a guard core from the adapter's
 * one framework-specific piece: a requirement into a middleware.
 *
 * @module
 */
import type { MembershipResolver, ResolverHealth } from '../resolver/index.js'
import { authenticated, type Requirement } from '../decision/requirements.js'
import { readAuthenticateOptions, type AuthenticateOptions } from './optional-sign-in.js'
import { refuseUncalled } from './uncalled-guard.js'
import type { RequirementOf } from './computed-requirement.js'
import type { GuardCore } from './guard.js'

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
    requireGroup: refuseUncalled('requireGroup', 2, (groupId: string | ((input: I) => string), role?: string) =>
      middleware(typeof groupId === 'function' ? core.computedGroup(groupId, role) : core.groupRequirement(groupId, role), false),
    ),
    requireAnyGroup: refuseUncalled('requireAnyGroup', 2, (groupIds: readonly string[], role?: string) =>
      middleware(core.groupsRequirement('any', groupIds, role), false),
    ),
    requireAllGroups: refuseUncalled('requireAllGroups', 2, (groupIds: readonly string[], role?: string) =>
      middleware(core.groupsRequirement('all', groupIds, role), false),
    ),
    require: refuseUncalled('require', 1, (requirement: Requirement | RequirementOf<I>) =>
      middleware(typeof requirement === 'function' ? core.computedRequirement(requirement) : core.prepare(requirement), false),
    ),
    // The overloads narrow what the flag decides at run time.
    authenticate: refuseUncalled('authenticate', 1, authenticate) as Guards<M, O>['authenticate'],
    health: () => core.resolver.health(),
    ready: (options) => (core.services === undefined ? core.resolver.verify(options) : core.services.verify(options)),
  }
}
