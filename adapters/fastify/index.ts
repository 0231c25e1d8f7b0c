/**
 * Fastify adapter (Fastify 5): route guards as `onRequest` hooks, and a plugin that puts
 * the same guards on `app.voot`.
 *
 * @example
 * ```ts
 * import Fastify from 'fastify'
 * import vootGuard from 'voot-guard/fastify'
 *
 * const app = Fastify()
 * await app.register(vootGuard, { baseUrl: 'https://groups-api.example.org/groups', realm: 'my-app' })
 * app.get('/staff', { onRequest: app.voot.requireGroup('fc:org:example.org', 'admin') }, async (request) => {
 *   return { reason: request.voot?.decision.reason }
 * })
 * ```
 *
 * @module
 */
import type {
  FastifyError,
  FastifyPluginCallback,
  FastifyReply,
  FastifyRequest,
  HookHandlerDoneFunction,
  onRequestHookHandler,
} from 'fastify'
import fp from 'fastify-plugin'
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

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by a voot-guard guard once it allowed the request; `null` where no guard ran. */
    voot: VootContext | null
  }
  interface FastifyInstance {
    /** The guards of the registered voot-guard plugin. */
    voot: FastifyGuard
  }
}

/**
 * Options of the Fastify {@link createGuard} and plugin: the core's options plus where the
 * token comes from.
 *
 * @example
 * ```ts
 * const guard = createGuard({ baseUrl, getToken: (request) => request.cookies.access_token })
 * ```
 */
export interface FastifyGuardOptions extends GuardOptions {
  /**
   * Finds the token elsewhere than the `Authorization` header: return the token, or
   * `{ token, expiresAt }` so that no cached answer outlives it, or `undefined` for none.
   */
  getToken?: TokenSource<FastifyRequest>
}

/**
 * The guards of one configuration; each factory returns an `onRequest` hook (callback
 * style, so that an allowed request on a warm cache costs no promise).
 *
 * @example
 * ```ts
 * app.get('/staff', { onRequest: guard.requireGroup('fc:org:example.org', 'admin') }, handler)
 * ```
 */
export type FastifyGuard = Guards<onRequestHookHandler, onRequestHookHandler, FastifyRequest>

/**
 * Creates the Fastify guards. Options are validated here; each guard's arguments are
 * validated when the route is declared. A refusal is answered with the JSON contract, or
 * with `errorHandling: 'delegate'` passed on as an error carrying `statusCode` and
 * `headers`, which Fastify's error handler (or yours) sends; delegated guards also compose
 * in `@fastify/auth`, whose `or` relation needs refusals as errors.
 *
 * @example
 * ```ts
 * const guard = createGuard({ baseUrl: 'https://groups-api.example.org/groups' })
 * app.get('/teachers', { onRequest: guard.requireAnyGroup(['fc:gogroup:a', 'fc:gogroup:b'], 'admin') }, handler)
 * ```
 */
export function createGuard(options: FastifyGuardOptions): FastifyGuard {
  const flow = createGuardFlow(options, fastify)
  return createGuards<onRequestHookHandler, onRequestHookHandler, FastifyRequest>(
    flow.core,
    (requirement, optional): onRequestHookHandler => {
      const step = flow.guard(requirement, optional)
      // Callback style, so that an allowed request on a warm cache costs no promise; Fastify
      // must not also see the promise of a cold one, or it would go on twice.
      return function vootGuard(request, reply, done): void {
        void step(request, reply, done)
      }
    },
  )
}

/** Fastify's input and output. */
const fastify: FrameworkIO<FastifyRequest, FastifyReply, HookHandlerDoneFunction, void> = {
  authorization: (request) => authorizationOf(request.raw),
  accept: (request) => request.headers.accept,
  allow(context, request, _reply, done) {
    // authenticate({ optional: true }) without credentials: `request.voot` null, as the
    // plugin decorates it (set here too for guards made without the plugin).
    request.voot = context ?? null
    done()
  },
  respond({ answer }, _request, reply) {
    reply.code(answer.status).headers(answer.headers).send(answer.text)
  },
  // Delegated and unexpected errors go to Fastify's error handling, which reads
  // `statusCode` and `headers` from the error (a bug stays a 500).
  fail(error, _request, _reply, done) {
    done(error as FastifyError)
  },
}

/**
 * The plugin: `app.register(vootGuard, options)` decorates `app.voot` with the guards of
 * {@link createGuard} and `request.voot` with `null`, so requests keep one shape.
 * Wrapped with `fastify-plugin`, so `app.voot` reaches the whole app.
 *
 * @example
 * ```ts
 * await app.register(vootGuard, { baseUrl: 'https://groups-api.example.org/groups' })
 * app.get('/me', { onRequest: app.voot.authenticate() }, async (request) => request.voot?.decision)
 * ```
 */
const plugin: FastifyPluginCallback<FastifyGuardOptions> = (app, options, done) => {
  let guard: FastifyGuard
  try {
    guard = createGuard(options)
  } catch (error) {
    done(error as Error)
    return
  }
  app.decorate('voot', guard)
  app.decorateRequest('voot', null)
  done()
}

/**
 * The voot-guard Fastify plugin (see {@link createGuard} for the options).
 *
 * @example
 * ```ts
 * import vootGuard from 'voot-guard/fastify'
 * await app.register(vootGuard, { baseUrl: 'https://groups-api.example.org/groups' })
 * ```
 */
const vootGuard = fp(plugin, { fastify: '5.x', name: 'voot-guard' })
export default vootGuard
