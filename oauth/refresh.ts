/**
 * The refresh token grant (RFC 6749 section 6) given the previous token set: what to
 * send, and how the answer is checked against and completed from what came before
 * (OpenID Connect Core section 12.2).
 *
 * @module
 */
import { InvalidArgumentError } from '../src/errors.js'
import type { RefreshOptions } from './client-types.js'
import { OAuthValidationError } from './errors.js'
import { readScopeArgument } from './scope.js'
import type { IdTokenClaims, TokenSet } from './types.js'

/**
 * A refresh grant ready to send.
 *
 * @example
 * ```ts
 * const { refreshToken, scope, requestedScopes, previous } = refreshGrant(tokens, {}, ['openid'])
 * ```
 */
export interface RefreshGrant {
  /** The `scope` to send, when narrower scopes were asked for. */
  readonly scope: string | undefined
  readonly refreshToken: string
  /** The scopes an answer without `scope` stands for. */
  readonly requestedScopes: readonly string[]
  /** The previous token set, when one was given. */
  readonly previous: TokenSet | undefined
}

/**
 * Reads `refresh()`'s arguments. Without a `scope`, the answer's scopes default to the
 * ones granted before (RFC 6749 section 6: an omitted scope is the one originally
 * granted); given only a refresh token string, to `defaultScopes`.
 *
 * @throws {@link InvalidArgumentError} without a usable refresh token.
 *
 * @example
 * ```ts
 * const grant = refreshGrant(req.session.tokens, {}, ['openid', 'groups'])
 * ```
 */
export function refreshGrant(tokens: unknown, options: RefreshOptions, defaultScopes: readonly string[]): RefreshGrant {
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
  const previousScopes = Array.isArray(previous?.scopes) ? previous.scopes : undefined
  return {
    scope: scopes !== undefined && scopes.length > 0 ? scopes.join(' ') : undefined,
    refreshToken,
    requestedScopes: scopes ?? previousScopes ?? defaultScopes,
    previous,
  }
}

/**
 * Checks a refreshed token set (its new ID token already verified) against the previous
 * one, and fills in what the answer left out: the refresh token (when none was rotated
 * in) and the ID token and its claims (when no new one came).
 *
 * @throws {@link OAuthValidationError} (`id_token`) when the new ID token's `iss`, `sub`,
 * `aud` or `auth_time` differ from the previous one's.
 *
 * @example
 * ```ts
 * const tokens = completeRefresh(grant.previous, await checkIdToken(answer, null))
 * ```
 */
export function completeRefresh(previous: TokenSet | undefined, fresh: TokenSet): TokenSet {
  if (previous === undefined) return Object.freeze(fresh)
  if (fresh.claims !== undefined && previous.claims !== undefined) checkSameAuthentication(previous.claims, fresh.claims)
  return Object.freeze({
    ...fresh,
    ...(fresh.refreshToken === undefined && previous.refreshToken !== undefined ? { refreshToken: previous.refreshToken } : {}),
    ...(fresh.idToken === undefined && previous.idToken !== undefined ? { idToken: previous.idToken } : {}),
    ...(fresh.claims === undefined && previous.claims !== undefined ? { claims: previous.claims } : {}),
  })
}

/** OpenID Connect Core section 12.2: a refreshed ID token is about the same authentication. */
function checkSameAuthentication(before: IdTokenClaims, after: IdTokenClaims): void {
  const differs = (claim: string): never => {
    throw new OAuthValidationError('id_token', `The refreshed ID token's "${claim}" differs from the previous ID token's`, { status: 502 })
  }
  if (after.iss !== before.iss) differs('iss')
  if (after.sub !== before.sub) differs('sub')
  if (!sameAudience(before.aud, after.aud)) differs('aud')
  if (before.auth_time !== undefined && after.auth_time !== before.auth_time) differs('auth_time')
}

function sameAudience(a: string | readonly string[], b: string | readonly string[]): boolean {
  const left = new Set(typeof a === 'string' ? [a] : a)
  const right = new Set(typeof b === 'string' ? [b] : b)
  return left.size === right.size && [...left].every((aud) => right.has(aud))
}
