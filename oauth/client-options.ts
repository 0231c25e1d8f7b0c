/**
 * Reading {@link OAuthClientOptions} once, at creation: every invalid or unknown option is
 * refused with an {@link InvalidOptionError} naming it, and no secret or key is described.
 *
 * @module
 */
import type { webcrypto } from 'node:crypto'
import { importJWK, type CryptoKey, type JWK } from 'jose'
import type { CryptoKeyPair } from 'openid-client'
import { InvalidOptionError } from '../src/index.js'
import { functionOption, integerOption, objectOption, rejectUnknownKeys } from '../src/internal.js'
import type { EndpointOverrides } from './types.js'
import { endpointProblem } from './endpoint-url.js'
import { readScopeArgument } from './token-set.js'
import type { OAuthClientOptions } from './types.js'

/** A private JWK for `private_key_jwt`, with the algorithm it signs with and its import for openid-client. */
export interface SigningKey {
  readonly alg: string
  readonly kid: string | undefined
  readonly cryptoKey: () => Promise<CryptoKey>
}

/** The checked options of one client. */
export type ClientConfig = ReturnType<typeof readClientOptions>

/** Every key of {@link OAuthClientOptions}; any other is refused, with a suggestion. */
const OPTION_KEYS: readonly (keyof OAuthClientOptions)[] = [
  'authUrl', 'issuer', 'clientId', 'clientSecret', 'privateKey', 'redirectUri', 'scopes', 'tokenEndpointAuthMethod',
  'pushedAuthorizationRequests', 'discovery', 'endpoints', 'idTokenAlgorithms', 'timeout', 'maxResponseBytes', 'dispatcher',
  'clockTolerance', 'now', 'dpop',
] // prettier-ignore
const ASYMMETRIC = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519']
const EC_ALGORITHMS: Readonly<Record<string, string>> = { 'P-256': 'ES256', 'P-384': 'ES384', 'P-521': 'ES512' }
const AUTH_METHODS = ['client_secret_basic', 'client_secret_post', 'client_secret_jwt', 'private_key_jwt', 'none'] as const
const PAR_MODES = ['auto', 'always', 'never'] as const
// Web Crypto signature algorithms openid-client makes DPoP proofs with.
const DPOP_KEY_ALGORITHMS = ['ECDSA', 'RSA-PSS', 'RSASSA-PKCS1-v1_5', 'Ed25519']

/** Checks the options of {@link createOAuthClient} and fills in the defaults; throws for the first invalid one. */
export function readClientOptions(options: OAuthClientOptions) {
  if (typeof options !== 'object' || options === null) throw new InvalidOptionError('', 'must be an object')
  rejectUnknownKeys('', options, OPTION_KEYS)
  const { authUrl, issuer, clientSecret, privateKey: jwk, tokenEndpointAuthMethod: method, redirectUri } = options
  if ((authUrl === undefined) === (issuer === undefined)) {
    throw new InvalidOptionError(authUrl === undefined ? 'authUrl' : 'issuer', 'give exactly one of authUrl and issuer')
  }
  const base = url(issuer === undefined ? 'authUrl' : 'issuer', issuer ?? authUrl)
  // RFC 6749 appendix A.1: client_id is VSCHARs. The secret is never described.
  if (typeof options.clientId !== 'string' || !/^[\x20-\x7E]+$/.test(options.clientId)) {
    throw new InvalidOptionError('clientId', 'must be a non-empty string of printable ASCII characters')
  }
  if (clientSecret !== undefined && (typeof clientSecret !== 'string' || clientSecret === '')) {
    throw new InvalidOptionError('clientSecret', 'must be a non-empty string')
  }
  const privateKey = jwk === undefined ? undefined : readPrivateKey(jwk)
  oneOf('tokenEndpointAuthMethod', method, AUTH_METHODS)
  if (method === 'private_key_jwt' && privateKey === undefined) {
    throw new InvalidOptionError('privateKey', 'is needed by tokenEndpointAuthMethod private_key_jwt (a private JWK)')
  }
  if (privateKey !== undefined && method !== undefined && method !== 'private_key_jwt') {
    throw new InvalidOptionError('privateKey', `is only used by tokenEndpointAuthMethod private_key_jwt, not ${method}`)
  }
  if (method?.startsWith('client_secret') === true && clientSecret === undefined) {
    throw new InvalidOptionError('tokenEndpointAuthMethod', `${method} needs options.clientSecret`)
  }
  // RFC 6749 section 3.1.2: absolute, without a fragment; any scheme (a mobile app's own, say).
  if (redirectUri !== undefined && (typeof redirectUri !== 'string' || !URL.canParse(redirectUri))) {
    throw new InvalidOptionError('redirectUri', 'must be an absolute URI')
  }
  if (redirectUri?.includes('#') === true) throw new InvalidOptionError('redirectUri', 'must not contain a fragment')
  // openid-client sends the callback URL without its query as redirect_uri, so a registered query could never match.
  if (redirectUri?.includes('?') === true) throw new InvalidOptionError('redirectUri', 'must not contain a query')
  if (options.discovery !== undefined && typeof options.discovery !== 'boolean')
    throw new InvalidOptionError('discovery', 'must be a boolean')
  const algorithms: unknown = options.idTokenAlgorithms ?? ['RS256']
  if (!Array.isArray(algorithms) || algorithms.length === 0 || !algorithms.every((alg: string) => ASYMMETRIC.includes(alg))) {
    throw new InvalidOptionError('idTokenAlgorithms', `must be a non-empty list of ${ASYMMETRIC.join(', ')}`)
  }
  const dispatcher = options.dispatcher as { dispatch?: unknown } | undefined
  if (dispatcher !== undefined && typeof dispatcher?.dispatch !== 'function')
    throw new InvalidOptionError('dispatcher', 'must be an undici Dispatcher')
  return {
    issuer: base,
    /** `true` for an OpenID Connect `issuer` (its discovery document must exist), `false` for an `authUrl`. */
    required: issuer !== undefined,
    clientId: options.clientId,
    clientSecret,
    privateKey,
    redirectUri,
    defaultScopes: options.scopes === undefined ? ['openid', 'groups'] : readScopeArgument(options.scopes, 'scopes'),
    authMethod: method,
    pushedAuthorizationRequests: oneOf('pushedAuthorizationRequests', options.pushedAuthorizationRequests, PAR_MODES) ?? 'auto',
    discovery: options.discovery !== false,
    overrides: readOverrides(options.endpoints),
    algorithms: Object.freeze([...(algorithms as string[])]),
    timeout: integerOption('timeout', options.timeout, { fallback: 5_000, min: 1, max: 600_000 }),
    maxResponseBytes: integerOption('maxResponseBytes', options.maxResponseBytes, { fallback: 1 << 20, min: 1, max: 64 << 20 }),
    clockTolerance: integerOption('clockTolerance', options.clockTolerance, { fallback: 30_000, min: 0, max: 600_000 }),
    now: functionOption('now', options.now, Date.now),
    dispatcher: options.dispatcher,
    dpop: readDpopKeys(options.dpop),
  }
}

