/**
 * The options of `VootGuardModule` and the guard core built from them, shared by the module
 * (which builds it once) and `VootGuard` (which uses it on every request).
 *
 * @module
 */
import {
  authorizationOf,
  createCredentialsReader,
  createGuardCore,
  type Credentials,
  type FoundToken,
  type GuardCore,
  type GuardOptions,
  type RequestHeaders,
} from '../../src/adapter-kit.js'

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
  getToken?(request: NestHttpRequest): FoundToken
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
 * The guard core with the module's reader of credentials.
 *
 * @example
 * ```ts
 * const { core, credentialsOf } = createNestGuardCore({ baseUrl })
 * ```
 */
export interface NestGuardCore {
  readonly core: GuardCore
  /** Whether the module created the resolver (and so closes it on shutdown). */
  readonly ownsResolver: boolean
  credentialsOf(request: NestHttpRequest): Credentials
}

/**
 * Validates the module's options (throwing `InvalidOptionError` naming the option) and
 * builds the core.
 */
export function createNestGuardCore(options: VootGuardModuleOptions): NestGuardCore {
  const { getToken, ...coreOptions } = options ?? {}
  // Express's `req` has Node's raw header list itself; Fastify's `request` keeps it on `.raw`.
  const credentialsOf = createCredentialsReader(getToken, (request: NestHttpRequest) =>
    authorizationOf((request.rawHeaders === undefined ? request.raw : request) as RequestHeaders),
  )
  const core = createGuardCore(coreOptions)
  return { core, ownsResolver: coreOptions.resolver === undefined, credentialsOf }
}
