/**
 * Client authentication at the token and pushed authorization request endpoints: which
 * method is used, and what it adds to a request (an HTTP Basic header, form fields, or a
 * signed client assertion).
 *
 * @module
 */
import { createAssertionSigner, type AssertionSigner, type SigningKey } from './client-assertion.js'
import type { TokenEndpointAuthMethod } from './client-types.js'
import type { ProviderMetadata } from './types.js'

/**
 * What authenticating one request adds: headers, form fields, and the values that must
 * be kept out of any error text.
 *
 * @example
 * ```ts
 * const { headers, fields, secrets } = await authenticate(issuer)
 * ```
 */
export interface ClientAuthenticationParts {
  readonly headers: Readonly<Record<string, string>>
  readonly fields: Readonly<Record<string, string>>
  readonly secrets: readonly string[]
}

/**
 * The client's credentials, as checked at creation.
 *
 * @example
 * ```ts
 * const credentials: ClientCredentials = { clientId, clientSecret, privateKey: readPrivateKey(jwk), method: undefined }
 * ```
 */
export interface ClientCredentials {
  readonly clientId: string
  readonly clientSecret: string | undefined
  readonly privateKey: SigningKey | undefined
  /** The configured method; `undefined` to choose one from the credentials and the metadata. */
  readonly method: TokenEndpointAuthMethod | undefined
}

/**
 * Authenticates requests of one client.
 *
 * @example
 * ```ts
 * const auth = createClientAuthentication(credentials, metadata, Date.now)
 * const parts = await auth.parts()
 * ```
 */
export interface ClientAuthentication {
  /** The method in use (the configured one, or the one chosen from the metadata). */
  method(): Promise<TokenEndpointAuthMethod>
  /** What to add to one request. */
  parts(): Promise<ClientAuthenticationParts>
}

const JWT_BEARER = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer'

/**
 * Creates the client authentication of one client.
 *
 * @example
 * ```ts
 * const auth = createClientAuthentication({ clientId, clientSecret, privateKey: undefined, method: undefined }, metadata, Date.now)
 * if ((await auth.method()) === 'none') throw new Error('a confidential client is needed')
 * ```
 */
export function createClientAuthentication(
  credentials: ClientCredentials,
  metadata: () => Promise<ProviderMetadata>,
  now: () => number,
): ClientAuthentication {
  const { clientId, clientSecret, privateKey } = credentials
  let signer: AssertionSigner | undefined
  if (privateKey !== undefined) signer = createAssertionSigner(clientId, { privateKey })
  else if (credentials.method === 'client_secret_jwt' && clientSecret !== undefined) {
    signer = createAssertionSigner(clientId, { clientSecret })
  }

  const method = async (): Promise<TokenEndpointAuthMethod> => {
    if (credentials.method !== undefined) return credentials.method
    if (privateKey !== undefined) return 'private_key_jwt'
    if (clientSecret === undefined) return 'none'
    const supported = (await metadata()).token_endpoint_auth_methods_supported
    if (supported !== undefined && !supported.includes('client_secret_basic') && supported.includes('client_secret_post')) {
      return 'client_secret_post'
    }
    return 'client_secret_basic'
  }

  const parts = async (): Promise<ClientAuthenticationParts> => {
    const chosen = await method()
    // The spec lists client_id among the form fields even with HTTP Basic; RFC 6749 allows it.
    const fields: Record<string, string> = { client_id: clientId }
    const headers: Record<string, string> = {}
    const secrets: string[] = clientSecret === undefined ? [] : [clientSecret]
    if (chosen === 'client_secret_basic' && clientSecret !== undefined) {
      // RFC 6749 section 2.3.1: both parts form-urlencoded before Base64.
      headers['authorization'] = `Basic ${Buffer.from(`${formEncode(clientId)}:${formEncode(clientSecret)}`).toString('base64')}`
    } else if (chosen === 'client_secret_post' && clientSecret !== undefined) {
      fields['client_secret'] = clientSecret
    } else if ((chosen === 'private_key_jwt' || chosen === 'client_secret_jwt') && signer !== undefined) {
      // The issuer is an audience every provider accepts for both endpoints (RFC 7523 section 3, item 3).
      const assertion = await signer((await metadata()).issuer, now())
      fields['client_assertion_type'] = JWT_BEARER
      fields['client_assertion'] = assertion
      secrets.push(assertion)
    }
    return { headers, fields, secrets }
  }

  return { method, parts }
}

/** application/x-www-form-urlencoded encoding of one value (RFC 6749 appendix B). */
function formEncode(value: string): string {
  return encodeURIComponent(value).replace(/%20/g, '+')
}
