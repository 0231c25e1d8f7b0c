/**
 * The provider's endpoints: OpenID Connect Discovery at `{issuer}/.well-known/openid-configuration`,
 * or the group service spec's fixed paths for a provider without one. Fetched here rather
 * than by openid-client for the spec's fallback (404 or 410 below an `{auth_url}`) and for
 * the HTTPS-except-loopback rule on every endpoint.
 *
 * @module
 */
import { endpointProblem } from './endpoint-url.js'
import { OAuthValidationError } from './errors.js'
import { jsonObject, unexpectedStatus, type ProviderFetch } from './fetch.js'
import type { EndpointOverrides, ProviderMetadata } from './types.js'

const REQUIRED = ['authorization_endpoint', 'token_endpoint']
const ENDPOINTS = [...REQUIRED, 'userinfo_endpoint', 'jwks_uri', 'pushed_authorization_request_endpoint', 'end_session_endpoint']
const LISTS = [
  'scopes',
  'response_types',
  'grant_types',
  'code_challenge_methods',
  'token_endpoint_auth_methods',
  'id_token_signing_alg_values',
]
const FLAGS = ['authorization_response_iss_parameter_supported', 'require_pushed_authorization_requests']

/**
 * The address of the discovery document of `issuer` (without a trailing slash, then the well-known path).
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
 * The spec's fixed endpoints below `{auth_url}`, with the JWKS where the real service publishes it.
 *
 * @example
 * ```ts
 * fixedMetadata('http://127.0.0.1:4000').token_endpoint // 'http://127.0.0.1:4000/oauth/token'
 * ```
 */
export function fixedMetadata(authUrl: string): ProviderMetadata {
  const base = authUrl.replace(/\/+$/, '')
  const [authorization_endpoint, token_endpoint] = [`${base}/oauth/authorization`, `${base}/oauth/token`]
  return {
    issuer: base,
    authorization_endpoint,
    token_endpoint,
    userinfo_endpoint: `${base}/userinfo`,
    jwks_uri: `${base}/openid/jwks`,
    discovered: false,
  }
}

/**
 * The provider's metadata: the discovery document (its `issuer` must match: exactly for an
 * OpenID Connect issuer, up to a trailing slash for an `{auth_url}`; every endpoint HTTPS or
 * loopback) or, for an `{auth_url}` without one or with `discovery: false`, the fixed paths; overrides win.
 */
export async function loadMetadata(
  target: { readonly issuer: string; readonly required: boolean; readonly discovery: boolean; readonly overrides: EndpointOverrides },
  fetch: ProviderFetch,
): Promise<ProviderMetadata> {
  const metadata = (target.discovery ? await discover(target, fetch) : undefined) ?? fixedMetadata(target.issuer)
  const { authorization, token, userinfo, jwks } = target.overrides
  const overrides = { authorization_endpoint: authorization, token_endpoint: token, userinfo_endpoint: userinfo, jwks_uri: jwks }
  return Object.freeze({ ...metadata, ...Object.fromEntries(Object.entries(overrides).filter(([, url]) => url !== undefined)) })
}

async function discover(target: { readonly issuer: string; readonly required: boolean }, fetch: ProviderFetch) {
  const res = await fetch(discoveryUrl(target.issuer), { headers: { accept: 'application/json' } })
  if ((res.status === 404 || res.status === 410) && !target.required) return undefined
  if (res.status !== 200) throw unexpectedStatus('discovery', res.status)
  const doc = await jsonObject(res)
  if (doc === undefined) throw new OAuthValidationError('metadata', 'The discovery document is not a JSON object', { status: 502 })
  const trim = (issuer: unknown) => (typeof issuer === 'string' && !target.required ? issuer.replace(/\/+$/, '') : issuer)
  // OpenID Connect Discovery 1.0 section 4.3: a document for another issuer is never used.
  if (typeof doc['issuer'] !== 'string' || trim(doc['issuer']) !== trim(target.issuer)) {
    throw new OAuthValidationError('issuer', 'The discovery document names a different issuer', { status: 502 })
  }
  for (const field of ENDPOINTS) {
    const problem = doc[field] === undefined && !REQUIRED.includes(field) ? undefined : endpointProblem(doc[field])
    if (problem !== undefined) throw new OAuthValidationError('endpoint', `The discovered ${field} ${problem}`, { status: 502 })
  }
  // Malformed optional fields are dropped rather than trusted.
  const kept = Object.entries(doc).filter(([field, value]) =>
    LISTS.includes(field.replace(/_supported$/, ''))
      ? Array.isArray(value) && value.every((v) => typeof v === 'string')
      : !FLAGS.includes(field) || typeof value === 'boolean',
  )
  return { ...Object.fromEntries(kept), discovered: true } as ProviderMetadata
}
