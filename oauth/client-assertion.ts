/**
 * JWT client authentication (RFC 7523 section 2.2, OpenID Connect Core section 9): the
 * client proves itself with a short-lived JWT, `client_secret_jwt` (HS256 over the client
 * secret) or `private_key_jwt` (signed with the client's private key, whose public half
 * the provider knows).
 *
 * Neither the key nor an assertion ever appears in an error: key problems are described
 * by kind only, and jose's own errors are not passed on as causes.
 *
 * @module
 */
import { importJWK, SignJWT, type CryptoKey, type JWK } from 'jose'
import { InvalidOptionError } from '../src/errors.js'
import { randomValue } from './pkce.js'

/**
 * A private JWK checked at creation, with the algorithm it signs with.
 *
 * @example
 * ```ts
 * const key: SigningKey = readPrivateKey(options.privateKey)!
 * ```
 */
export interface SigningKey {
  readonly jwk: JWK
  readonly alg: string
  readonly kid: string | undefined
}

/** Seconds an assertion is valid: long enough for one request, short enough to be useless later. */
const ASSERTION_LIFETIME = 60

const RSA_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512']
const EC_ALGORITHMS: Readonly<Record<string, string>> = { 'P-256': 'ES256', 'P-384': 'ES384', 'P-521': 'ES512' }
const OKP_ALGORITHMS = ['EdDSA', 'Ed25519']

/**
 * Reads the `privateKey` option: a private RSA, EC (P-256, P-384, P-521) or OKP (Ed25519)
 * JWK. Its `alg` wins when present and fits the key; else RS256, ES256 (ES384, ES512 for
 * the larger curves) or EdDSA.
 *
 * @throws {@link InvalidOptionError} naming `privateKey`, never showing the key.
 *
 * @example
 * ```ts
 * readPrivateKey({ kty: 'EC', crv: 'P-256', x, y, d, kid: 'k1' }) // { alg: 'ES256', kid: 'k1', jwk }
 * ```
 */
export function readPrivateKey(value: unknown): SigningKey | undefined {
  if (value === undefined) return undefined
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new InvalidOptionError('privateKey', 'must be a private JWK (an object)')
  }
  const jwk = { ...(value as JWK) }
  if (typeof jwk.d !== 'string' || jwk.d === '') {
    throw new InvalidOptionError('privateKey', 'must be a private JWK (it has no "d"; is it the public half?)')
  }
  if (jwk.kid !== undefined && (typeof jwk.kid !== 'string' || jwk.kid === '')) {
    throw new InvalidOptionError('privateKey', '"kid" must be a non-empty string')
  }
  const alg = keyAlgorithm(jwk)
  return Object.freeze({ jwk: Object.freeze(jwk), alg, kid: jwk.kid })
}

function keyAlgorithm(jwk: JWK): string {
  const given = jwk.alg
  if (given !== undefined && typeof given !== 'string') throw new InvalidOptionError('privateKey', '"alg" must be a string')
  const fits = (allowed: readonly string[], fallback: string): string => {
    if (given === undefined) return fallback
    if (!allowed.includes(given)) {
      throw new InvalidOptionError('privateKey', `"alg" ${given.slice(0, 20)} does not fit a ${String(jwk.kty)} key (use one of ${allowed.join(', ')})`)
    }
    return given
  }
  if (jwk.kty === 'RSA') return fits(RSA_ALGORITHMS, 'RS256')
  if (jwk.kty === 'EC') {
    const alg = EC_ALGORITHMS[String(jwk.crv)]
    if (alg === undefined) throw new InvalidOptionError('privateKey', 'an EC key must be on P-256, P-384 or P-521')
    return fits([alg], alg)
  }
  if (jwk.kty === 'OKP') {
    if (jwk.crv !== 'Ed25519') throw new InvalidOptionError('privateKey', 'an OKP key must be on Ed25519')
    return fits(OKP_ALGORITHMS, 'EdDSA')
  }
  throw new InvalidOptionError('privateKey', 'must be an RSA, EC or OKP private JWK (a client secret goes in clientSecret)')
}

/**
 * Signs client assertions for one client: `(audience, now) => JWT`.
 *
 * @example
 * ```ts
 * const sign = createAssertionSigner('my-app', { privateKey: readPrivateKey(jwk) })
 * const assertion = await sign(metadata.issuer, Date.now())
 * ```
 */
export type AssertionSigner = (audience: string, now: number) => Promise<string>

/**
 * Creates the signer of `private_key_jwt` (given `privateKey`) or `client_secret_jwt`
 * (given `clientSecret`) assertions: `iss` and `sub` the client id, `aud` the given
 * audience (the provider's issuer), a fresh `jti`, `iat` now and `exp` a minute later.
 *
 * @example
 * ```ts
 * const sign = createAssertionSigner('my-app', { clientSecret: process.env.CLIENT_SECRET })
 * body.set('client_assertion', await sign(issuer, Date.now()))
 * ```
 */
export function createAssertionSigner(
  clientId: string,
  key: { readonly privateKey: SigningKey } | { readonly clientSecret: string },
): AssertionSigner {
  let imported: Promise<CryptoKey | Uint8Array> | undefined
  const signingKey = (): Promise<CryptoKey | Uint8Array> => {
    if ('clientSecret' in key) return Promise.resolve(new TextEncoder().encode(key.clientSecret))
    imported ??= importJWK(key.privateKey.jwk, key.privateKey.alg).catch(() => {
      imported = undefined
      // jose's message and cause are not passed on: the key is not ours to describe.
      throw new InvalidOptionError('privateKey', `could not be imported as a ${key.privateKey.alg} signing key`)
    })
    return imported
  }
  const alg = 'clientSecret' in key ? 'HS256' : key.privateKey.alg
  const kid = 'clientSecret' in key ? undefined : key.privateKey.kid
  return async (audience, now) => {
    const seconds = Math.floor(now / 1000)
    return new SignJWT({})
      .setProtectedHeader({ alg, typ: 'JWT', ...(kid === undefined ? {} : { kid }) })
      .setIssuer(clientId)
      .setSubject(clientId)
      .setAudience(audience)
      .setJti(randomValue())
      .setIssuedAt(seconds)
      .setExpirationTime(seconds + ASSERTION_LIFETIME)
      .sign(await signingKey())
  }
}
