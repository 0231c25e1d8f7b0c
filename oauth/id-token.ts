/**
 * ID token signatures and claims, with jose, against the provider's JWKS. openid-client
 * checks the claims of an ID token from the token endpoint but not its signature (TLS
 * vouches for it, OpenID Connect Core 3.1.3.7), and has no way to verify an ID token on its
 * own (`verifyIdToken`); this does both, one code path. Its JWKS cache refetches at once for
 * an unknown key id (a rotation), then no sooner than a cooldown by the client's clock.
 *
 * @module
 */
import { createHash } from 'node:crypto'
import { createLocalJWKSet, errors, jwtVerify, type JSONWebKeySet, type JWTVerifyGetKey } from 'jose'
import { VootError } from '../src/index.js'
import { OAuthValidationError } from './errors.js'
import { jsonObject, unexpectedStatus, type ProviderFetch } from './fetch.js'
import type { IdTokenClaims } from './types.js'

/** What an ID token is checked against. */
export interface IdTokenChecks {
  readonly issuer: string
  readonly clientId: string
  readonly algorithms: readonly string[]
  /** Current time and allowed skew, in ms. */
  readonly now: number
  readonly clockTolerance: number
  /** The nonce sent; `undefined` when none was (then the token must carry none), `null` to skip (refresh). */
  readonly nonce: string | undefined | null
  /** The access token issued with it, for `at_hash`. */
  readonly accessToken?: string
  /** The `max_age` sent, in seconds. */
  readonly maxAge?: number | undefined
  readonly keys: JWTVerifyGetKey
}

/** A JWKS cache of one client: loaded lazily, refetched when older than `maxAge`, and once per `cooldown` for an unknown key id. */
export function createJwksCache(options: {
  readonly fetch: ProviderFetch
  readonly uri: () => Promise<string>
  readonly now: () => number
  readonly maxAge: number
  readonly cooldown: number
}): JWTVerifyGetKey {
  let snapshot: { keys: JWTVerifyGetKey; fetchedAt: number } | undefined
  let inflight: Promise<typeof snapshot & object> | undefined
  let lastUnknownKeyFetch = Number.NEGATIVE_INFINITY
  const load = async () => {
    const res = await options.fetch(await options.uri(), { headers: { accept: 'application/json' } })
    if (res.status !== 200) throw unexpectedStatus('jwks', res.status)
    const doc = await jsonObject(res)
    if (!Array.isArray(doc?.['keys']))
      throw new OAuthValidationError('metadata', 'The JWKS is not a JSON object with a keys array', { status: 502 })
    let keys: JWTVerifyGetKey
    try {
      keys = createLocalJWKSet(doc as unknown as JSONWebKeySet)
    } catch {
      throw new OAuthValidationError('metadata', 'The JWKS is malformed', { status: 502 })
    }
    return (snapshot = { keys, fetchedAt: options.now() })
  }
  // Concurrent verifications share one fetch; a failed fetch is not remembered.
  const fetchKeys = () =>
    (inflight ??= load().finally(() => {
      inflight = undefined
    }))
  return async (header, token) => {
    const first = snapshot === undefined || options.now() - snapshot.fetchedAt >= options.maxAge ? await fetchKeys() : snapshot
    try {
      return await first.keys(header, token)
    } catch (err) {
      if (!(err instanceof errors.JWKSNoMatchingKey)) throw err
      // Another call may have refreshed the set meanwhile; then that set decides.
      if (snapshot !== undefined && snapshot !== first) return snapshot.keys(header, token)
      if (options.now() - lastUnknownKeyFetch < options.cooldown) throw err
      lastUnknownKeyFetch = options.now()
      return (await fetchKeys()).keys(header, token)
    }
  }
}

/** Verifies an ID token's signature and claims (OpenID Connect Core 3.1.3.7); returns its claims. */
export async function verifyIdToken(idToken: string, checks: IdTokenChecks): Promise<IdTokenClaims> {
  const { payload: claims, protectedHeader } = await jwtVerify(idToken, checks.keys, {
    issuer: checks.issuer,
    audience: checks.clientId,
    algorithms: [...checks.algorithms],
    currentDate: new Date(checks.now),
    clockTolerance: checks.clockTolerance / 1000,
    requiredClaims: ['iss', 'sub', 'aud', 'exp', 'iat'],
  }).catch((err: unknown) => {
    throw err instanceof VootError ? err : new OAuthValidationError('id_token', `The ID token is not valid: ${reason(err)}`)
  })
  const fail = (text: string) => new OAuthValidationError('id_token', `The ID token's ${text}`)
  const authTime = claims['auth_time']
  if (typeof claims.sub !== 'string' || claims.sub === '') throw fail('"sub" claim is missing or empty')
  if (typeof claims.iat !== 'number' || claims.iat * 1000 > checks.now + checks.clockTolerance)
    throw fail('"iat" claim is invalid or in the future')
  const audiences = Array.isArray(claims.aud) ? claims.aud : [claims.aud]
  if ((claims['azp'] !== undefined || audiences.length > 1) && claims['azp'] !== checks.clientId)
    throw fail('"azp" claim is not this client')
  if (authTime !== undefined && typeof authTime !== 'number') throw fail('"auth_time" claim is not a number')
  if (checks.maxAge !== undefined && typeof authTime !== 'number') throw fail('"auth_time" claim is missing, though max_age was sent')
  if (checks.maxAge !== undefined && ((authTime as number) + checks.maxAge) * 1000 + checks.clockTolerance < checks.now) {
    throw fail('"auth_time" is older than the max_age sent: the user must sign in again')
  }
  if (checks.nonce !== null && claims['nonce'] !== checks.nonce) {
    throw new OAuthValidationError(
      'nonce',
      checks.nonce === undefined ? 'The ID token carries a nonce, but none was sent' : "The ID token's nonce does not match the one sent",
    )
  }
  const atHash = claims['at_hash']
  if (checks.accessToken !== undefined && atHash !== undefined && atHash !== tokenHash(checks.accessToken, protectedHeader.alg)) {
    throw fail('"at_hash" does not match the access token')
  }
  return Object.freeze({ ...claims }) as IdTokenClaims
}

/** OpenID Connect Core 3.1.3.6: the left half of the hash that goes with the signature algorithm. */
function tokenHash(value: string, alg: string): string | undefined {
  const size = alg === 'EdDSA' || alg === 'Ed25519' ? '512' : /(256|384|512)$/.exec(alg)?.[1]
  if (size === undefined) return undefined
  const digest = createHash(`sha${size}`).update(value, 'ascii').digest()
  return digest.subarray(0, digest.length / 2).toString('base64url')
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
