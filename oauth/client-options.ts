/**
 * Reading {@link OAuthClientOptions} once, at creation: every invalid option is refused
 * with an {@link InvalidOptionError} naming it, and no secret or key is ever described.
 *
 * @module
 */
import type { webcrypto } from 'node:crypto'
import type { CryptoKeyPair } from 'openid-client'
import type { Dispatcher } from 'undici'
import { InvalidOptionError } from '../src/errors.js'
import { functionOption, integerOption } from '../src/option-checks.js'
import { refuseUnknownKeys } from '../src/resolver/options.js'
import { readPrivateKey, type SigningKey } from './client-key.js'
import type { OAuthClientOptions, PushedAuthorizationRequestsMode, TokenEndpointAuthMethod } from './client-types.js'
import type { EndpointOverrides } from './discovery.js'
import { endpointProblem } from './endpoint-url.js'
import { readScopesOption } from './scope.js'

/**
 * The checked configuration of one client.
 *
 * @example
 * ```ts
 * const config: ClientConfig = readClientOptions({ authUrl, clientId: 'my-app' })
 * ```
 */
export interface ClientConfig {
  readonly issuer: string
  /** `true` for an OpenID Connect `issuer` (its discovery document must exist), `false` for an `authUrl`. */
  readonly required: boolean
  readonly clientId: string
  readonly clientSecret: string | undefined
  readonly privateKey: SigningKey | undefined
  readonly redirectUri: string | undefined
  readonly defaultScopes: readonly string[]
  readonly authMethod: TokenEndpointAuthMethod | undefined
  readonly pushedAuthorizationRequests: PushedAuthorizationRequestsMode
  readonly discovery: boolean
  readonly overrides: EndpointOverrides
  readonly algorithms: readonly string[]
  readonly timeout: number
  readonly maxResponseBytes: number
  readonly clockTolerance: number
  readonly now: () => number
  readonly dispatcher: Dispatcher | undefined
  readonly dpop: CryptoKeyPair | undefined
}

const ALLOWED_ALGORITHMS = new Set(['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'])

const AUTH_METHODS: readonly TokenEndpointAuthMethod[] = [
  'client_secret_basic',
  'client_secret_post',
  'client_secret_jwt',
  'private_key_jwt',
  'none',
]

/** Every key of {@link OAuthClientOptions}; any other is refused, with a suggestion. */
const OPTION_KEYS: readonly (keyof OAuthClientOptions)[] = [
  'authUrl',
  'issuer',
  'clientId',
  'clientSecret',
  'privateKey',
  'redirectUri',
  'scopes',
  'tokenEndpointAuthMethod',
  'pushedAuthorizationRequests',
  'discovery',
  'endpoints',
  'idTokenAlgorithms',
  'timeout',
  'maxResponseBytes',
  'dispatcher',
  'clockTolerance',
  'now',
  'dpop',
]

// Web Crypto signature algorithms openid-client can make DPoP proofs with.
const DPOP_KEY_ALGORITHMS = new Set(['ECDSA', 'RSA-PSS', 'RSASSA-PKCS1-v1_5', 'Ed25519'])

const PAR_MODES: readonly PushedAuthorizationRequestsMode[] = ['auto', 'always', 'never']

// RFC 6749 appendix A.1: client_id is VSCHARs
const VSCHARS = /^[\x20-\x7E]+$/

/**
 * Checks the options of {@link createOAuthClient} and fills in the defaults.
 *
 * @throws {@link InvalidOptionError} naming the first invalid option.
 *
 * @example
 * ```ts
 * const { clientId, defaultScopes } = readClientOptions({ issuer: 'https://op.example.org', clientId: 'my-app' })
 * ```
 */
export function readClientOptions(options: OAuthClientOptions): ClientConfig {
  if (typeof options !== 'object' || options === null) throw new InvalidOptionError('', 'must be an object')
  refuseUnknownKeys('', options, OPTION_KEYS)
  const { issuer, required } = readIssuer(options)
  const clientSecret = readSecret(options.clientSecret)
  const privateKey = readPrivateKey(options.privateKey)
  if (options.discovery !== undefined && typeof options.discovery !== 'boolean') {
    throw new InvalidOptionError('discovery', 'must be a boolean')
  }
  return {
    issuer,
    required,
    clientId: readClientId(options.clientId),
    clientSecret,
    privateKey,
    redirectUri: readRedirectUri(options.redirectUri),
    defaultScopes: options.scopes === undefined ? ['openid', 'groups'] : readScopesOption('scopes', options.scopes),
    authMethod: readAuthMethod(options.tokenEndpointAuthMethod, clientSecret, privateKey),
    pushedAuthorizationRequests: readParMode(options.pushedAuthorizationRequests),
    discovery: options.discovery !== false,
    overrides: readOverrides(options.endpoints),
    algorithms: readAlgorithms(options.idTokenAlgorithms),
    timeout: integerOption('timeout', options.timeout, { fallback: 5_000, min: 1, max: 600_000 }),
    maxResponseBytes: integerOption('maxResponseBytes', options.maxResponseBytes, { fallback: 1 << 20, min: 1, max: 64 << 20 }),
    clockTolerance: integerOption('clockTolerance', options.clockTolerance, { fallback: 30_000, min: 0, max: 600_000 }),
    now: functionOption('now', options.now, Date.now),
    dispatcher: readDispatcher(options.dispatcher),
    dpop: readDpopKeys(options.dpop),
  }
}

