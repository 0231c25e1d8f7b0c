/**
 * `voot-guard/oauth`: an OAuth 2.0 / OpenID Connect client, a thin layer over openid-client,
 * for getting the personal access token (with the `groups` scope) that the guards need.
 * What it adds to openid-client is listed in docs/oauth.md.
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
export { discoveryUrl, fixedMetadata } from './discovery.js'
export { isLoopbackHost } from './endpoint-url.js'
export { OAuthError, OAuthValidationError, type OAuthCheck, type OAuthErrorOptions, type OAuthValidationErrorOptions } from './errors.js'
export { BACKCHANNEL_LOGOUT_EVENT, verifyLogoutToken, type LogoutTokenClaims } from './logout-token.js'
export { codeChallenge, parseImplicitFragment } from './redirect.js'
export type {
  AuthorizationRequest,
  AuthorizationUrlOptions,
  CallbackChecks,
  CallbackParams,
  EndpointOverrides,
  IdTokenClaims,
  ImplicitFragmentChecks,
  OAuthClient,
  OAuthClientOptions,
  ProviderMetadata,
  PushedAuthorizationRequestsMode,
  RefreshOptions,
  TokenEndpointAuthMethod,
  TokenSet,
  UserInfo,
} from './types.js'
