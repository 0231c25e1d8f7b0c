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
  createGuardFlow,
  createGuards,
  type FrameworkIO,
  type GuardOptions,
  type Guards,
  type TokenSource,
  type VootContext,
} from '../../src/adapter-kit.js'

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
  getToken?: TokenSource<Context>
}

/**
 * The guards of one configuration; each factory returns a Koa middleware.
 *
 * @example
 * ```ts
 * const staffOnly = guard.requireGroup('fc:org:example.org', 'admin')
 * ```
 */
export type KoaGuard = Guards<Middleware, Middleware, Context>

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
  const flow = createGuardFlow(options, koa)
  return createGuards<Middleware, Middleware, Context>(flow.core, (requirement, optional): Middleware => {
    const step = flow.guard(requirement, optional)
    return (ctx, next) => Promise.resolve(step(ctx, next, undefined))
  })
}

/** Koa's input and output. */
const koa: FrameworkIO<Context, Next, undefined, Promise<void> | undefined> = {
  authorization: (ctx) => authorizationOf(ctx.req),
  accept: (ctx) => ctx.get('accept'),
  allow(context, ctx, next) {
    // authenticate({ optional: true }) without credentials: on, with no `ctx.state.voot`.
    if (context !== undefined) ctx.state.voot = context
    return next()
  },
  respond({ answer }, ctx) {
    ctx.status = answer.status
    ctx.set(answer.headers)
    ctx.body = answer.text
    // Setting a string body makes Koa pick text/html; the contract says JSON.
    ctx.type = answer.headers['content-type'] ?? 'application/json; charset=utf-8'
    return undefined
  },
  // Koa's own error handling reads `status`, `headers` and `expose` from the error.
  fail(error) {
    throw error
  },
}
