/**
 * The OAuth client's public shapes: its options, the arguments and results of its
 * methods, and the {@link OAuthClient} interface itself. The factory is in `client.ts`.
 *
 * @module
 */
import type { Dispatcher } from 'undici'
import type { JWK } from 'jose'
import type { CryptoKeyPair } from 'openid-client'
import type { EndpointOverrides } from './discovery.js'
import type { ImplicitFragmentChecks } from './implicit.js'
import type { CallbackParams } from './params.js'
import type { IdTokenClaims, ProviderMetadata, TokenSet, UserInfo } from './types.js'

/**
 * How the client authenticates at the token and pushed authorization request endpoints
 * (RFC 6749 section 2.3, OpenID Connect Core section 9, RFC 7523 section 2.2):
 *
 * - `client_secret_basic`, `client_secret_post`: the client secret, in HTTP Basic or the form;
 * - `client_secret_jwt`: a short-lived JWT signed with HS256 over the client secret;
 * - `private_key_jwt`: a short-lived JWT signed with `privateKey`;
 * - `none`: a public client.
 *
 * @example
 * ```ts
 * createOAuthClient({ ...options, tokenEndpointAuthMethod: 'private_key_jwt', privateKey: jwk })
 * ```
 */
export type TokenEndpointAuthMethod = 'client_secret_basic' | 'client_secret_post' | 'client_secret_jwt' | 'private_key_jwt' | 'none'

/**
 * When {@link OAuthClient.authorizationUrl} pushes the request to the provider first
 * (RFC 9126): `auto` when the provider's metadata has `require_pushed_authorization_requests:
 * true`, `always`, or `never`.
 *
 * @example
 * ```ts
 * createOAuthClient({ ...options, pushedAuthorizationRequests: 'always' })
 * ```
 */
export type PushedAuthorizationRequestsMode = 'auto' | 'always' | 'never'

/**
 * Options of {@link createOAuthClient}. Give exactly one of `authUrl` and `issuer`.
 *
 * @example
 * ```ts
 * const options: OAuthClientOptions = {
 *   authUrl: 'https://auth.dataporten.no',
 *   clientId: process.env.CLIENT_ID!,
 *   clientSecret: process.env.CLIENT_SECRET!,
 *   redirectUri: 'https://app.example.org/callback',
 *   scopes: ['openid', 'profile', 'groups'],
 * }
 * ```
 */
export interface OAuthClientOptions {
  /**
   * The spec's `{auth_url}`. Its discovery document is used when there is one; when it
   * answers 404 or 410, the spec's fixed paths are used (`/oauth/authorization`,
   * `/oauth/token`, `/userinfo`, JWKS at `/openid/jwks`).
   */
  authUrl?: string | undefined
  /**
   * An OpenID Connect issuer identifier. Its discovery document must exist, and must name
   * exactly this issuer.
   */
  issuer?: string | undefined
  /** The registered client id. */
  clientId: string
  /**
   * The client secret. Leave out for a public client (then `tokenEndpointAuthMethod` is
   * `none`) or a client that authenticates with `privateKey`.
   */
  clientSecret?: string | undefined
  /**
   * The client's private signing key, as a private JWK, for `private_key_jwt`. Its `alg`
   * is used when present, else RS256 for an RSA key, ES256 for a P-256 key, EdDSA for an
   * OKP key; its `kid`, when present, goes into the assertion's header. Never shown in
   * any error.
   */
  privateKey?: JWK | undefined
  /**
   * The registered redirect URI, needed by the authorization code and implicit flows.
   * Any absolute URI without a fragment: HTTPS in production, HTTP in development, or a
   * custom scheme for a mobile app.
   */
  redirectUri?: string | undefined
  /** Scopes asked for by default. Default `['openid', 'groups']`. */
  scopes?: readonly string[] | undefined
  /**
   * Client authentication at the token and pushed authorization request endpoints.
   * Default `private_key_jwt` with a `privateKey`; else `client_secret_basic` (as the spec
   * asks), or `client_secret_post` when the provider's metadata lists only that, or
   * `none` without a client secret.
   */
  tokenEndpointAuthMethod?: TokenEndpointAuthMethod | undefined
  /**
   * Pushed authorization requests (RFC 9126). Default `auto`: pushed when the provider's
   * metadata has `require_pushed_authorization_requests: true`.
   */
  pushedAuthorizationRequests?: PushedAuthorizationRequestsMode | undefined
  /** `false` skips discovery and uses the fixed paths below `authUrl`. Default `true`. */
  discovery?: boolean | undefined
  /** Endpoints that win over discovered or fixed ones. Same HTTPS rule. */
  endpoints?: EndpointOverrides | undefined
  /**
   * ID token signature algorithms accepted. Default `['RS256']` (what OpenID Connect
   * requires every provider to support). Only asymmetric algorithms are allowed.
   */
  idTokenAlgorithms?: readonly string[] | undefined
  /** Deadline of each call to the provider (headers and body), in ms. Default `5000`. */
  timeout?: number | undefined
  /** Largest response body read, in bytes; larger ones are aborted. Default `1048576` (1 MiB). */
  maxResponseBytes?: number | undefined
  /** An undici `Dispatcher` for every request (a proxy `Agent`, a `MockAgent` in tests). */
  dispatcher?: Dispatcher | undefined
  /** Allowed clock skew for ID token `exp`/`iat`/`auth_time`, in ms. Default `30000`. */
  clockTolerance?: number | undefined
  /** Clock, in ms since the epoch, for token expiry and ID token checks. Default `Date.now`. */
  now?: (() => number) | undefined
  /**
   * A Web Crypto key pair (ES256, PS256, RS256, Ed25519, ...) for DPoP (RFC 9449): every
   * token request and `userinfo()` then carry a proof made with it, and a provider that
   * binds the token answers `tokenType: 'DPoP'`. A `use_dpop_nonce` answer is retried once
   * with the provider's nonce. A DPoP-bound token cannot be forwarded to a group service by
   * a guard: the service would need a proof made with this key.
   */
  dpop?: CryptoKeyPair | undefined
}

