/**
 * Pushed authorization requests (RFC 9126): the client POSTs the authorization request,
 * authenticated, to the provider, and sends the user with only `client_id` and the
 * `request_uri` it got back. The request's parameters then never pass through the
 * browser, and the provider knows they come from the client.
 *
 * @module
 */
import type { ClientAuthenticationParts } from './client-authentication.js'
import type { PushedAuthorizationRequestsMode } from './client-types.js'
import { postToEndpoint } from './endpoint-post.js'
import { OAuthValidationError } from './errors.js'
import type { HttpSend } from './http.js'
import type { ProviderMetadata } from './types.js'

/**
 * Whether an authorization request is pushed: always with `always`, never with `never`,
 * and with `auto` when the provider says it requires it.
 *
 * @throws {@link OAuthValidationError} (`metadata`) when it must be pushed but the
 * provider publishes no `pushed_authorization_request_endpoint`.
 *
 * @example
 * ```ts
 * if (usesPushedRequest('auto', await metadata())) url = await pushAuthorizationRequest(...)
 * ```
 */
export function usesPushedRequest(mode: PushedAuthorizationRequestsMode, metadata: ProviderMetadata): boolean {
  const push = mode === 'always' || (mode === 'auto' && metadata.require_pushed_authorization_requests === true)
  if (push && metadata.pushed_authorization_request_endpoint === undefined) {
    throw new OAuthValidationError('metadata', 'The provider publishes no pushed_authorization_request_endpoint', { status: 502 })
  }
  return push
}

/**
 * POSTs the request's parameters to the provider and returns the URL to send the user
 * to: the authorization endpoint with only `client_id` and `request_uri`.
 *
 * @throws {@link OAuthError} with the provider's `error` when it refuses the request;
 * {@link OAuthValidationError} (`response`) for an answer without a `request_uri`.
 *
 * @example
 * ```ts
 * const url = await pushAuthorizationRequest(send, metadata, built.params, await auth.parts())
 * res.redirect(url)
 * ```
 */
export async function pushAuthorizationRequest(
  send: HttpSend,
  metadata: ProviderMetadata,
  params: URLSearchParams,
  auth: ClientAuthenticationParts,
): Promise<string> {
  const json = await postToEndpoint(send, {
    role: 'pushed_authorization_request',
    url: metadata.pushed_authorization_request_endpoint as string,
    fields: Object.fromEntries(params),
    auth,
    success: 201,
    redact: [],
  })
  const requestUri = json['request_uri']
  if (typeof requestUri !== 'string' || requestUri === '') {
    throw new OAuthValidationError('response', 'The pushed authorization request answer has no request_uri', { status: 502 })
  }
  const url = new URL(metadata.authorization_endpoint)
  url.searchParams.set('client_id', params.get('client_id') ?? '')
  url.searchParams.set('request_uri', requestUri)
  return url.href
}
