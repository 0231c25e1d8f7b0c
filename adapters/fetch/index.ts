/**
 * Web-standard fetch adapter: guards for any `(request: Request) => Response` handler
 * (Next.js route handlers, Bun.serve, Deno.serve, `@hono/node-server`, workers), with the
 * runtime's global `Request` and `Response` only.
 *
 * @example
 * ```ts
 * import { createGuard } from 'voot-guard/fetch'
 *
 * const guard = createGuard({ baseUrl: 'https://groups-api.example.org/groups', realm: 'my-app' })
 * export const GET = guard.protect(guard.requireGroup('fc:org:example.org', 'admin'), (request, voot) =>
 *   Response.json({ reason: voot.decision.reason }),
 * )
 * ```
 *
 * @module
 */
import {
  answerResponse,
  authorizationOfHeaders,
  createGuardFlow,
  createGuards,
  type FrameworkIO,
  type GuardOptions,
  type Guards,
  type RequirementOf,
  type TokenSource,
  type VootContext,
  withResponse,
} from '../../src/adapter-kit.js'
import { InvalidArgumentError, type Requirement } from '../../src/index.js'
import { isRequirement } from '../../src/adapter-kit.js'

// The error a delegating guard throws, and its test, where fetch users look for them.
export { isHttpError, type HttpError } from '../../src/adapter-kit.js'

/**
 * Options of the fetch {@link createGuard}: the core's options plus where the token comes
 * from.
 *
 * @example
 * ```ts
 * const guard = createGuard({ baseUrl, getToken: (request) => request.headers.get('x-access-token') ?? undefined })
 * ```
 */
export interface FetchGuardOptions extends GuardOptions {
  /**
   * Finds the token elsewhere than the `Authorization` header: return the token, or
   * `{ token, expiresAt }` so that no cached answer outlives it, or `undefined` for none.
   */
  getToken?: TokenSource<Request>
}

/**
 * A guard: resolves with the {@link VootContext} when the request is allowed, or with the
 * refusal, a `Response` to return as it is. With `errorHandling: 'delegate'` it rejects
 * with an `HttpError` (`status`, `headers`, `toResponse()`) instead.
 *
 * @example
 * ```ts
 * const voot = await guard.requireGroup('fc:org:example.org', 'admin')(request)
 * if (voot instanceof Response) return voot
 * ```
 */
export type FetchCheck = (request: Request) => Promise<VootContext | Response>

/**
 * The guard of `authenticate({ optional: true })`: like a {@link FetchCheck}, but it
 * resolves with `undefined` when the request presented no credentials at all.
 *
 * @example
 * ```ts
 * const voot = await guard.authenticate({ optional: true })(request)
 * if (voot instanceof Response) return voot // presented credentials, and they were refused
 * return new Response(voot === undefined ? 'Hello, stranger' : 'Welcome back')
 * ```
 */
export type OptionalFetchCheck = (request: Request) => Promise<VootContext | Response | undefined>

/**
 * The guards of one configuration, plus {@link FetchGuard.protect} to wrap a handler.
 *
 * @example
 * ```ts
 * const staffOnly = guard.requireGroup('fc:org:example.org', 'admin')
 * ```
 */
export interface FetchGuard extends Guards<FetchCheck, OptionalFetchCheck, Request> {
  /**
   * Wraps a handler: it runs with the {@link VootContext} after its `request` (and every
   * further argument, such as a Next.js route context, after that) once `check` allows the
   * request; otherwise the refusal is returned. `check` is a guard of this same guard
   * object or a requirement (`group(id, 'admin')`, `anyOf(...)`), validated here. A warm
   * cache calls the handler synchronously. With `authenticate({ optional: true })` as
   * `check`, the handler runs with `voot` `undefined` for a request without credentials.
   */
  protect<A extends unknown[], R extends Response | Promise<Response>>(
    check: FetchCheck | Requirement,
    handler: (request: Request, voot: VootContext, ...rest: A) => R,
  ): (request: Request, ...rest: A) => R | Promise<Response>
  protect<A extends unknown[], R extends Response | Promise<Response>>(
    check: OptionalFetchCheck,
    handler: (request: Request, voot: VootContext | undefined, ...rest: A) => R,
  ): (request: Request, ...rest: A) => R | Promise<Response>
}

