/**
 * The OAuth client's public shapes: its options, the arguments and results of its methods,
 * and the {@link OAuthClient} interface. The factory is in `client.ts`.
 *
 * @module
 */
import type { JWK } from 'jose'
import type { CryptoKeyPair } from 'openid-client'
import type { Dispatcher } from 'undici'

/**
 * Client authentication at the token and PAR endpoints: the secret in HTTP Basic or the
 * form, a JWT signed with the secret (HS256) or with `privateKey`, or none (a public client).
 *
 * @example
 * ```ts
 * createOAuthClient({ ...options, tokenEndpointAuthMethod: 'private_key_jwt', privateKey: jwk })
 * ```
 */
export type TokenEndpointAuthMethod = 'client_secret_basic' | 'client_secret_post' | 'client_secret_jwt' | 'private_key_jwt' | 'none'

/**
 * When authorization requests are pushed first (RFC 9126): `auto` when the provider's
 * metadata has `require_pushed_authorization_requests: true`, `always`, or `never`.
 *
 * @example
 * ```ts
 * createOAuthClient({ ...options, pushedAuthorizationRequests: 'always' })
 * ```
 */
export type PushedAuthorizationRequestsMode = 'auto' | 'always' | 'never'

/**
 * Options of {@link createOAuthClient}. Give exactly one of `authUrl` and `issuer`; any
 * other key is refused.
 *
 * @example
 * ```ts
 * const options: OAuthClientOptions = { authUrl: 'https://auth.dataporten.no', clientId, clientSecret, redirectUri, scopes: ['openid', 'groups'] }
 * ```
 */
export interface OAuthClientOptions {
  /**
   * The group service spec's `{auth_url}`: its discovery document when there is one, else
   * (404 or 410) the spec's fixed paths (`/oauth/authorization`, `/oauth/token`, `/userinfo`, `/openid/jwks`).
   */
  authUrl?: string | undefined
  /** An OpenID Connect issuer: its discovery document must exist and name exactly this issuer. */
  issuer?: string | undefined
  /** The registered client id. */
  clientId: string
  /** The client secret; leave out for a public client or one that signs with `privateKey`. Never shown. */
  clientSecret?: string | undefined
  /** A private JWK for `private_key_jwt`; its `alg` (else RS256, ES256 or EdDSA by key type) and `kid` are used. Never shown. */
  privateKey?: JWK | undefined
  /** The registered redirect URI (absolute, no query or fragment), needed by the code and implicit flows. */
  redirectUri?: string | undefined
  /** Scopes asked for by default. Default `['openid', 'groups']`. */
  scopes?: readonly string[] | undefined
  /**
   * Default `private_key_jwt` with a `privateKey`, else `client_secret_basic` (as the spec asks),
   * `client_secret_post` when the provider lists only that, or `none` without a secret.
   */
  tokenEndpointAuthMethod?: TokenEndpointAuthMethod | undefined
  /** Pushed authorization requests (RFC 9126). Default `auto`. */
  pushedAuthorizationRequests?: PushedAuthorizationRequestsMode | undefined
  /** `false` skips discovery and uses the fixed paths below `authUrl`. Default `true`. */
  discovery?: boolean | undefined
  /** Endpoints that win over discovered or fixed ones (HTTPS, or HTTP on loopback). */
  endpoints?: EndpointOverrides | undefined
  /** ID token signature algorithms accepted (asymmetric only). Default `['RS256']`. */
  idTokenAlgorithms?: readonly string[] | undefined
  /** Deadline of each call to the provider (headers and body), in ms. Default `5000`. */
  timeout?: number | undefined
  /** Largest response body read, in bytes. Default `1048576` (1 MiB). */
  maxResponseBytes?: number | undefined
  /** An undici `Dispatcher` for every request (a proxy `Agent`, a `MockAgent` in tests). */
  dispatcher?: Dispatcher | undefined
  /** Allowed clock skew for ID token times, in ms. Default `30000`. */
  clockTolerance?: number | undefined
  /** Clock, in ms since the epoch, for token expiry, ID tokens and client assertions. Default `Date.now`. */
  now?: (() => number) | undefined
  /**
   * A Web Crypto key pair (ES256, PS256, RS256, Ed25519, ...) for DPoP (RFC 9449): token
   * requests and `userinfo()` then carry proofs, and a `use_dpop_nonce` answer is retried once.
   * A DPoP-bound token cannot be forwarded to a group service by a guard: the service would
   * need a proof made with this key.
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
  /** Default: a fresh random value. */
  state?: string
  /** Default: a fresh random value when the scope has `openid`, else none. */
  nonce?: string
  /** A list or a space-separated string. Default: the client's `scopes`. */
  scope?: string | readonly string[]
  /** `max_age` in seconds: the ID token must then carry an `auth_time` no older. */
  maxAge?: number
  /** Further parameters (`prompt`, `login_hint`, ...); a `response_mode` the flow cannot read is refused. */
  params?: Readonly<Record<string, string>>
}

