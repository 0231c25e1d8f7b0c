/**
 * Finding the provider's endpoints: OpenID Connect Discovery 1.0 at
 * `{issuer}/.well-known/openid-configuration`, or, for a provider without a discovery
 * document, the fixed paths of the group service spec.
 *
 * @module
 */
import { endpointProblem } from './endpoint-url.js'
import { OAuthValidationError } from './errors.js'
import { jsonObject, unexpectedStatus, type ProviderFetch } from './fetch.js'
import type { ProviderMetadata } from './types.js'

/**
 * Endpoints given explicitly; they win over discovered and fixed ones.
 *
 * @example
 * ```ts
 * createOAuthClient({ ...options, endpoints: { userinfo: 'https://auth.example.org/openid/userinfo' } })
 * ```
 */
export interface EndpointOverrides {
  /** The authorization endpoint. */
  readonly authorization?: string
  /** The token endpoint. */
  readonly token?: string
  /** The userinfo endpoint. */
  readonly userinfo?: string
  /** The JWKS (the provider's public signing keys). */
  readonly jwks?: string
}

/**
 * Where and how to look for the provider's metadata.
 *
 * @example
 * ```ts
 * const target: DiscoveryTarget = { issuer: authUrl, required: false, enabled: true, overrides: {} }
 * ```
 */
export interface DiscoveryTarget {
  /** The issuer (or spec `{auth_url}`) exactly as configured. */
  readonly issuer: string
  /**
   * `true` for an OpenID Connect issuer: the document must exist. `false` for a spec
   * `{auth_url}`: a 404 or 410 means "no discovery", and the fixed paths are used.
   */
  readonly required: boolean
  /** `false` skips discovery and uses the fixed paths straight away. */
  readonly enabled: boolean
  readonly overrides: EndpointOverrides
}

const STRING_LIST_FIELDS = [
  'scopes_supported',
  'response_types_supported',
  'grant_types_supported',
  'code_challenge_methods_supported',
  'token_endpoint_auth_methods_supported',
  'id_token_signing_alg_values_supported',
] as const

const ENDPOINT_FIELDS = [
  'authorization_endpoint',
  'token_endpoint',
  'userinfo_endpoint',
  'jwks_uri',
  'pushed_authorization_request_endpoint',
] as const

const BOOLEAN_FIELDS = ['authorization_response_iss_parameter_supported', 'require_pushed_authorization_requests'] as const

/**
 * The address of the discovery document of `issuer` (OpenID Connect Discovery 1.0
 * section 4: the issuer without a trailing slash, then the well-known path).
 *
 * @example
 * ```ts
 * discoveryUrl('https://auth.example.org/') // 'https://auth.example.org/.well-known/openid-configuration'
 * ```
 */
export function discoveryUrl(issuer: string): string {
  return `${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`
}

/**
 * The spec's fixed endpoints below `{auth_url}`: `/oauth/authorization`, `/oauth/token`,
 * `/userinfo`, and the JWKS at `/openid/jwks` where the real service publishes it.
 *
 * @example
 * ```ts
 * fixedMetadata('http://127.0.0.1:4000').token_endpoint // 'http://127.0.0.1:4000/oauth/token'
 * ```
 */
export function fixedMetadata(authUrl: string): ProviderMetadata {
  const base = authUrl.replace(/\/+$/, '')
  return {
    issuer: base,
    authorization_endpoint: `${base}/oauth/authorization`,
    token_endpoint: `${base}/oauth/token`,
    userinfo_endpoint: `${base}/userinfo`,
    jwks_uri: `${base}/openid/jwks`,
    discovered: false,
  }
}

/**
 * Loads the provider's metadata: the discovery document when there is one (checked:
 * `issuer` must match, every endpoint must be HTTPS or loopback), else the fixed paths;
 * explicit overrides win either way.
 *
 * @throws {@link OAuthValidationError} (`metadata`, `issuer`, `endpoint`) for an unusable
 * document; {@link UpstreamError} when the provider cannot be reached or fails.
 *
 * @example
 * ```ts
 * const metadata = await loadMetadata({ issuer, required: true, enabled: true, overrides: {} }, fetch)
 * ```
 */
export async function loadMetadata(target: DiscoveryTarget, fetch: ProviderFetch): Promise<ProviderMetadata> {
  const base = target.enabled ? await discover(target, fetch) : undefined
  const metadata = base ?? fixedMetadata(target.issuer)
  const { overrides } = target
  return Object.freeze({
    ...metadata,
    ...(overrides.authorization === undefined ? {} : { authorization_endpoint: overrides.authorization }),
    ...(overrides.token === undefined ? {} : { token_endpoint: overrides.token }),
    ...(overrides.userinfo === undefined ? {} : { userinfo_endpoint: overrides.userinfo }),
    ...(overrides.jwks === undefined ? {} : { jwks_uri: overrides.jwks }),
  })
}

async function discover(target: DiscoveryTarget, fetch: ProviderFetch): Promise<ProviderMetadata | undefined> {
  const res = await fetch(discoveryUrl(target.issuer), { headers: { accept: 'application/json' } })
  if ((res.status === 404 || res.status === 410) && !target.required) return undefined
  if (res.status !== 200) throw unexpectedStatus('discovery', res.status)
  const doc = await jsonObject(res)
  if (doc === undefined) {
    throw new OAuthValidationError('metadata', 'The discovery document is not a JSON object', { status: 502 })
  }
  if (typeof doc['issuer'] !== 'string' || !issuerMatches(doc['issuer'], target)) {
    // OpenID Connect Discovery 1.0 section 4.3: a document for another issuer is never used.
    throw new OAuthValidationError('issuer', 'The discovery document names a different issuer', { status: 502 })
  }
  const metadata: Record<string, unknown> = { ...doc, discovered: true }
  for (const field of ENDPOINT_FIELDS) {
    const value = doc[field]
    const required = field === 'authorization_endpoint' || field === 'token_endpoint'
    if (value === undefined && !required) continue
    const problem = endpointProblem(value)
    if (problem !== undefined) {
      throw new OAuthValidationError('endpoint', `The discovered ${field} ${problem}`, { status: 502 })
    }
  }
  for (const field of STRING_LIST_FIELDS) {
    const value = doc[field]
    if (value !== undefined && !(Array.isArray(value) && value.every((v) => typeof v === 'string'))) {
      delete metadata[field]
    }
  }
  for (const field of BOOLEAN_FIELDS) {
    if (typeof doc[field] !== 'boolean') delete metadata[field]
  }
  return metadata as ProviderMetadata
}

function issuerMatches(found: string, target: DiscoveryTarget): boolean {
  if (found === target.issuer) return true
  // A spec {auth_url} is a base address, not an issuer identifier; a trailing slash is noise.
  return !target.required && found.replace(/\/+$/, '') === target.issuer.replace(/\/+$/, '')
}
