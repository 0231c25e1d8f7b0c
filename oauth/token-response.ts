/**
 * Turning token responses into {@link TokenSet}s: the JSON body of the token endpoint
 * (RFC 6749 section 5.1) and the fragment parameters of the implicit flow (section 4.2.2),
 * and error answers (sections 4.1.2.1, 4.2.2.1 and 5.2) into {@link OAuthError}s.
 *
 * This module has no Node.js imports, so the implicit-flow helper works in browsers.
 *
 * @module
 */
import { OAuthError, OAuthValidationError } from './errors.js'
import type { TokenSet } from './types.js'

/** Context needed to complete a token set. */
export interface TokenFieldContext {
  /** Scopes that were asked for; used when the provider does not list the granted ones. */
  readonly requestedScopes: readonly string[]
  /** When the request was sent, in ms since the epoch; `expiresAt` counts from here. */
  readonly sentAt: number
  /** `true` when the request carried a DPoP proof, so that a `DPoP` token type is expected too. */
  readonly dpop?: boolean
}

/**
 * Builds a token set from the fields of a successful answer (JSON values or fragment
 * strings), without ID token claims (those are verified separately).
 *
 * @throws {@link OAuthValidationError} (`response`) for a missing access token, a token
 * type other than Bearer, or a malformed `expires_in`.
 *
 * @example
 * ```ts
 * const tokens = tokenSetFromFields(json, { requestedScopes: ['groups'], sentAt: Date.now() })
 * ```
 */
export function tokenSetFromFields(fields: Readonly<Record<string, unknown>>, context: TokenFieldContext): TokenSet {
  const accessToken = fields['access_token']
  if (typeof accessToken !== 'string' || accessToken === '') {
    throw new OAuthValidationError('response', 'The token response has no access_token', { status: 502 })
  }
  // RFC 6749 section 7.1: the type is case-insensitive. A MAC token, or a DPoP one without a proof sent, is unusable.
  const tokenType = typeof fields['token_type'] === 'string' ? fields['token_type'].toLowerCase() : undefined
  if (tokenType !== 'bearer' && !(tokenType === 'dpop' && context.dpop === true)) {
    throw new OAuthValidationError('response', 'The token response has a token_type other than Bearer (or DPoP, with a dpop key)', {
      status: 502,
    })
  }
  const expiresIn = readExpiresIn(fields['expires_in'])
  const scope = fields['scope']
  if (scope !== undefined && typeof scope !== 'string') {
    throw new OAuthValidationError('response', 'The token response has a scope that is not a string', { status: 502 })
  }
  const refreshToken = fields['refresh_token']
  const idToken = fields['id_token']
  if (refreshToken !== undefined && typeof refreshToken !== 'string') {
    throw new OAuthValidationError('response', 'The token response has a refresh_token that is not a string', { status: 502 })
  }
  if (idToken !== undefined && typeof idToken !== 'string') {
    throw new OAuthValidationError('response', 'The token response has an id_token that is not a string', { status: 502 })
  }
  return {
    accessToken,
    tokenType: tokenType === 'dpop' ? 'DPoP' : 'Bearer',
    expiresIn,
    expiresAt: expiresIn === undefined ? undefined : context.sentAt + expiresIn * 1000,
    scopes: Object.freeze(scope === undefined ? [...context.requestedScopes] : splitScope(scope)),
    ...(refreshToken === undefined || refreshToken === '' ? {} : { refreshToken }),
    ...(idToken === undefined || idToken === '' ? {} : { idToken }),
  }
}

/**
 * The OAuth error in an answer's fields, if there is one.
 *
 * @example
 * ```ts
 * const error = errorFromFields(Object.fromEntries(params), { redact: [code] })
 * if (error) throw error
 * ```
 */
export function errorFromFields(
  fields: Readonly<Record<string, unknown>>,
  options: { readonly responseStatus?: number; readonly redact?: readonly (string | undefined)[] } = {},
): OAuthError | undefined {
  const error = fields['error']
  if (typeof error !== 'string') return undefined
  const description = fields['error_description']
  const uri = fields['error_uri']
  // A misconfigured client is the app's fault, not the user's: 500, and not shown to them.
  const status = error === 'invalid_client' || error === 'unauthorized_client' ? 500 : 400
  return new OAuthError(error, {
    status,
    ...(typeof description === 'string' ? { errorDescription: description } : {}),
    ...(typeof uri === 'string' ? { errorUri: uri } : {}),
    ...(options.responseStatus === undefined ? {} : { responseStatus: options.responseStatus }),
    ...(options.redact === undefined ? {} : { redact: options.redact }),
  })
}

/**
 * Splits a space-separated scope string (RFC 6749 section 3.3) into its scopes.
 *
 * @example
 * ```ts
 * splitScope('openid  groups') // ['openid', 'groups']
 * ```
 */
export function splitScope(scope: string): string[] {
  return scope.split(' ').filter((s) => s !== '')
}

function readExpiresIn(value: unknown): number | undefined {
  if (value === undefined) return undefined
  // JSON answers send a number; fragments (and some servers) a decimal string.
  const n = typeof value === 'string' && /^\d{1,10}$/.test(value) ? Number(value) : value
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0) {
    throw new OAuthValidationError('response', 'The token response has an invalid expires_in', { status: 502 })
  }
  return n
}
