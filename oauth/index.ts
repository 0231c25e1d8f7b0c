/**
 * `voot-guard/oauth`: an OAuth 2.0 / OpenID Connect client, a thin layer over openid-client,
 * for getting the personal access token (with the `groups` scope) that the guards need:
 * the code flow with PKCE, `state`, `nonce`, `max_age`, RFC 9207 `iss` and pushed
 * authorization requests; client authentication with the secret or a private key; client
 * credentials; refresh; userinfo; DPoP; the implicit grant's fragment; the group service
 * spec's fixed paths; HTTPS except on loopback; no token, code, verifier or secret in any error.
 *
 * @example
 * ```ts
 * import { createOAuthClient } from 'voot-guard/oauth'
 *
 * const client = createOAuthClient({ authUrl, clientId, clientSecret, redirectUri, scopes: ['openid', 'groups'] })
 * const { url, ...checks } = await client.authorizationUrl()    // keep checks in the session
 * const tokens = await client.handleCallback(callbackUrl, checks) // tokens.accessToken, tokens.expiresAt
 * ```
 *
 * @module
 */
export { createOAuthClient } from './client.js'
export { discoveryUrl, fixedMetadata, type EndpointOverrides } from './discovery.js'
export { isLoopbackHost } from './endpoint-url.js'
export { OAuthError, OAuthValidationError, type OAuthCheck, type OAuthErrorOptions, type OAuthValidationErrorOptions } from './errors.js'
export { codeChallenge, parseImplicitFragment, type CallbackParams, type ImplicitFragmentChecks } from './redirect.js'
export type {
  AuthorizationRequest,
  AuthorizationUrlOptions,
  CallbackChecks,
  IdTokenClaims,
  OAuthClient,
  OAuthClientOptions,
  ProviderMetadata,
  PushedAuthorizationRequestsMode,
  RefreshOptions,
  TokenEndpointAuthMethod,
  TokenSet,
  UserInfo,
} from './types.js'
