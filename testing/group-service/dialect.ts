/**
 * Emulator dialects: which real VOOT service the emulator plays. `dataporten` (the default)
 * serves the Feide/Dataporten groups API under `/groups` (and `/groups/v1`); `openconext`
 * serves SURFconext's OpenConext-voot at the service root, with its routes, URN ids, roles
 * and Spring error bodies. A dialect decides the paths, the answers and the default data;
 * tokens, faults, latency and rate limits are the same for both.
 *
 * @module
 */
import { InvalidOptionError } from '../../src/index.js'
import { NOT_FOUND } from '../answer.js'
import { answerGroupRequest, isGroupServicePath, LIST_ROUTES, matchGroupRoute } from './group-routes.js'
import type { DialectRoutes } from './dialect-routes.js'
import { openConextRoutes } from './openconext-routes.js'

export type { DialectRoutes, MatchedRoute, ServiceRequest } from './dialect-routes.js'

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
 * The real service a dialect plays, as its users know it: what the emulator's pages name.
 *
 * @example
 * ```ts
 * DIALECT_SERVICES.openconext // 'SURFconext'
 * ```
 */
export const DIALECT_SERVICES: Readonly<Record<EmulatorDialect, string>> = { dataporten: 'Feide', openconext: 'SURFconext' }

/**
 * How the emulator's pages name one service: the real service its dialect plays, and the
 * name it has among several (`SURFconext (surf)`), so that a person signing in with two
 * services at once sees which one asks.
 *
 * @example
 * ```ts
 * serviceTitle('dataporten', '') // 'Feide'
 * ```
 */
export function serviceTitle(dialect: EmulatorDialect, name: string): string {
  return name === '' ? DIALECT_SERVICES[dialect] : `${DIALECT_SERVICES[dialect]} (${name})`
}

/**
 * The routes of a dialect.
 *
 * @throws {@link InvalidOptionError} naming `dialect` for an unknown dialect.
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