/**
 * Options of {@link OAuthClient.authorizationUrl}.
 *
 * @example
 * ```ts
 * await client.authorizationUrl({ scope: ['openid', 'groups'], maxAge: 3600, params: { prompt: 'login' } })
 * ```
 */
export interface AuthorizationUrlOptions {
  /** The `state` to send. Default: a fresh random value. */
  state?: string
  /** The `nonce` to send. Default: a fresh random value when the scope has `openid`, else none. */
  nonce?: string
  /** Scopes to ask for, as a list or a space-separated string. Default: the client's `scopes`. */
  scope?: string | readonly string[]
  /**
   * `max_age` (OpenID Connect Core section 3.1.2.1): the longest time, in seconds, since
   * the user last actively authenticated. The ID token must then carry an `auth_time`
   * no older than that. Same as `params.max_age`.
   */
  maxAge?: number
  /**
   * Further parameters (`prompt`, `login_hint`, `ui_locales`, `max_age`, ...). A
   * `response_mode` other than the flow's own (`query` for the code flow, `fragment`
   * for the implicit one) is refused: the client could not read the answer.
   */
  params?: Readonly<Record<string, string>>
}

/**
 * An authorization request: send the user to `url`; keep `state`, `nonce`,
 * `codeVerifier` and `maxAge` in the session for {@link OAuthClient.handleCallback}.
 *
 * @example
 * ```ts
 * const { url, ...checks } = await client.authorizationUrl()
 * req.session.login = checks // state, nonce, codeVerifier, maxAge
 * res.redirect(url)
 * ```
 */
export interface AuthorizationRequest {
  /**
   * Where to redirect the user. With a pushed authorization request, it carries only
   * `client_id` and `request_uri`.
   */
  readonly url: string
  readonly state: string
  /** The nonce sent; `undefined` when none was (scope without `openid`). */
  readonly nonce: string | undefined
  /** The PKCE verifier. Keep it server-side: it is as sensitive as the code. */
  readonly codeVerifier: string
  /** The `max_age` sent, in seconds; `undefined` when none was. */
  readonly maxAge: number | undefined
}

/**
 * What the redirect back is checked against: the values {@link OAuthClient.authorizationUrl}
 * returned (pass `nonce` and `maxAge` through even when they are `undefined`).
 *
 * @example
 * ```ts
 * const checks: CallbackChecks = req.session.login
 * const tokens = await client.handleCallback(req.originalUrl, checks)
 * ```
 */
