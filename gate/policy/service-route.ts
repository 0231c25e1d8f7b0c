/**
 * Which group service a check's token goes to, in a gate with several: a session's is the
 * one it signed in with; a bearer token's is the one its host or path is routed to, or the
 * one its JWT `iss` names, and when both say, they must agree. Never found out by trying
 * the token on each service: that would hand one provider's token to another.
 *
 * @module
 */
import { InvalidTokenError, type ServiceResolvers } from '../../src/index.js'
import type { GateServicesSettings } from '../config/service.js'
import { globToRegExp, hostMatches } from './rules.js'

/**
 * The routing of a gate with several group services.
 *
 * @example
 * ```ts
 * const service = router.bearer('no.example.org', '/admin', token) // 'feide'
 * ```
 */
export interface ServiceRouter {
  /** The services' names, in the configuration's order. */
  readonly names: readonly string[]
  /** What the sign-in page calls `service`. */
  labelOf(service: string): string
  /** The service the configuration routes `host` and `path` to (its first that matches), or `undefined`. */
  routed(host: string, path: string): string | undefined
  /**
   * The service of a bearer token sent to `host` and `path`: its route's, else its issuer's
   * (`undefined`: none; the check answers 401 without a call). Throws `InvalidTokenError`
   * when the route and the token's issuer name two services.
   */
  bearer(host: string, path: string, token: string): string | undefined
}

interface Route {
  readonly name: string
  /** Each host as a rule's: the name, and a wildcard's suffix. */
  readonly hosts: readonly { readonly host: string; readonly hostSuffix: string | undefined }[]
  readonly paths: readonly RegExp[]
}

/** Creates the router of `settings` over `services` (whose `issuers` the configuration's are). */
export function createServiceRouter(settings: GateServicesSettings, services: ServiceResolvers): ServiceRouter {
  const labels = new Map(settings.list.map((each) => [each.name, each.label]))
  const routes: Route[] = settings.list
    .filter((each) => each.hosts.length > 0 || each.paths.length > 0)
    .map((each) => ({
      name: each.name,
      hosts: each.hosts.map((host) => ({ host, hostSuffix: host.startsWith('*.') ? host.slice(1) : undefined })),
      paths: each.paths.map(globToRegExp),
    }))

  function routed(host: string, path: string): string | undefined {
    for (const route of routes) {
      // A route names hosts, paths or both: each it names must match.
      if (route.hosts.length > 0 && !route.hosts.some((pattern) => hostMatches(pattern, host))) continue
      if (route.paths.length > 0 && !route.paths.some((glob) => glob.test(path))) continue
      return route.name
    }
    return undefined
  }

  return {
    names: services.names,
    labelOf: (service) => labels.get(service) ?? service,
    routed,
    bearer(host, path, token) {
      const byRoute = routed(host, path)
      const byIssuer = services.serviceOfToken(token)
      if (byRoute !== undefined && byIssuer !== undefined && byRoute !== byIssuer) {
        throw new InvalidTokenError('The access token was issued for another group service than the one this site uses')
      }
      return byRoute ?? byIssuer
    },
  }
}

/**
 * Whether a session signed in with `service` (`undefined`: the one service of a gate
 * without `services`) belongs to this gate. One that does not (the configuration changed
 * since) is no session: it signs in again, and its token is sent nowhere.
 */
export function isServiceOfGate(router: ServiceRouter | undefined, service: string | undefined): boolean {
  return router === undefined ? service === undefined : service !== undefined && router.names.includes(service)
}