function url(name: string, value: unknown): string {
  const problem = endpointProblem(value)
  if (problem !== undefined) throw new InvalidOptionError(name, problem)
  if (new URL(value as string).search !== '') throw new InvalidOptionError(name, 'must not contain a query')
  return value as string
}

function oneOf<T extends string>(name: string, value: unknown, allowed: readonly T[]): T | undefined {
  if (value !== undefined && !allowed.includes(value as T)) throw new InvalidOptionError(name, `must be one of ${allowed.join(', ')}`)
  return value as T | undefined
}

function readOverrides(value: unknown): EndpointOverrides {
  for (const [name, endpoint] of Object.entries(objectOption<EndpointOverrides>('endpoints', value))) {
    if (!['authorization', 'token', 'userinfo', 'jwks'].includes(name)) {
      throw new InvalidOptionError(`endpoints.${name}`, 'is not a known endpoint (authorization, token, userinfo, jwks)')
    }
    const problem = endpoint === undefined ? undefined : endpointProblem(endpoint)
    if (problem !== undefined) throw new InvalidOptionError(`endpoints.${name}`, problem)
  }
  return { ...(value as EndpointOverrides | undefined) }
}

/** A private JWK, checked: its `alg` must fit the key (default RS256, ES256 or EdDSA by key type). */
function readPrivateKey(value: unknown): SigningKey {
  const jwk = { ...(value as JWK) }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) refuseKey('must be a private JWK (an object)')
  if (typeof jwk.d !== 'string' || jwk.d === '') refuseKey('must be a private JWK (it has no "d"; is it the public half?)')
  if (jwk.kid !== undefined && (typeof jwk.kid !== 'string' || jwk.kid === '')) refuseKey('"kid" must be a non-empty string')
  const fits = { RSA: ASYMMETRIC.filter((alg) => /^[RP]S/.test(alg)), EC: [EC_ALGORITHMS[String(jwk.crv)]], OKP: ['EdDSA', 'Ed25519'] }[
    String(jwk.kty)
  ]
  if (fits === undefined) refuseKey('must be an RSA, EC or OKP private JWK (a client secret goes in clientSecret)')
  if (fits?.[0] === undefined || (jwk.kty === 'OKP' && jwk.crv !== 'Ed25519')) refuseKey('must be on P-256, P-384, P-521 or Ed25519')
  const alg = jwk.alg ?? fits?.[0]
  if (typeof alg !== 'string' || !fits?.includes(alg))
    refuseKey(`"alg" does not fit a ${String(jwk.kty)} key (use one of ${fits?.join(', ') ?? ''})`)
  let imported: Promise<CryptoKey> | undefined
  const cryptoKey = () =>
    (imported ??= (importJWK(jwk, alg) as Promise<CryptoKey>).catch(() => {
      imported = undefined
      // jose's message and cause are not passed on: the key is not ours to describe.
      throw new InvalidOptionError('privateKey', `could not be imported as a ${alg} signing key`)
    }))
  return Object.freeze({ alg, kid: jwk.kid, cryptoKey })
}

function readDpopKeys(value: unknown): CryptoKeyPair | undefined {
  if (value === undefined) return undefined
  const pair = value as Partial<CryptoKeyPair>
  // As jose tells a CryptoKey: the class is not a global on every runtime.
  const isKey = (key: unknown, type: webcrypto.KeyType): boolean =>
    Object.prototype.toString.call(key) === '[object CryptoKey]' &&
    (key as webcrypto.CryptoKey).type === type &&
    DPOP_KEY_ALGORITHMS.includes((key as webcrypto.CryptoKey).algorithm.name)
  if (typeof pair !== 'object' || pair === null || !isKey(pair.privateKey, 'private') || !isKey(pair.publicKey, 'public')) {
    throw new InvalidOptionError('dpop', 'must be a Web Crypto key pair (CryptoKeyPair) for ES256, PS256, RS256, Ed25519 or alike')
  }
  return pair as CryptoKeyPair
}

function refuseKey(problem: string): never {
  throw new InvalidOptionError('privateKey', problem)
}
