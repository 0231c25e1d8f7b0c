/**
 * `verifyLogoutToken`: a Logout Token of OpenID Connect Back-Channel Logout 1.0, verified as
 * its section 2.6 says, against the client's provider (the same JWKS cache, issuer, client
 * id, algorithms and clock as its ID tokens). The gate's `POST /_gate/backchannel-logout`
 * calls it too: one implementation.
 *
 * Replays: each client remembers the `jti` of the tokens it accepted until they could no
 * longer be accepted anyway (their `exp`, or `iat` + {@link LOGOUT_TOKEN_MAX_AGE}), at most
 * {@link LOGOUT_TOKEN_MAX_REMEMBERED}; when that many are remembered and none has lapsed, a
 * new token is refused rather than a remembered one forgotten (the provider sends it again).
 *
 * @module
 */
import { decodeProtectedHeader, errors, jwtVerify, type JWTVerifyGetKey } from 'jose'
import { InvalidArgumentError, VootError } from '../src/index.js'
import { OAuthValidationError } from './errors.js'
import type { OAuthClient } from './types.js'

/** The `events` member that makes a JWT a Logout Token. */
export const BACKCHANNEL_LOGOUT_EVENT = 'http://schemas.openid.net/event/backchannel-logout'

/** How old (by its `iat`) a Logout Token may be, past the clock tolerance: 5 minutes. */
export const LOGOUT_TOKEN_MAX_AGE = 300_000

/** How many accepted `jti` a client remembers at most. */
export const LOGOUT_TOKEN_MAX_REMEMBERED = 10_000

/** The longest Logout Token read, in characters. */
const MAX_LOGOUT_TOKEN_LENGTH = 16_384

/**
 * What a verified Logout Token says: who ended which session. `sid` (the provider's
 * session, as in the ID token) or `sub` (the user, at `iss`), or both.
 *
 * @example
 * ```ts
 * const { iss, sid, sub } = await verifyLogoutToken(client, req.body.logout_token)
 * ```
 */
export interface LogoutTokenClaims {
  readonly iss: string
  readonly sub?: string
  readonly sid?: string
  readonly jti: string
  /** Seconds since the epoch. */
  readonly iat: number
}

/** What a client's Logout Tokens are checked against (set by `createOAuthClient`). */
export interface LogoutTokenContext {
  readonly issuer: () => Promise<string>
  readonly clientId: string
  readonly algorithms: readonly string[]
  readonly now: () => number
  readonly clockTolerance: number
  readonly keys: JWTVerifyGetKey
}

interface ClientState {
  readonly context: LogoutTokenContext
  /** Accepted `jti` (by issuer) and until when each is remembered (ms). */
  readonly seen: Map<string, number>
}

const clients = new WeakMap<object, ClientState>()

/** Makes `client` one whose Logout Tokens {@link verifyLogoutToken} can verify. */
export function registerLogoutTokenContext(client: OAuthClient, context: LogoutTokenContext): void {
  clients.set(client, { context, seen: new Map() })
}

const refuse = (text: string) => new OAuthValidationError('logout_token', `The logout token ${text}`)

/**
 * Verifies a Logout Token (OpenID Connect Back-Channel Logout 1.0, section 2.6) sent to
 * this client: a JWS signed with a key of the provider's JWKS by one of the client's ID
 * token algorithms (never `none`, never encrypted), typed `logout+jwt` or `JWT` or not at
 * all; `iss` the provider's, `aud` this client's id (with `azp` this client when there are
 * several), `iat` not in the future (past the clock tolerance) nor older than 5 minutes,
 * `exp` not passed when present, `jti` present and not seen before by this client, `events`
 * an object with the member `http://schemas.openid.net/event/backchannel-logout` (an
 * object), `sid` or `sub` (or both), and no `nonce`. Rejects with an
 * `OAuthValidationError` (`check: 'logout_token'`, status 400) otherwise; its message says
 * what failed, never the token.
 *
 * @example
 * ```ts
 * import express from 'express'
 * import { verifyLogoutToken } from 'voot-guard/oauth'
 *
 * app.post('/backchannel-logout', express.urlencoded({ extended: false, limit: '20kb' }), async (req, res) => {
 *   try {
 *     const { iss, sid, sub } = await verifyLogoutToken(client, req.body.logout_token)
 *     await endSessions(iss, { sid, sub }) // every session of that sid, else of that user
 *     res.set('cache-control', 'no-store').sendStatus(200)
 *   } catch {
 *     res.set('cache-control', 'no-store').status(400).json({ error: 'invalid_request' })
 *   }
 * })
 * ```
 */
