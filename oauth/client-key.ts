/**
 * The client's private key for `private_key_jwt` (RFC 7523 section 2.2): checked at
 * creation, imported once for openid-client's `PrivateKeyJwt`, which signs the assertions.
 *
 * The key never appears in an error: problems are described by kind only, and jose's own
 * errors are not passed on as causes.
 *
 * @module
 */
import { importJWK, type CryptoKey, type JWK } from 'jose'
import { InvalidOptionError } from '../src/errors.js'

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
      throw new InvalidOptionError(
        'privateKey',
        `"alg" ${given.slice(0, 20)} does not fit a ${String(jwk.kty)} key (use one of ${allowed.join(', ')})`,
      )
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
 * The key as a `CryptoKey` for openid-client, imported on first use.
 *
 * @throws {@link InvalidOptionError} naming `privateKey` when the key cannot be imported.
 *
 * @example
 * ```ts
 * const importKey = keyImporter(signingKey)
 * const key = await importKey()
 * ```
 */
export function keyImporter(key: SigningKey): () => Promise<CryptoKey> {
  let imported: Promise<CryptoKey> | undefined
  return () => {
    imported ??= (importJWK(key.jwk, key.alg) as Promise<CryptoKey>).catch(() => {
      imported = undefined
      // jose's message and cause are not passed on: the key is not ours to describe.
      throw new InvalidOptionError('privateKey', `could not be imported as a ${key.alg} signing key`)
    })
    return imported
  }
}
