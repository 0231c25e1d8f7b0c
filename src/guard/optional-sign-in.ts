/**
 * Optional sign-in, `authenticate({ optional: true })`: the one rule every adapter follows
 * to tell a request that presents no credentials (it goes on without a context) from one
 * that presents any (it is answered exactly as `authenticate()` answers it).
 *
 * @module
 */
import { InvalidOptionError } from '../errors.js'

/**
 * Options of `authenticate()` on every adapter (`Authenticated()` in `voot-guard/nestjs`).
 *
 * @example
 * ```ts
 * app.get('/', guard.authenticate({ optional: true }), (req, res) => {
 *   res.send(req.voot === undefined ? 'Hello, stranger' : 'Welcome back')
 * })
 * ```
 */
export interface AuthenticateOptions {
  /**
   * Lets a request that presents no credentials at all (no `Authorization` header; with a
   * `getToken` option, no token found) go on without a context: `req.voot` is `undefined`
   * (`null` where the framework decorates the request, as Fastify does), and `protect`'s
   * handler gets `undefined`. A request that presents credentials is answered exactly as by
   * `authenticate()`: a refused token 401, a malformed one 400, an outage 503, never anonymous.
   * An empty `Authorization` header, or one of another scheme, presents credentials.
   * Default `false`.
   */
  readonly optional?: boolean
}

/**
 * Whether a request presents no credentials at all: the `Authorization` header is absent, or
 * the `getToken` option found nothing (`undefined` or `null`, alone or as the `token` of what
 * it returned). The only requests that `authenticate({ optional: true })` lets through
 * without a context. Anything else, an empty header or another scheme included, is
 * credentials, and is answered as `authenticate()` answers it.
 *
 * @example
 * ```ts
 * const credentials = credentialsOf(req)
 * if (optional && isAnonymous(credentials)) return next() // no req.voot
 * ```
 */
export function isAnonymous(credentials: { readonly authorization: unknown } | { readonly token: unknown }): boolean {
  if ('authorization' in credentials) return credentials.authorization === undefined
  const found = credentials.token
  const token = typeof found === 'object' && found !== null ? (found as { token?: unknown }).token : found
  return token === undefined || token === null
}

/**
 * Validates the options of `authenticate()` (`Authenticated()` in Nest), when the route is
 * declared, and returns whether sign-in is optional. A misspelt key is refused rather than
 * ignored, so that a route meant to be open to anonymous visitors does not silently refuse
 * them.
 *
 * @example
 * ```ts
 * const optional = readAuthenticateOptions(options, 'Authenticated()') // true for { optional: true }
 * ```
 */
export function readAuthenticateOptions(options: unknown, where: string): boolean {
  if (options === undefined) return false
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new InvalidOptionError('(options)', `${where} takes an options object ({ optional: true })`)
  }
  for (const key of Object.keys(options)) {
    if (key !== 'optional') throw new InvalidOptionError(key, `is not an option of ${where} (the only one is optional)`)
  }
  const { optional } = options as AuthenticateOptions
  if (optional !== undefined && typeof optional !== 'boolean') throw new InvalidOptionError('optional', 'must be a boolean')
  return optional === true
}