/**
 * An authorization request: send the user to `url`; keep the rest in the session for
 * {@link OAuthClient.handleCallback}.
 *
 * @example
 * ```ts
 * const { url, ...checks } = await client.authorizationUrl()
 * req.session.login = checks // state, nonce, codeVerifier, maxAge
 * res.redirect(url)
 * ```
 */
export interface AuthorizationRequest {
  /** Where to redirect the user (with PAR, only `client_id` and `request_uri`). */
  readonly url: string
  readonly state: string
  /** `undefined` when none was sent (scope without `openid`). */
  readonly nonce: string | undefined
  /** The PKCE verifier: as sensitive as the code, keep it server-side. */
  readonly codeVerifier: string
  /** The `max_age` sent, in seconds. */
  readonly maxAge: number | undefined
}

/**
 * What the redirect back is checked against: the values {@link OAuthClient.authorizationUrl} returned.
 *
 * @example
 * ```ts
 * const tokens = await client.handleCallback(req.originalUrl, req.session.login as CallbackChecks)
 * ```
 */
export interface CallbackChecks {
  state: string
  codeVerifier: string
  nonce?: string | undefined
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
 * The verified claims of an ID token; other claims the provider sends are kept.
 *
 * @example
 * ```ts
 * const { sub, auth_time } = tokens.claims ?? {}
 * ```
 */
export interface IdTokenClaims {
  readonly iss: string
  readonly sub: string
  readonly aud: string | readonly string[]
  readonly exp: number
  readonly iat: number
  readonly nonce?: string
  readonly auth_time?: number
  readonly azp?: string
  readonly [claim: string]: unknown
}

/**
 * The tokens from one successful grant. `expiresAt` counts from when the request was sent
 * (so it errs early): hand it to the guard's `getToken` so that no cached group answer
 * outlives the token.
 *
 * @example
 * ```ts
 * const tokens = await client.handleCallback(req.query, checks)
 * req.session.accessToken = tokens.accessToken
 * req.session.expiresAt = tokens.expiresAt
 * ```
 */
export interface TokenSet {
  /** The access token; a `DPoP` one is only usable with a proof made with the client's key. */
  readonly accessToken: string
  /** `DPoP` when the provider bound the token to the client's `dpop` key, else `Bearer`. */
  readonly tokenType: 'Bearer' | 'DPoP'
  /** Lifetime in seconds as the provider sent it. */
  readonly expiresIn: number | undefined
  /** Expiry in ms since the epoch; `undefined` when the provider sent no lifetime. */
  readonly expiresAt: number | undefined
  /** Granted scopes; the requested ones when the provider did not list them. */
  readonly scopes: readonly string[]
  readonly refreshToken?: string
  readonly idToken?: string
  /** The ID token's verified claims. */
  readonly claims?: IdTokenClaims
}

/**
 * What the userinfo endpoint says about the user; unknown fields are kept.
 *
 * @example
 * ```ts
 * const { sub, name, email } = await client.userinfo(tokens)
 * ```
 */
export interface UserInfo {
  readonly sub?: string
  readonly name?: string
  readonly email?: string
  readonly [claim: string]: unknown
}

/**
 * The provider's endpoints and capabilities, discovered or the spec's fixed paths.
 *
 * @example
 * ```ts
 * const { issuer, token_endpoint, discovered } = await client.metadata()
 * ```
 */
export interface ProviderMetadata {
  /** ID tokens must carry exactly this `iss`. */
  readonly issuer: string
  readonly authorization_endpoint: string
  readonly token_endpoint: string
  readonly userinfo_endpoint?: string
  readonly jwks_uri?: string
  readonly scopes_supported?: readonly string[]
  readonly response_types_supported?: readonly string[]
  readonly grant_types_supported?: readonly string[]
  readonly code_challenge_methods_supported?: readonly string[]
  readonly token_endpoint_auth_methods_supported?: readonly string[]
  readonly id_token_signing_alg_values_supported?: readonly string[]
  readonly authorization_response_iss_parameter_supported?: boolean
  readonly pushed_authorization_request_endpoint?: string
  readonly require_pushed_authorization_requests?: boolean
  /** RP-Initiated Logout 1.0: where a browser ends its session at the provider. */
  readonly end_session_endpoint?: string
  /** `true` when these came from a discovery document, `false` for the fixed paths. */
  readonly discovered: boolean
  readonly [field: string]: unknown
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
  readonly clientId: string
  /** The provider's metadata, loaded once (a failure is retried on the next call). */
  metadata(): Promise<ProviderMetadata>
  /** The code flow's authorization request, PKCE S256 always on, pushed first with PAR. */
  authorizationUrl(options?: AuthorizationUrlOptions): Promise<AuthorizationRequest>
  /**
   * Checks the redirect back (`state`, then RFC 9207 `iss`, then `error`), exchanges the
   * code and verifies the ID token (nonce, `auth_time` against `maxAge`, signature).
   */
  handleCallback(params: CallbackParams, checks: CallbackChecks): Promise<TokenSet>
  /** A client-only token; the group service refuses `me/*` for it. */
  clientCredentials(options?: { scope?: string | readonly string[] }): Promise<TokenSet>
  /**
   * Fresh tokens. Given the previous token set, a new ID token must be for the same issuer,
   * subject, audience and authentication (OpenID Connect Core 12.2), and what the answer
   * leaves out (refresh token, scopes, ID token) carries over.
   */
  refresh(tokens: string | TokenSet, options?: RefreshOptions): Promise<TokenSet>
  /** The user's profile; its `sub` must match the token set's ID token or `subject`. */
  userinfo(token: string | TokenSet, options?: { subject?: string }): Promise<UserInfo>
  /** Verifies an ID token's signature and claims; `nonce` is checked when given. */
  verifyIdToken(idToken: string, options?: { nonce?: string; accessToken?: string }): Promise<IdTokenClaims>
  /** An implicit grant request (`response_type=token`), read back with {@link OAuthClient.parseImplicitFragment}. */
  implicitAuthorizationUrl(
    options?: Omit<AuthorizationUrlOptions, 'nonce' | 'maxAge'>,
  ): Promise<{ readonly url: string; readonly state: string }>
  /**
   * {@link parseImplicitFragment} with this client's scopes, clock and issuer. Before the
   * metadata is loaded, a fragment without `iss` is refused: whether one is required is unknown.
   */
  parseImplicitFragment(urlOrFragment: CallbackParams, checks: Pick<ImplicitFragmentChecks, 'state'>): TokenSet
}

/**
 * Endpoints given explicitly; they win over discovered and fixed ones.
 *
 * @example
 * ```ts
 * createOAuthClient({ ...options, endpoints: { userinfo: 'https://auth.example.org/openid/userinfo' } })
 * ```
 */
export interface EndpointOverrides {
  readonly authorization?: string
  readonly token?: string
  readonly userinfo?: string
  /** The provider's public signing keys. */
  readonly jwks?: string
}

/**
 * The parameters of a redirect back: the whole URL, a relative one (`req.originalUrl`), the
 * query or fragment string, `URLSearchParams`, or a parsed query object (`req.query`).
 *
 * @example
 * ```ts
 * const params: CallbackParams = req.originalUrl
 * ```
 */
export type CallbackParams = URLSearchParams | Readonly<Record<string, unknown>> | string

/**
 * What {@link parseImplicitFragment} checks the fragment against.
 *
 * @example
 * ```ts
 * const checks: ImplicitFragmentChecks = { state: sessionStorage.getItem('state') ?? '', issuer: 'https://auth.example.org' }
 * ```
 */
export interface ImplicitFragmentChecks {
  /** The `state` sent. Required. */
  state: string
  /** The scopes asked for, used when the provider does not list the granted ones. Default `[]`. */
  scopes?: readonly string[]
  /** Clock for `expiresAt`, in ms since the epoch. Default `Date.now`. */
  now?: () => number
  /** The provider's issuer (RFC 9207): an `iss` must equal it; without it, no `iss` is accepted. */
  issuer?: string
  /** `true` when the provider always sends `iss` (then one is required). Needs `issuer`. */
  requireIssuer?: boolean
}
