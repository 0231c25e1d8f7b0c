/**
 * Emulator dialects: which real VOOT service the emulator plays. `dataporten` (the default)
 * serves the Feide/Dataporten groups API under `/groups` (and `/groups/v1`); `openconext`
 * serves SURFconext's OpenConext-voot at the service root, with its routes, URN ids, roles
 * and Spring error bodies. A dialect decides the paths, the answers and the default data;
 * tokens, faults, latency and rate limits are the same for both.
 *
 * @module
 */
import { InvalidOptionError } from '../src/errors.js'
import { NOT_FOUND, type Answer } from './answer.js'
import type { Caller } from './bearer-auth.js'
import type { EmulatorData } from './data.js'
import { answerGroupRequest, isGroupServicePath, LIST_ROUTES, matchGroupRoute } from './group-routes.js'
import { openConextRoutes } from './openconext-routes.js'

/**
 * The real services the emulator can play.
 *
 * @example
 * ```ts
 * await startEmulator({ dialect: 'openconext' })
 * ```
 */
export type EmulatorDialect = 'dataporten' | 'openconext'

/**
 * Every dialect, the default first.
 *
 * @example
 * ```ts
 * EMULATOR_DIALECTS.includes(value as EmulatorDialect)
 * ```
 */
export const EMULATOR_DIALECTS: readonly EmulatorDialect[] = ['dataporten', 'openconext']

/**
 * Everything a dialect needs to answer one request on a matched route.
 *
 * @example
 * ```ts
 * const request: ServiceRequest = { method: 'GET', query, caller, data, now: Date.now() }
 * ```
 */
export interface ServiceRequest {
  readonly method: string
  readonly query: URLSearchParams
  readonly caller: Caller
  readonly data: EmulatorData
  /** The emulator clock's time, in ms since the epoch. */
  readonly now: number
  /** Group ids `me/groups` leaves out (the `partial` fault). */
  readonly omit?: ReadonlySet<string>
}

/**
 * One matched route of a dialect: its name (for faults and the log) and its answer.
 *
 * @example
 * ```ts
 * const route = routes.match('/me/groups')
 * route?.name // 'me/groups'
 * ```
 */
export interface MatchedRoute {
  /** Such as `me/groups`, `me/groups/{groupid}`, `members/{groupid}`. */
  readonly name: string
  /** Whether the route answers a JSON array (the `wrong-shape` fault turns it into an object). */
  readonly list: boolean
  answer(request: ServiceRequest): Answer
}

/**
 * A dialect's routes.
 *
 * @example
 * ```ts
 * const routes = dialectRoutes('openconext')
 * if (routes.isServicePath(pathname)) answer = routes.match(pathname)?.answer(request) ?? routes.unknownRoute(request)
 * ```
 */
export interface DialectRoutes {
  /** The path prefix of the group endpoints (`/groups`, or `''` at the root): `baseUrl` is the origin plus this. */
  readonly basePath: string
  /** Whether a raw pathname belongs to the group service rather than the authorization server. */
  isServicePath(pathname: string): boolean
  /** Matches a raw (still percent-encoded) pathname; `undefined` for an unknown route. */
  match(pathname: string): MatchedRoute | undefined
  /** The answer to a path of the group service that matches no route. */
  unknownRoute(request: ServiceRequest): Answer
}

const dataportenRoutes: DialectRoutes = {
  basePath: '/groups',
  isServicePath: isGroupServicePath,
  match(pathname) {
    const route = matchGroupRoute(pathname)
    if (route === undefined) return undefined
    return { name: route.name, list: LIST_ROUTES.has(route.name), answer: (request) => answerGroupRequest({ ...request, route }) }
  },
  unknownRoute: () => NOT_FOUND,
}

/**
 * The routes of a dialect.
 *
 * @throws {@link InvalidOptionError} naming `dialect` for an unknown dialect.
 * @example
 * ```ts
 * dialectRoutes('dataporten').basePath // '/groups'
 * dialectRoutes('openconext').basePath // ''
 * ```
 */
export function dialectRoutes(dialect: EmulatorDialect): DialectRoutes {
  switch (dialect) {
    case 'dataporten':
      return dataportenRoutes
    case 'openconext':
      return openConextRoutes
    default:
      throw new InvalidOptionError('dialect', `must be one of ${EMULATOR_DIALECTS.map((each) => `'${each}'`).join(', ')}`)
  }
}