export async function verifyLogoutToken(client: OAuthClient, logoutToken: string): Promise<LogoutTokenClaims> {
  const state = typeof client === 'object' && client !== null ? clients.get(client) : undefined
  if (state === undefined) throw new InvalidArgumentError('verifyLogoutToken(): client must be made by createOAuthClient')
  if (typeof logoutToken !== 'string' || logoutToken === '') throw refuse('is missing')
  if (logoutToken.length > MAX_LOGOUT_TOKEN_LENGTH) throw refuse('is too long')
  const { context, seen } = state
  let header: ReturnType<typeof decodeProtectedHeader>
  try {
    header = decodeProtectedHeader(logoutToken)
  } catch {
    throw refuse('is malformed')
  }
  // An encrypted token (JWE, five parts) is not supported: refused, not decrypted.
  if (logoutToken.split('.').length !== 3) throw refuse('is not a signed JWT')
  const typ = typeof header.typ === 'string' ? header.typ.toLowerCase().replace(/^application\//, '') : undefined
  if (header.typ !== undefined && typ !== 'logout+jwt' && typ !== 'jwt') throw refuse('has a "typ" other than logout+jwt')
  const now = context.now()
  const issuer = await context.issuer()
  const { payload: claims } = await jwtVerify(logoutToken, context.keys, {
    issuer,
    audience: context.clientId,
    algorithms: [...context.algorithms],
    currentDate: new Date(now),
    clockTolerance: context.clockTolerance / 1000,
    requiredClaims: ['iss', 'aud', 'iat', 'jti'],
  }).catch((err: unknown) => {
    throw err instanceof VootError ? err : refuse(`is not valid: ${reason(err)}`)
  })
  const { iat, jti, sub, exp } = claims
  const sid = claims['sid']
  if (typeof iat !== 'number' || !Number.isFinite(iat)) throw refuse('has no valid "iat" claim')
  if (iat * 1000 > now + context.clockTolerance) throw refuse('was issued in the future ("iat")')
  if (iat * 1000 < now - context.clockTolerance - LOGOUT_TOKEN_MAX_AGE) throw refuse('is too old ("iat")')
  const audiences = Array.isArray(claims.aud) ? claims.aud : [claims.aud]
  if ((claims['azp'] !== undefined || audiences.length > 1) && claims['azp'] !== context.clientId)
    throw refuse('has an "azp" claim that is not this client')
  const events = claims['events']
  if (typeof events !== 'object' || events === null || Array.isArray(events)) throw refuse('has no "events" claim')
  const event = (events as Record<string, unknown>)[BACKCHANNEL_LOGOUT_EVENT]
  if (typeof event !== 'object' || event === null || Array.isArray(event)) throw refuse('is not a back-channel logout event')
  if (sub !== undefined && (typeof sub !== 'string' || sub === '')) throw refuse('has an invalid "sub" claim')
  if (sid !== undefined && (typeof sid !== 'string' || sid === '')) throw refuse('has an invalid "sid" claim')
  if (sub === undefined && sid === undefined) throw refuse('names neither "sid" nor "sub"')
  if (claims['nonce'] !== undefined) throw refuse('carries a "nonce" (it would be an ID token)')
  if (typeof jti !== 'string' || jti === '' || jti.length > 256) throw refuse('has no valid "jti" claim')

  const key = `${issuer}\u0000${jti}`
  const remembered = seen.get(key)
  if (remembered !== undefined && remembered > now) throw refuse('was used before ("jti")')
  const until = Math.max(typeof exp === 'number' ? exp * 1000 : 0, iat * 1000 + LOGOUT_TOKEN_MAX_AGE) + context.clockTolerance
  if (seen.size >= LOGOUT_TOKEN_MAX_REMEMBERED) {
    for (const [known, end] of seen) if (end <= now) seen.delete(known)
    if (seen.size >= LOGOUT_TOKEN_MAX_REMEMBERED) throw refuse('cannot be accepted now: too many recent logout tokens')
  }
  seen.set(key, until)
  return Object.freeze({
    iss: issuer,
    jti,
    iat,
    ...(typeof sub === 'string' ? { sub } : {}),
    ...(typeof sid === 'string' ? { sid } : {}),
  })
}

function reason(err: unknown): string {
  if (err instanceof errors.JWTExpired) return 'it has expired'
  if (err instanceof errors.JWTClaimValidationFailed)
    return `its "${err.claim}" claim is ${err.reason === 'missing' ? 'missing' : 'invalid'}`
  if (err instanceof errors.JWSSignatureVerificationFailed) return 'its signature is invalid'
  if (err instanceof errors.JOSEAlgNotAllowed) return 'it is signed with an algorithm that is not allowed'
  if (err instanceof errors.JWKSNoMatchingKey) return "no key of the provider's JWKS matches it"
  if (err instanceof errors.JWKSMultipleMatchingKeys) return "several keys of the provider's JWKS match it (it has no kid)"
  return err instanceof errors.JOSENotSupported ? 'it uses an unsupported algorithm or key' : 'it is malformed'
}
