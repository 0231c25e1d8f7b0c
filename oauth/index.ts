/**
 * `voot-guard/oauth`: an OAuth 2.0 / OpenID Connect client for getting the personal access
 * token (with the `groups` scope) that the guards need.
 *
 * - authorization code flow with PKCE S256, `state`, `nonce`, `max_age` and RFC 9207 `iss`
 *   checks, and pushed authorization requests (RFC 9126);
 * - client authentication with the secret (Basic, form, `client_secret_jwt`) or a private
 *   key (`private_key_jwt`);
 * - client credentials (client-only tokens; the group service refuses `me/*` for them);
 * - refresh, checked against the previous token set (OpenID Connect Core section 12.2);
 * - the implicit grant's fragment, for client-side apps;
 * - userinfo, and ID tokens verified against the provider's JWKS (key rotation picked up);
 * - endpoints from OpenID Connect discovery, or the group service spec's fixed paths;
 * - HTTPS required except on loopback; undici only, with deadlines and body size limits;
 * - no token, code, verifier or secret in any error.
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
export type {
  AuthorizationRequest,
  AuthorizationUrlOptions,
  CallbackChecks,
  OAuthClient,
  OAuthClientOptions,
  PushedAuthorizationRequestsMode,
  RefreshOptions,
  TokenEndpointAuthMethod,
} from './client-types.js'
export { discoveryUrl, fixedMetadata, type EndpointOverrides } from './discovery.js'
export { isLoopbackHost } from './endpoint-url.js'
export { OAuthError, OAuthValidationError, type OAuthCheck, type OAuthErrorOptions, type OAuthValidationErrorOptions } from './errors.js'
export { parseImplicitFragment, type ImplicitFragmentChecks } from './implicit.js'
export type { CallbackParams } from './params.js'
export { codeChallenge } from './pkce.js'
export type { IdTokenClaims, ProviderMetadata, TokenSet, UserInfo } from './types.js'