export interface CallbackChecks {
  state: string
  codeVerifier: string
  nonce?: string | undefined
  /** The `max_age` sent, in seconds: the ID token must then have an `auth_time` no older. */
  maxAge?: number | undefined
}

/**
 * Options of {@link OAuthClient.refresh}.
 *
 * @example
 * ```ts
 * const fresh = await client.refresh(tokens, { scope: 'groups' })
 * ```
 */
export interface RefreshOptions {
  /** Scopes to ask for, no more than were granted. Default: the ones granted. */
  scope?: string | readonly string[]
}

/**
 * The OAuth 2.0 / OpenID Connect client. Create it with {@link createOAuthClient}.
 *
 * @example
 * ```ts
 * const client: OAuthClient = createOAuthClient({ authUrl, clientId, clientSecret, redirectUri })
 * const profile = await client.userinfo(tokens)
 * ```
 */
export interface OAuthClient {
  /** The client id. */
  readonly clientId: string
  /**
   * The provider's metadata (discovered once, then cached; a failed discovery is retried
   * on the next call).
   */
  metadata(): Promise<ProviderMetadata>
  /**
   * Builds the authorization code flow's authorization request, with PKCE S256 always on.
   * With pushed authorization requests (see `pushedAuthorizationRequests`), the request
   * is first POSTed, with client authentication, to the provider.
   *
   * @throws {@link voot-guard!InvalidArgumentError} without `redirectUri` or with bad arguments;
   * {@link OAuthError} when the provider refuses a pushed request.
   */
  authorizationUrl(options?: AuthorizationUrlOptions): Promise<AuthorizationRequest>
  /**
   * Handles the redirect back: checks `state` (and `iss`, RFC 9207), turns an `error` into
   * an {@link OAuthError}, exchanges the code (with the PKCE verifier and client
   * authentication) and verifies the ID token when there is one (with its `auth_time`
   * against `maxAge` when one was sent).
   *
   * @throws {@link OAuthValidationError}, {@link OAuthError}, or {@link voot-guard!UpstreamError}.
   */
  handleCallback(params: CallbackParams, checks: CallbackChecks): Promise<TokenSet>
  /**
   * Gets a client-only token (client credentials grant). The group service refuses `me/*`
   * for such tokens (they represent no user): use them for `groups`, `grouptypes`, ...
   */
  clientCredentials(options?: { scope?: string | readonly string[] }): Promise<TokenSet>
  /**
   * Gets fresh tokens with a refresh token (RFC 6749 section 6). Given the previous token
   * set, a new ID token must be for the same issuer, subject, audience and authentication
   * (OpenID Connect Core section 12.2); the granted scopes and the refresh token carry
   * over when the answer does not name new ones.
   *
   * @throws {@link OAuthValidationError} (`id_token`), {@link OAuthError} (`invalid_grant`, ...).
   */
  refresh(tokens: string | TokenSet, options?: RefreshOptions): Promise<TokenSet>
  /**
   * Fetches the user's profile. Given a token set with ID token claims, or a `subject`,
   * the answer's `sub` must match it (OpenID Connect Core section 5.3.2).
   */
  userinfo(token: string | TokenSet, options?: { subject?: string }): Promise<UserInfo>
  /**
   * Verifies an ID token (signature, issuer, audience, expiry, ...). `nonce` is checked
   * when given.
   */
  verifyIdToken(idToken: string, options?: { nonce?: string; accessToken?: string }): Promise<IdTokenClaims>
  /**
   * Builds an implicit grant authorization request (`response_type=token`); the token
   * comes back in the redirect URI's fragment, read with {@link OAuthClient.parseImplicitFragment}.
   */
  implicitAuthorizationUrl(
    options?: Omit<AuthorizationUrlOptions, 'nonce' | 'maxAge'>,
  ): Promise<{ readonly url: string; readonly state: string }>
  /**
   * {@link parseImplicitFragment} with this client's scopes, clock and issuer: the
   * fragment's `iss` is checked when present, and required when the provider's metadata
   * has `authorization_response_iss_parameter_supported: true` (RFC 9207). Before the
   * metadata is loaded (by `implicitAuthorizationUrl()` or `metadata()`), a fragment
   * without `iss` is refused, since whether one is required cannot be known.
   */
  parseImplicitFragment(urlOrFragment: CallbackParams, checks: Pick<ImplicitFragmentChecks, 'state'>): TokenSet
}
