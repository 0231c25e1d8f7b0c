/**
 * Koa adapter (Koa 2 and 3): route guards over the framework-agnostic core.
 *
 * @example
 * ```ts
 * import Koa from 'koa'
 * import { createGuard } from 'voot-guard/koa'
 *
 * const guard = createGuard({ baseUrl: 'https://groups-api.example.org/groups', realm: 'my-app' })
 * const app = new Koa()
 * app.use(guard.requireGroup('fc:org:example.org', 'admin'))
 * app.use((ctx) => { ctx.body = { reason: ctx.state.voot?.decision.reason } })
 * ```
 *
 * @module
 */
import type { Context, Middleware, Next } from 'koa'
import {
  AUTHENTICATED,
  createGuardCore,
  InvalidOptionError,
  type Credentials,
  type GuardOptions,
  type MembershipResolver,
  type Requirement,
  type VootContext,
} from '../../src/index.js'

declare module 'koa' {
  interface DefaultState {
    /** Set by a voot-guard guard once it allowed the request. */
    voot?: VootContext
  }
}

/**
 * Options of the Koa {@link createGuard}: the core's options plus where the token comes from.
 *
 * @example
 * ```ts
 * const guard = createGuard({ baseUrl, getToken: (ctx) => ctx.cookies.get('access_token') })
 * ```
 */
export interface KoaGuardOptions extends GuardOptions {
  /** Finds the token elsewhere than the `Authorization` header (return `undefined` for none). */
  getToken?: (ctx: Context) => string | undefined
}

/**
 * The guards of one configuration; each factory returns a Koa middleware.
 *
 * @example
 * ```ts
 * router.get('/admin', guard.requireGroup('fc:adhoc:1234', 'admin'), handler)
 * ```
 */
export interface KoaGuard {
  /** The resolver behind the guards (for `invalidate`, `stats`, direct checks). */
  readonly resolver: MembershipResolver
  /** Active membership of `groupId` with at least `role`. */
  requireGroup(groupId: string, role?: string): Middleware
  /** Active membership of at least one of `groupIds` with at least `role`. */
  requireAnyGroup(groupIds: readonly string[], role?: string): Middleware
  /** Active membership of every one of `groupIds` with at least `role`. */
  requireAllGroups(groupIds: readonly string[], role?: string): Middleware
  /** Any requirement built with `group`, `anyOf`, `allOf`, `groupOfType`, `where`. */
  require(requirement: Requirement): Middleware
  /** A valid personal token with the groups scope, nothing more. */
  authenticate(): Middleware
}

/**
 * Creates the Koa guards. Options are validated here; each guard's arguments are
 * validated when the route is declared.
 *
 * @example
 * ```ts
 * const guard = createGuard({ baseUrl: 'https://groups-api.example.org/groups', errorHandling: 'delegate' })
 * app.use(guard.authenticate())
 * ```
 */
export function createGuard(options: KoaGuardOptions): KoaGuard {
  const { getToken, ...coreOptions } = options
  if (getToken !== undefined && typeof getToken !== 'function') {
    throw new InvalidOptionError('getToken', 'must be a function')
  }
  const core = createGuardCore(coreOptions)

  function credentialsOf(ctx: Context): Credentials {
    return getToken === undefined ? { authorization: ctx.headers.authorization } : { token: getToken(ctx) }
  }

  function middleware(requirement: Requirement): Middleware {
    return async (ctx: Context, next: Next): Promise<void> => {
      let context: VootContext
      try {
        context = await core.authorize(credentialsOf(ctx), requirement)
      } catch (error) {
        const answer = core.delegateErrors ? undefined : core.answer(error)
        // Koa's own error handling reads `status`, `headers` and `expose` from the error.
        if (answer === undefined) throw error
        ctx.status = answer.status
        ctx.set(answer.headers)
        ctx.body = JSON.stringify(answer.body)
        // Setting a string body makes Koa pick text/html; the contract says JSON.
        ctx.type = answer.headers['content-type'] ?? 'application/json; charset=utf-8'
        return
      }
      ctx.state.voot = context
      await next()
    }
  }

  return {
    resolver: core.resolver,
    requireGroup: (groupId, role) => middleware(core.groupRequirement(groupId, role)),
    requireAnyGroup: (groupIds, role) => middleware(core.groupsRequirement('any', groupIds, role)),
    requireAllGroups: (groupIds, role) => middleware(core.groupsRequirement('all', groupIds, role)),
    require: (requirement) => middleware(core.prepare(requirement)),
    authenticate: () => middleware(AUTHENTICATED),
  }
}
