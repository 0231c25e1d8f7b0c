/**
 * Hono adapter (Hono 4): route guards as middleware with a typed `voot` variable.
 *
 * @example
 * ```ts
 * import { Hono } from 'hono'
 * import { createGuard } from 'voot-guard/hono'
 *
 * const guard = createGuard({ baseUrl: 'https://groups-api.example.org/groups', realm: 'my-app' })
 * const app = new Hono()
 * app.get('/staff', guard.requireGroup('fc:org:example.org', 'admin'), (c) => c.json({ reason: c.var.voot.decision.reason }))
 * ```
 *
 * @module
 */
import type { Context, MiddlewareHandler, Next } from 'hono'
import { createMiddleware } from 'hono/factory'
import { HTTPException } from 'hono/http-exception'
import type { ContentfulStatusCode } from 'hono/utils/http-status'
import {
  answerResponse,
  authorizationOf,
  authorizationOfHeaders,
  createGuardFlow,
  createGuards,
  type FrameworkIO,
  type GuardOptions,
  type Guards,
  type RequestHeaders,
  type RequirementOf,
  type TokenSource,
  type VootContext,
} from '../../src/adapter-kit.js'
import type { Requirement } from '../../src/index.js'

/**
 * The Hono environment a guard adds to a route: `c.var.voot` / `c.get('voot')`.
 *
 * @example
 * ```ts
 * const app = new Hono<VootEnv>()
 * app.use('/api/*', guard.authenticate())
 * app.get('/api/me', (c) => c.json(c.var.voot.decision))
 * ```
 */
export interface VootEnv {
  Variables: {
    /** Set by a voot-guard guard once it allowed the request. */
    voot: VootContext
  }
}

/**
 * The Hono environment of `authenticate({ optional: true })`: `c.var.voot` is `undefined`
 * when the request presented no credentials.
 *
 * @example
 * ```ts
 * app.get('/', guard.authenticate({ optional: true }), (c) => c.text(c.var.voot === undefined ? 'Hello, stranger' : 'Welcome back'))
 * ```
 */
export interface OptionalVootEnv {
  Variables: {
    /** Set by the guard when the request presented valid credentials; `undefined` when it presented none. */
    voot: VootContext | undefined
  }
}

/**
 * Options of the Hono {@link createGuard}: the core's options plus where the token comes
 * from.
 *
 * @example
 * ```ts
 * const guard = createGuard({ baseUrl, getToken: (c) => getCookie(c, 'access_token') })
 * ```
 */
export interface HonoGuardOptions extends GuardOptions {
  /**
   * Finds the token elsewhere than the `Authorization` header: return the token, or
   * `{ token, expiresAt }` so that no cached answer outlives it, or `undefined` for none.
   */
  getToken?: TokenSource<Context>
}

/**
 * The guards of one configuration; each factory returns a Hono middleware.
 *
 * @example
 * ```ts
 * const staffOnly = guard.requireGroup('fc:org:example.org', 'admin')
 * ```
 */
export type HonoGuard = Guards<MiddlewareHandler<VootEnv>, MiddlewareHandler<OptionalVootEnv>, Context>

/**
 * The `Authorization` value. On Node (`@hono/node-server`, whose bindings hold Node's request
 * as `c.env.incoming`) from the raw header list: it tells two headers apart exactly, and
 * costs a few times less than `c.req.raw.headers`, which builds a `HonoRequest` and a
 * `Headers` view. Elsewhere from the Web headers, which join repeated headers with ", ";
 * the kit splits them again.
 */
function authorizationOfContext(c: Context): string | readonly string[] | undefined {
  const incoming = (c.env as { incoming?: RequestHeaders } | undefined)?.incoming
  return Array.isArray(incoming?.rawHeaders) ? authorizationOf(incoming) : authorizationOfHeaders(c.req.raw.headers)
}

/**
 * Creates the Hono guards. Options are validated here; each guard's arguments are
 * validated when the route is declared. With `errorHandling: 'delegate'` a refusal is
 * thrown as an `HTTPException` whose `res` is the contract's answer and whose `cause` is
 * the `VootError`, for `app.onError`.
 *
 * @example
 * ```ts
 * const guard = createGuard({ baseUrl: 'https://groups-api.example.org/groups' })
 * app.get('/teachers', guard.requireAnyGroup(['fc:gogroup:a', 'fc:gogroup:b'], 'admin'), handler)
 * ```
 */
export function createGuard(options: HonoGuardOptions): HonoGuard {
  const flow = createGuardFlow(options, hono)
  function middleware(requirement: Requirement | RequirementOf<Context>, optional: false): MiddlewareHandler<VootEnv>
  function middleware(requirement: Requirement, optional: true): MiddlewareHandler<OptionalVootEnv>
  function middleware(
    requirement: Requirement | RequirementOf<Context>,
    optional: boolean,
  ): MiddlewareHandler<VootEnv> | MiddlewareHandler<OptionalVootEnv> {
    const step = flow.guard(requirement, optional)
    // Hono's compose awaits what a middleware returns, a promise or not: a warm cache
    // goes on without an async frame of the guard's own.
    return createMiddleware<VootEnv>((c, next) => step(c, next, undefined) as Promise<Response | undefined>)
  }
  return createGuards<MiddlewareHandler<VootEnv>, MiddlewareHandler<OptionalVootEnv>, Context>(flow.core, middleware)
}

/** Hono's input and output. */
const hono: FrameworkIO<Context, Next, undefined, Promise<void> | Response> = {
  authorization: authorizationOfContext,
  accept: (c) => c.req.header('accept'),
  allow(context, c, next) {
    // authenticate({ optional: true }) without credentials: on, with `c.var.voot` unset.
    if (context !== undefined) c.set('voot', context)
    return next()
  },
  respond({ answer }, c) {
    // c.json() would drop the charset of the contract's content type.
    return c.body(answer.text, answer.status as ContentfulStatusCode, answer.headers)
  },
  delegate({ error, answer }) {
    throw new HTTPException(answer.status as ContentfulStatusCode, {
      res: answerResponse(answer),
      message: answer.body.error_description,
      cause: error,
    })
  },
  fail(error) {
    throw error
  },
}
