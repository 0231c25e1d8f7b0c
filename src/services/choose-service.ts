/**
 * Which group service a request's token goes to.
 *
 * @module
 */
import { InvalidArgumentError, InvalidTokenError } from '../errors.js'
import type { ServiceResolvers } from './service-resolvers.js'

/**
 * The service a token goes to, chosen and never guessed by trying: the one its token source
 * named, else its JWT issuer's, else the guard's `fallback`; `undefined` without `services`.
 * A token none of them assigns is refused (401); a name no service has is a programming
 * error (a 500), not the user's.
 *
 * @example
 * ```ts
 * chooseService(services, token, found.service, 'feide') // 'feide'
 * ```
 */
export function chooseService(
  services: ServiceResolvers | undefined,
  token: string,
  named: string | undefined,
  fallback: string | undefined,
): string | undefined {
  if (services === undefined) {
    if (named !== undefined) throw new InvalidArgumentError('getToken() returned a service, but the guard has no `services` option')
    return undefined
  }
  const chosen = named ?? services.serviceOfToken(token) ?? fallback
  if (chosen === undefined) throw new InvalidTokenError('No group service of this application accepts this token')
  services.resolver(chosen)
  return chosen
}