/**
 * Creates the fetch guards. Options are validated here; each guard's arguments are
 * validated when it is made.
 *
 * @example
 * ```ts
 * const guard = createGuard({ baseUrl: 'https://groups-api.example.org/groups' })
 * Bun.serve({ fetch: guard.protect(group('fc:org:example.org'), (request, voot) => new Response('hello')) })
 * ```
 */
export function createGuard(options: FetchGuardOptions): FetchGuard {
  const flow = createGuardFlow(options, fetchIO)
  const { core } = flow
  // Each check's own step (its requirement validated, its optional flag kept), which `protect` reuses.
  type Step = ReturnType<typeof flow.guard>
  const stepOf = new WeakMap<FetchCheck | OptionalFetchCheck, Step>()

  function check(requirement: Requirement | RequirementOf<Request>, optional: false): FetchCheck
  function check(requirement: Requirement, optional: true): OptionalFetchCheck
  function check(requirement: Requirement | RequirementOf<Request>, optional: boolean): FetchCheck | OptionalFetchCheck {
    const step = flow.guard(requirement, optional)
    const guard: OptionalFetchCheck = async (request) => step(request, undefined, undefined)
    stepOf.set(guard, step)
    return guard
  }

  const guards = createGuards<FetchCheck, OptionalFetchCheck, Request>(core, check)

  /** The factory `given` is, when `protect` got one uncalled (`protect(guard.authenticate, handler)`). */
  function uncalledFactory(given: unknown): string | undefined {
    return FACTORIES.find((name) => given === guards[name])
  }

  return {
    ...guards,
    protect<A extends unknown[], R extends Response | Promise<Response>>(
      given: FetchCheck | OptionalFetchCheck | Requirement,
      handler: (request: Request, voot: VootContext, ...rest: A) => R,
    ) {
      const step = typeof given === 'function' ? stepOf.get(given) : isRequirement(given) ? flow.guard(given, false) : undefined
      if (step === undefined) {
        const factory = uncalledFactory(given)
        if (factory !== undefined) {
          const call = factory === 'authenticate' ? 'guard.authenticate()' : `guard.${factory}(...)`
          throw new InvalidArgumentError(`protect(): check is guard.${factory} itself, not a guard: call it: \`${call}\``)
        }
        throw new InvalidArgumentError('protect(): check must be a guard of the same guard object or a requirement (group(), anyOf(), ...)')
      }
      if (typeof handler !== 'function') throw new InvalidArgumentError('protect(): handler must be a function')
      // The handler of an optional check is typed to take `undefined` (the second overload).
      const run = handler as (request: Request, voot: VootContext | undefined, ...rest: A) => R
      return (request: Request, ...rest: A): R | Promise<Response> => {
        const decided = step(request, undefined, undefined)
        if (decided instanceof Promise) {
          return decided.then((result) => (result instanceof Response ? result : run(request, result, ...rest)))
        }
        return decided instanceof Response ? Promise.resolve(decided) : run(request, decided, ...rest)
      }
    },
  }
}

/** The guard factories, which `protect` names when it is handed one uncalled. */
const FACTORIES = ['authenticate', 'requireGroup', 'requireAnyGroup', 'requireAllGroups', 'require'] as const

/** The input and output of a fetch handler: the context (or `undefined`) to go on with, or the refusal. */
const fetchIO: FrameworkIO<Request, undefined, undefined, VootContext | Response | undefined> = {
  authorization: (request) => authorizationOfHeaders(request.headers),
  accept: (request) => request.headers.get('accept'),
  allow: (context) => context,
  respond: ({ answer }) => answerResponse(answer),
  delegate({ error, answer }) {
    throw withResponse(error, answer)
  },
  fail(error) {
    throw error
  },
}
