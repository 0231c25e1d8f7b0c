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
  authorizationOf,
  createCredentialsReader,
  createGuardCore,
  createGuards,
  isAnonymous,
  splitGuardOptions,
  type Credentials,
  type FoundToken,
  type GuardOptions,
  type Guards,
  type VootContext,
} from '../../src/adapter-kit.js'
import type { Requirement } from '../../src/index.js'

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
  /**
   * Finds the token elsewhere than the `Authorization` header: return the token, or
   * `{ token, expiresAt }` so that no cached answer outlives it, or `undefined` for none.
   */
  getToken?: (ctx: Context) => FoundToken
}

/**
 * The guards of one configuration; each factory returns a Koa middleware.
 *
 * @example
 * ```ts
 * const staffOnly = guard.requireGroup('fc:org:example.org', 'admin')
 * ```
 */
export type KoaGuard = Guards<Middleware>

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
  const { getToken, coreOptions } = splitGuardOptions(options)
  const credentialsOf = createCredentialsReader(getToken, (ctx: Context) => authorizationOf(ctx.req))
  const core = createGuardCore(coreOptions)

  /** The general path: the context once decided, or the contract's answer (or a thrown error). */
  async function settle(ctx: Context, next: Next, decided: Promise<VootContext>): Promise<void> {
    let context: VootContext
    try {
      context = await decided
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

  function middleware(requirement: Requirement, optional: boolean): Middleware {
    return (ctx: Context, next: Next): Promise<void> => {
      let credentials: Credentials
      try {
        credentials = credentialsOf(ctx)
      } catch (error) {
        return settle(ctx, next, Promise.reject(error))
      }
      // authenticate({ optional: true }) without credentials: on, with no `ctx.state.voot`.
      if (optional && isAnonymous(credentials)) return next()
      // Warm cache: decided synchronously, without an extra async frame per request.
      const result = core.authorizeNow(credentials, requirement)
      if (result instanceof Promise) return settle(ctx, next, result)
      ctx.state.voot = result
      return next()
    }
  }

  return createGuards(core, middleware)
}
