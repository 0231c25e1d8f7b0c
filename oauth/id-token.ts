/**
 * ID token validation, as OpenID Connect Core 1.0 sections 3.1.3.7 and 3.2.2.9 ask:
 * signature against the provider's JWKS with an allowed asymmetric algorithm (RS256 by
 * default), `iss` exactly the issuer, `aud` containing the client id (and `azp` equal to
 * it when present or when there are several audiences), `exp` in the future and `iat` not
 * in the future (both with a small tolerance), `sub` present, `nonce` equal to the one
 * sent, `at_hash` matching the access token when both are present, and `auth_time` no
 * older than the `max_age` sent.
 *
 * @module
 */
import { createHash } from 'node:crypto'
import { errors, jwtVerify, type JWTPayload, type JWTVerifyResult } from 'jose'
import { UpstreamError } from '../src/errors.js'
import { OAuthValidationError } from './errors.js'
import type { JwksCache } from './jwks.js'
import type { IdTokenClaims } from './types.js'

/**
 * What an ID token is checked against.
 *
 * @example
 * ```ts
 * const checks: IdTokenChecks = { issuer, clientId, algorithms: ['RS256'], now: Date.now(), clockTolerance: 30_000, nonce, jwks }
 * ```
 */
export interface IdTokenChecks {
  readonly issuer: string
  readonly clientId: string
  readonly algorithms: readonly string[]
  /** Current time in ms since the epoch. */
  readonly now: number
  /** Allowed clock skew in ms. */
  readonly clockTolerance: number
  /**
   * The nonce sent in the authorization request; `undefined` when none was sent (then
   * the token must carry none), `null` to skip the check (refreshed ID tokens may repeat
   * the nonce of the original request, OpenID Connect Core section 12.2).
   */
  readonly nonce: string | undefined | null
  /** The access token issued with the ID token, for the `at_hash` check. */
  readonly accessToken?: string
  /**
   * The `max_age` sent, in seconds: the token must then carry an `auth_time` no older
   * than that, give or take the clock tolerance (OpenID Connect Core section 3.1.3.7, item 13).
   */
  readonly maxAge?: number | undefined
  readonly jwks: JwksCache
}

/**
 * Verifies an ID token and returns its claims.
 *
 * @throws {@link OAuthValidationError} (`id_token` or `nonce`) when any check fails;
 * {@link UpstreamError} when the JWKS cannot be fetched.
 *
 * @example
 * ```ts
 * const claims = await verifyIdToken(tokens.id_token, { issuer, clientId, algorithms: ['RS256'], now: Date.now(), clockTolerance: 30_000, nonce, jwks })
 * ```
 */
export async function verifyIdToken(idToken: string, checks: IdTokenChecks): Promise<IdTokenClaims> {
  const options = {
    issuer: checks.issuer,
    audience: checks.clientId,
    algorithms: [...checks.algorithms],
    currentDate: new Date(checks.now),
    clockTolerance: checks.clockTolerance / 1000,
    requiredClaims: ['iss', 'sub', 'aud', 'exp', 'iat'],
  }
  let result: JWTVerifyResult
  try {
    try {
      result = await jwtVerify(idToken, checks.jwks.resolve, options)
    } catch (err) {
      // Several keys fit the header (no `kid`, say): the token is valid if one of them verifies it.
      if (!(err instanceof errors.JWKSMultipleMatchingKeys)) throw err
      result = await verifyWithAny(idToken, err, options)
    }
  } catch (err) {
    throw describe(err)
  }
  const claims = result.payload
  checkClaims(claims, checks)
  if (checks.accessToken !== undefined && claims['at_hash'] !== undefined) {
    if (claims['at_hash'] !== tokenHash(checks.accessToken, result.protectedHeader.alg)) {
      throw new OAuthValidationError('id_token', 'The ID token\'s "at_hash" does not match the access token')
    }
  }
  return Object.freeze({ ...claims }) as IdTokenClaims
}

