/**
 * Token sets: built from a token answer (openid-client's, or an implicit fragment), and
 * refreshed against the previous one (OpenID Connect Core section 12.2), which openid-client
 * leaves to the app.
 *
 * @module
 */
import { InvalidArgumentError, InvalidOptionError } from '../src/index.js'
import { OAuthValidationError } from './errors.js'
import type { RefreshOptions, TokenSet } from './types.js'

// RFC 6749 appendix A.4: scope-token = 1*NQCHAR
const SCOPE_TOKEN = /^[\x21\x23-\x5B\x5D-\x7E]+$/

const invalid = (what: string): OAuthValidationError =>
  new OAuthValidationError('response', `The token response has ${what}`, { status: 502 })

/** Scopes given as a list or a space-separated string, checked; `option` names the option when it is one. */
export function readScopeArgument(value: unknown, option?: string): readonly string[] {
  const list = typeof value === 'string' && option === undefined ? value.split(' ').filter((s) => s !== '') : value
  if (!Array.isArray(list) || !list.every((s) => typeof s === 'string' && SCOPE_TOKEN.test(s))) {
    if (option !== undefined) throw new InvalidOptionError(option, 'must be an array of scope tokens (no spaces, quotes or backslashes)')
    throw new InvalidArgumentError('scope must be a list of scope tokens or a space-separated string of them')
  }
  return Object.freeze([...new Set(list as string[])])
}

/**
 * The token set of a token answer's fields. `sentAt` (when the request was sent) is where
 * `expiresAt` counts from; `dpop` says a proof was sent, so a `DPoP` token type is expected too.
 */
export function tokenSetFromFields(
  fields: Readonly<Record<string, unknown>>,
  context: { readonly requestedScopes: readonly string[]; readonly sentAt: number; readonly dpop?: boolean },
): TokenSet {
  const { access_token: accessToken, scope, refresh_token: refreshToken, id_token: idToken } = fields
  if (typeof accessToken !== 'string' || accessToken === '') throw invalid('no access_token')
  // RFC 6749 section 7.1: the type is case-insensitive. A MAC token, or a DPoP one without a proof sent, is unusable.
  const tokenType = typeof fields['token_type'] === 'string' ? fields['token_type'].toLowerCase() : undefined
  if (tokenType !== 'bearer' && !(tokenType === 'dpop' && context.dpop === true)) throw invalid('a token_type other than Bearer (or DPoP)')
  // JSON answers send a number; fragments a decimal string.
  const raw = fields['expires_in']
  const expiresIn = typeof raw === 'string' && /^\d{1,10}$/.test(raw) ? Number(raw) : raw
  if (expiresIn !== undefined && (typeof expiresIn !== 'number' || !Number.isSafeInteger(expiresIn) || expiresIn < 0)) {
    throw invalid('an invalid expires_in')
  }
  if (scope !== undefined && typeof scope !== 'string') throw invalid('a scope that is not a string')
  if (![refreshToken, idToken].every((value) => value === undefined || typeof value === 'string'))
    throw invalid('a token that is not a string')
  return {
    accessToken,
    tokenType: tokenType === 'dpop' ? 'DPoP' : 'Bearer',
    expiresIn,
    expiresAt: expiresIn === undefined ? undefined : context.sentAt + expiresIn * 1000,
    scopes: Object.freeze(typeof scope === 'string' ? scope.split(' ').filter((s) => s !== '') : [...context.requestedScopes]),
    ...(typeof refreshToken === 'string' && refreshToken !== '' ? { refreshToken } : {}),
    ...(typeof idToken === 'string' && idToken !== '' ? { idToken } : {}),
  }
}

/** What a refresh sends, from the previous token set or a bare refresh token. */
export function refreshGrant(tokens: unknown, options: RefreshOptions, defaultScopes: readonly string[]) {
  const previous = typeof tokens === 'object' && tokens !== null ? (tokens as TokenSet) : undefined
  const refreshToken = previous === undefined ? tokens : previous.refreshToken
  if (typeof refreshToken !== 'string' || refreshToken === '') {
    throw new InvalidArgumentError(
      previous === undefined
        ? 'refresh(): give the previous token set or a non-empty refresh token string'
        : 'refresh(): the token set has no refreshToken (the provider issued none)',
    )
  }
  if (typeof options !== 'object' || options === null) throw new InvalidArgumentError('refresh(): options must be an object')
  const scopes = options.scope === undefined ? undefined : readScopeArgument(options.scope)
  // An answer without `scope` stands for the scopes asked for, else the ones granted before.
  const requestedScopes = scopes ?? (Array.isArray(previous?.scopes) ? previous.scopes : defaultScopes)
  return { refreshToken, scope: scopes !== undefined && scopes.length > 0 ? scopes.join(' ') : undefined, requestedScopes, previous }
}

/**
 * The refreshed token set: a new ID token must be for the same issuer, subject, audience and
 * authentication as the previous one; what the answer left out carries over.
 */
export function completeRefresh(previous: TokenSet | undefined, fresh: TokenSet): TokenSet {
  if (previous === undefined) return Object.freeze(fresh)
  const before = previous.claims
  const after = fresh.claims
  if (before !== undefined && after !== undefined) {
    const audiences = (aud: string | readonly string[]): string => [...new Set(typeof aud === 'string' ? [aud] : aud)].sort().join(' ')
    const differs = [
      after.iss !== before.iss && 'iss',
      after.sub !== before.sub && 'sub',
      audiences(after.aud) !== audiences(before.aud) && 'aud',
      before.auth_time !== undefined && after.auth_time !== before.auth_time && 'auth_time',
    ].find((claim) => claim !== false)
    if (differs !== undefined) {
      throw new OAuthValidationError('id_token', `The refreshed ID token's "${differs}" differs from the previous ID token's`, {
        status: 502,
      })
    }
  }
  const kept = (key: 'refreshToken' | 'idToken' | 'claims') =>
    fresh[key] === undefined && previous[key] !== undefined ? { [key]: previous[key] } : {}
  return Object.freeze({ ...fresh, ...kept('refreshToken'), ...kept('idToken'), ...kept('claims') })
}
