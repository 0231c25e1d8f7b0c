/**
 * The options of `VootGuardModule` and the guard core built from them, shared by the module
 * (which builds it once) and `VootGuard` (which uses it on every request).
 *
 * @module
 */
import { HttpException } from '@nestjs/common'
import type { HttpServer } from '@nestjs/common'
import {
  authorizationOf,
  createGuardFlow,
  type FrameworkIO,
  type GuardCore,
  type GuardOptions,
  type GuardStep,
  type Refusal,
  type RequestHeaders,
  type RequirementOf,
  type TokenSource,
  type VootContext,
} from '../../src/adapter-kit.js'
import { InvalidOptionError, type Requirement } from '../../src/index.js'
import { setVoot } from '../express/request-voot.js'

/**
 * The request `getToken` receives: Express's `req` on `@nestjs/platform-express`, Fastify's
 * `request` on `@nestjs/platform-fastify`.
 *
 * @example
 * ```ts
 * const getToken = (request: NestHttpRequest) => request.session?.accessToken
 * ```
 */
export interface NestHttpRequest {
  readonly headers: Readonly<Record<string, string | string[] | undefined>>
  // Whatever else the platform and the app's middleware put there (a session, cookies).
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- typed by the app (session, cookies), not by us
  readonly [property: string]: any
}

/**
 * Options of `VootGuardModule.forRoot()`: those of every adapter's `createGuard` (a
 * `baseUrl` and resolver options, or a `resolver`; `realm`, `retryAfter`, `errorHandling`)
 * plus where the token comes from.
 *
 * @example
 * ```ts
 * const options: VootGuardModuleOptions = { baseUrl: 'https://groups-api.example.org/groups', realm: 'my-app' }
 * ```
 */
export interface VootGuardModuleOptions extends GuardOptions {
  /**
   * Finds the token elsewhere than the `Authorization` header: return the token, or
   * `{ token, expiresAt }`, or `undefined` for none.
   */
  getToken?: TokenSource<NestHttpRequest>
}

/**
 * Injection token of the {@link NestGuardCore} that `VootGuardModule` provides (for an
 * app's own guards or services: `@Inject(VOOT_GUARD_CORE) core: NestGuardCore`).
 *
 * @example
 * ```ts
 * const { core } = app.get<NestGuardCore>(VOOT_GUARD_CORE)
 * await core.resolver.invalidate(token)
 * ```
 */
export const VOOT_GUARD_CORE = Symbol('voot-guard:core')

/**
 * What a Nest guard runs per request: the request, the platform's response and its HTTP
 * adapter in; `true` (or a promise of it) when the request may go on; a refusal is thrown
 * as an `HttpException`.
 *
 * @example
 * ```ts
 * const step: NestGuardStep = nest.guard(AUTHENTICATED, false)
 * return step(http.getRequest(), http.getResponse(), adapterHost.httpAdapter)
 * ```
 */
export type NestGuardStep = GuardStep<NestHttpRequest, unknown, HttpServer, boolean>

/**
 * The guard core with the module's per-request flow.
 *
 * @example
 * ```ts
 * const { core, guard } = app.get<NestGuardCore>(VOOT_GUARD_CORE)
 * const staff = guard(group('fc:org:example.org', 'admin'), false)
 * ```
 */
export interface NestGuardCore {
  readonly core: GuardCore
  /** Whether the module created the resolver (and so closes it on shutdown). */
  readonly ownsResolver: boolean
  /**
   * The guard of a requirement (validated here), or of one computed per request
   * (`core.computedGroup`, `core.computedRequirement`); `optional` is `Authenticated({ optional: true })`.
   */
  readonly guard: (requirement: Requirement | RequirementOf<NestHttpRequest>, optional: boolean) => NestGuardStep
}

/**
 * Validates the module's options (throwing `InvalidOptionError` naming the option) and
 * builds the core.
 */
export function createNestGuardCore(options: VootGuardModuleOptions): NestGuardCore {
  if (options === undefined || options === null) {
    throw new InvalidOptionError(
      'baseUrl',
      "is required: VootGuardModule.forRoot() was called without options; give it at least the group service's address, such as VootGuardModule.forRoot({ baseUrl: 'https://groups-api.dataporten.no/groups' })",
    )
  }
  const flow = createGuardFlow(options, nest)
  return { core: flow.core, ownsResolver: options.resolver === undefined, guard: flow.guard }
}

/**
 * The contract's headers set on the platform's response, and the body as an
 * `HttpException`: a guard can only throw, and Nest answers the exception with that body
 * and status (Express and Fastify alike keep a JSON content type set before).
 */
function thrown({ error, answer }: Refusal, headers: Readonly<Record<string, string>>, response: unknown, http: HttpServer): HttpException {
  // The content type too: the platform keeps a JSON type already set (problem details).
  for (const name in headers) http.setHeader(response, name, headers[name] as string)
  return new HttpException(answer.body, answer.status, { cause: error })
}

/** Nest's input and output, on the Express and the Fastify platform. */
const nest: FrameworkIO<NestHttpRequest & { voot?: VootContext }, unknown, HttpServer, boolean> = {
  // Express's `req` has Node's raw header list itself; Fastify's `request` keeps it on `.raw`.
  authorization: (request) => authorizationOf((request.rawHeaders === undefined ? request.raw : request) as RequestHeaders),
  accept: (request) => request.headers.accept as string | undefined,
  allow(context, request) {
    // Authenticated({ optional: true }) without credentials: on, with no `voot`.
    if (context !== undefined) setVoot(request, context)
    return true
  },
  respond(refusal, _request, response, http) {
    throw thrown(refusal, refusal.answer.headers, response, http)
  },
  // Delegated, only the protocol's own headers are set; the app's filter owns the rest.
  delegate(refusal, _request, response, http) {
    throw thrown(refusal, refusal.error.headers, response, http)
  },
  fail(error) {
    throw error
  },
}