async function verifyWithAny(
  idToken: string,
  candidates: errors.JWKSMultipleMatchingKeys,
  options: Parameters<typeof jwtVerify>[2],
): Promise<JWTVerifyResult> {
  let last: unknown = candidates
  for await (const key of candidates) {
    try {
      return await jwtVerify(idToken, key, options)
    } catch (err) {
      last = err
    }
  }
  throw last
}

function checkClaims(claims: JWTPayload, checks: IdTokenChecks): void {
  if (typeof claims.sub !== 'string' || claims.sub === '') {
    throw new OAuthValidationError('id_token', 'The ID token has no valid "sub" claim')
  }
  if (typeof claims.iat !== 'number' || claims.iat * 1000 > checks.now + checks.clockTolerance) {
    throw new OAuthValidationError('id_token', 'The ID token\'s "iat" claim is invalid or in the future')
  }
  const audiences = Array.isArray(claims.aud) ? claims.aud : [claims.aud]
  if (claims['azp'] !== undefined || audiences.length > 1) {
    if (claims['azp'] !== checks.clientId) {
      throw new OAuthValidationError('id_token', 'The ID token\'s "azp" claim is not this client')
    }
  }
  if (claims['auth_time'] !== undefined && typeof claims['auth_time'] !== 'number') {
    throw new OAuthValidationError('id_token', 'The ID token\'s "auth_time" claim is not a number')
  }
  if (checks.maxAge !== undefined) checkAuthTime(claims['auth_time'], checks.maxAge, checks)
  if (checks.nonce === null) return
  if (checks.nonce === undefined) {
    if (claims['nonce'] !== undefined) {
      throw new OAuthValidationError('nonce', 'The ID token carries a nonce, but none was expected')
    }
  } else if (claims['nonce'] !== checks.nonce) {
    throw new OAuthValidationError('nonce', "The ID token's nonce does not match the one sent")
  }
}

function checkAuthTime(authTime: unknown, maxAge: number, checks: IdTokenChecks): void {
  if (typeof authTime !== 'number') {
    throw new OAuthValidationError('id_token', 'The ID token has no "auth_time" claim, though max_age was sent')
  }
  if ((authTime + maxAge) * 1000 + checks.clockTolerance < checks.now) {
    throw new OAuthValidationError('id_token', 'The ID token\'s "auth_time" is older than the max_age sent: the user must sign in again')
  }
}

/** `at_hash` / `c_hash`: the left half of the hash named by the JWS algorithm, base64url. */
function tokenHash(value: string, alg: string): string | undefined {
  const size = alg === 'EdDSA' || alg === 'Ed25519' ? '512' : /(\d{3})$/.exec(alg)?.[1]
  if (size !== '256' && size !== '384' && size !== '512') return undefined
  const digest = createHash(`sha${size}`).update(value, 'ascii').digest()
  return digest.subarray(0, digest.length / 2).toString('base64url')
}

function describe(err: unknown): Error {
  if (err instanceof UpstreamError || err instanceof OAuthValidationError) return err
  let reason = 'it is malformed'
  if (err instanceof errors.JWTExpired) reason = 'it has expired'
  else if (err instanceof errors.JWTClaimValidationFailed)
    reason = `its "${err.claim}" claim is ${err.reason === 'missing' ? 'missing' : 'invalid'}`
  else if (err instanceof errors.JWSSignatureVerificationFailed) reason = 'its signature is invalid'
  else if (err instanceof errors.JOSEAlgNotAllowed) reason = 'it is signed with an algorithm that is not allowed'
  else if (err instanceof errors.JWKSNoMatchingKey) reason = "no key of the provider's JWKS matches it"
  else if (err instanceof errors.JWKSMultipleMatchingKeys) reason = "no key of the provider's JWKS verifies it"
  else if (err instanceof errors.JOSENotSupported) reason = 'it uses an unsupported algorithm or key'
  return new OAuthValidationError('id_token', `The ID token is not valid: ${reason}`)
}
