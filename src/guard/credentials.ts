/**
 * Credentials: where a request's token comes from (the `Authorization` header, or an
 * adapter's `getToken`), what `getToken` may return, and that return value checked.
 *
 * @module
 */
import { InvalidArgumentError, InvalidOptionError, TokenMalformedError, TokenMissingError } from '../errors.js'
import type { ResolveOptions } from '../resolver/index.js'
import { isWellFormedToken } from '../token.js'

/**
 * What a `getToken` option returns: the token, or the token with its expiry (ms since the
 * epoch, such as `tokenSet.expiresAt` from `voot-guard/oauth`) so that no cached answer
 * outlives it; `undefined` when the request carries none.
 *
 * @example
 * ```ts
 * const found: FoundToken = { token: session.accessToken, expiresAt: session.expiresAt }
 * ```
 */
export type FoundToken =
  | string
  | {
      readonly token: string
      readonly expiresAt?: number | undefined
      /** With the guard's `services`: the group service this token is for (the one it signed in with). */
      readonly service?: string | undefined
    }
  | undefined

/**
 * Where the token comes from: the `Authorization` header (default), or a token found
 * elsewhere by a `getToken` option.
 *
 * @example
 * ```ts
 * const fromHeader: Credentials = { authorization: 'Bearer abc' }
 * const fromSession: Credentials = { token: session.accessToken }
 * ```
 */
export type Credentials = { readonly authorization: string | readonly string[] | undefined } | { readonly token: FoundToken }

/** The per-call options of a token whose expiry is not known: one object for every such request. */
export const NO_OPTIONS: ResolveOptions = Object.freeze({})

/** The token `getToken` found, the per-call options that carry its expiry when known, and the service it names. */
export function readFoundToken(credentials: { readonly token: FoundToken }): {
  token: string
  options: ResolveOptions
  service: string | undefined
} {
  const found = credentials.token
  const token = typeof found === 'object' && found !== null ? found.token : found
  if (token === undefined || token === null || token === '') throw new TokenMissingError()
  if (!isWellFormedToken(token)) throw new TokenMalformedError()
  const expiresAt = typeof found === 'object' && found !== null ? found.expiresAt : undefined
  if (expiresAt !== undefined && (typeof expiresAt !== 'number' || Number.isNaN(expiresAt))) {
    throw new InvalidArgumentError('getToken(): expiresAt must be a number of ms since the epoch')
  }
  const service = typeof found === 'object' && found !== null ? found.service : undefined
  return { token, options: expiresAt === undefined ? NO_OPTIONS : { tokenExpiresAt: expiresAt }, service }
}

/**
 * An adapter's `getToken` option: finds the token of a request elsewhere than in the
 * `Authorization` header. It returns the token, `{ token, expiresAt }` (ms since the epoch,
 * such as a `voot-guard/oauth` `TokenSet`'s `expiresAt`) so that no cached answer outlives
 * it, `undefined` (or `null`) when the request carries none, or a promise of one of those.
 * Anything else (a `TokenSet` itself, an object without `token`) is a programming error,
 * answered as one (a 500 through the framework), never as a request without credentials.
 *
 * @example
 * ```ts
 * const getToken: TokenSource<Request> = async (req) => {
 *   const tokens = await sessions.tokensOf(req)
 *   return tokens === undefined ? undefined : { token: tokens.accessToken, expiresAt: tokens.expiresAt }
 * }
 * ```
 */
export type TokenSource<R> = (request: R) => FoundToken | null | PromiseLike<FoundToken | null>

/** What `getToken` returned, checked: the credentials, or an error that names `getToken`. */
function foundCredentials(found: unknown): Credentials {
  if (found === undefined || found === null || typeof found === 'string') return { token: found ?? undefined }
  if (typeof found === 'object' && 'token' in found) {
    const { token } = found
    const service = (found as { service?: unknown }).service
    if ((token === undefined || token === null || typeof token === 'string') && (service === undefined || typeof service === 'string')) {
      return { token: found as FoundToken }
    }
  }
  const hint =
    typeof found === 'object' && 'accessToken' in found
      ? ' (a TokenSet? return { token: tokens.accessToken, expiresAt: tokens.expiresAt })'
      : ''
  throw new InvalidArgumentError(
    `getToken() must return a string, { token, expiresAt?, service? }, undefined, or a promise of one of those${hint}`,
  )
}

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function'
}

/**
 * Builds an adapter's reader of {@link Credentials}: the `Authorization` header by
 * default, or the adapter's `getToken` option (validated here, at creation). With a
 * `getToken` that returns a promise, the reader returns a promise of the credentials.
 * `createGuardFlow` builds it once per adapter.
 *
 * @example
 * ```ts
 * const credentialsOf = createCredentialsReader(options.getToken, (req: Request) => authorizationOf(req))
 * const credentials = await credentialsOf(req)
 * ```
 */
export function createCredentialsReader<R>(
  getToken: TokenSource<R> | undefined,
  authorizationOf: (request: R) => string | readonly string[] | undefined,
): (request: R) => Credentials | Promise<Credentials> {
  if (getToken === undefined) return (request) => ({ authorization: authorizationOf(request) })
  if (typeof getToken !== 'function') throw new InvalidOptionError('getToken', 'must be a function')
  return (request) => {
    const found: unknown = getToken(request)
    return isPromiseLike(found) ? Promise.resolve(found).then(foundCredentials) : foundCredentials(found)
  }
}