function readIssuer(options: OAuthClientOptions): { issuer: string; required: boolean } {
  const { authUrl, issuer } = options
  if ((authUrl === undefined) === (issuer === undefined)) {
    throw new InvalidOptionError(authUrl === undefined ? 'authUrl' : 'issuer', 'give exactly one of authUrl and issuer')
  }
  const name = issuer === undefined ? 'authUrl' : 'issuer'
  const value = issuer ?? authUrl
  const problem = endpointProblem(value)
  if (problem !== undefined) throw new InvalidOptionError(name, problem)
  if (new URL(value as string).search !== '') throw new InvalidOptionError(name, 'must not contain a query')
  return { issuer: value as string, required: issuer !== undefined }
}

function readClientId(value: unknown): string {
  if (typeof value !== 'string' || !VSCHARS.test(value)) {
    throw new InvalidOptionError('clientId', 'must be a non-empty string of printable ASCII characters')
  }
  return value
}

function readSecret(value: unknown): string | undefined {
  if (value === undefined) return undefined
  // Never describe the value: it is a secret.
  if (typeof value !== 'string' || value === '') throw new InvalidOptionError('clientSecret', 'must be a non-empty string')
  return value
}

function readRedirectUri(value: unknown): string | undefined {
  if (value === undefined) return undefined
  if (typeof value !== 'string') throw new InvalidOptionError('redirectUri', 'must be a URL string')
  let url: URL
  try {
    url = new URL(value)
  } catch {
    throw new InvalidOptionError('redirectUri', 'must be an absolute URI')
  }
  // RFC 6749 section 3.1.2: absolute, without a fragment.
  if (url.hash !== '' || value.includes('#')) throw new InvalidOptionError('redirectUri', 'must not contain a fragment')
  return value
}

function readAuthMethod(
  value: unknown,
  secret: string | undefined,
  privateKey: SigningKey | undefined,
): TokenEndpointAuthMethod | undefined {
  if (value !== undefined && !AUTH_METHODS.includes(value as TokenEndpointAuthMethod)) {
    throw new InvalidOptionError('tokenEndpointAuthMethod', `must be one of ${AUTH_METHODS.join(', ')}`)
  }
  const method = value as TokenEndpointAuthMethod | undefined
  if (method === 'private_key_jwt' && privateKey === undefined) {
    throw new InvalidOptionError('privateKey', 'is needed by tokenEndpointAuthMethod private_key_jwt (a private JWK)')
  }
  if (privateKey !== undefined && method !== undefined && method !== 'private_key_jwt') {
    throw new InvalidOptionError('privateKey', `is only used by tokenEndpointAuthMethod private_key_jwt, not ${method}`)
  }
  if (method !== undefined && method.startsWith('client_secret') && secret === undefined) {
    throw new InvalidOptionError('tokenEndpointAuthMethod', `${method} needs options.clientSecret`)
  }
  return method
}

function readParMode(value: unknown): PushedAuthorizationRequestsMode {
  if (value === undefined) return 'auto'
  if (!PAR_MODES.includes(value as PushedAuthorizationRequestsMode)) {
    throw new InvalidOptionError('pushedAuthorizationRequests', `must be one of ${PAR_MODES.join(', ')}`)
  }
  return value as PushedAuthorizationRequestsMode
}

function readOverrides(value: unknown): EndpointOverrides {
  if (value === undefined) return {}
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new InvalidOptionError('endpoints', 'must be an object')
  }
  const overrides: Record<string, string> = {}
  for (const [name, url] of Object.entries(value)) {
    if (!['authorization', 'token', 'userinfo', 'jwks'].includes(name)) {
      throw new InvalidOptionError(`endpoints.${name}`, 'is not a known endpoint (authorization, token, userinfo, jwks)')
    }
    if (url === undefined) continue
    const problem = endpointProblem(url)
    if (problem !== undefined) throw new InvalidOptionError(`endpoints.${name}`, problem)
    overrides[name] = url as string
  }
  return overrides
}

function readAlgorithms(value: unknown): readonly string[] {
  if (value === undefined) return ['RS256']
  if (!Array.isArray(value) || value.length === 0 || !value.every((alg) => ALLOWED_ALGORITHMS.has(alg as string))) {
    throw new InvalidOptionError('idTokenAlgorithms', `must be a non-empty list of ${[...ALLOWED_ALGORITHMS].join(', ')}`)
  }
  return Object.freeze([...(value as string[])])
}

function readDispatcher(value: unknown): Dispatcher | undefined {
  if (value === undefined) return undefined
  if (typeof value !== 'object' || value === null || typeof (value as { dispatch?: unknown }).dispatch !== 'function') {
    throw new InvalidOptionError('dispatcher', 'must be an undici Dispatcher')
  }
  return value as Dispatcher
}

function readDpopKeys(value: unknown): CryptoKeyPair | undefined {
  if (value === undefined) return undefined
  const pair = value as Partial<CryptoKeyPair> | null
  // As jose tells a CryptoKey (the class is not a global on every runtime).
  const isKey = (key: unknown, type: webcrypto.KeyType): boolean => {
    const cryptoKey = key as webcrypto.CryptoKey
    return (
      Object.prototype.toString.call(key) === '[object CryptoKey]' &&
      cryptoKey.type === type &&
      DPOP_KEY_ALGORITHMS.has(cryptoKey.algorithm.name)
    )
  }
  if (typeof pair !== 'object' || pair === null || !isKey(pair.privateKey, 'private') || !isKey(pair.publicKey, 'public')) {
    throw new InvalidOptionError('dpop', 'must be a Web Crypto key pair (CryptoKeyPair) for ES256, PS256, RS256, Ed25519 or alike')
  }
  return pair as CryptoKeyPair
}
