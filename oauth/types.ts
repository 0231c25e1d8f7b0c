/**
 * Values the OAuth client hands back: token sets, ID token claims, userinfo, and the
 * provider's metadata.
 *
 * @module
 */

/**
 * The verified claims of an ID token (OpenID Connect Core section 2). Other claims
 * the provider sends (`name`, `email`, ...) are kept.
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
 * The tokens from one successful grant.
 *
 * `expiresAt` is when the access token stops working, by the client's clock and counted
 * from the moment the request was sent (so it errs early). Hand it to the membership
 * resolver so that no cached group answer outlives the token.
 *
 * @example
 * ```ts
 * const tokens = await client.handleCallback(req.query, checks)
 * req.session.accessToken = tokens.accessToken
 * req.session.expiresAt = tokens.expiresAt
 * ```
 */
export interface TokenSet {
  /** The access token: send it as `Authorization: Bearer <accessToken>` (a `DPoP` one only with a proof). */
  readonly accessToken: string
  /** `DPoP` when the provider bound the token to the client's `dpop` key, else `Bearer`; other types are refused. */
  readonly tokenType: 'Bearer' | 'DPoP'
  /** Lifetime in seconds as the provider sent it; `undefined` when it sent none. */
  readonly expiresIn: number | undefined
  /** Expiry in milliseconds since the epoch; `undefined` when the provider sent no lifetime. */
  readonly expiresAt: number | undefined
  /** Granted scopes; the requested ones when the provider did not list them (RFC 6749 section 5.1). */
  readonly scopes: readonly string[]
  /** A refresh token, when the provider issued one. */
  readonly refreshToken?: string
  /** The raw ID token, when the provider issued one (scope `openid`). */
  readonly idToken?: string
  /** The ID token's verified claims. */
  readonly claims?: IdTokenClaims
}

/**
 * What the userinfo endpoint says about the user. OpenID Connect providers always send
 * `sub`; the spec's plain `/userinfo` endpoint may use other shapes, so every field is
 * optional and unknown ones are kept.
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
 * The provider's endpoints and capabilities, from OpenID Connect discovery or, when the
 * provider publishes no discovery document, the spec's fixed paths.
 *
 * @example
 * ```ts
 * const { issuer, token_endpoint, discovered } = await client.metadata()
 * ```
 */
export interface ProviderMetadata {
  /** The issuer identifier; ID tokens must carry exactly this `iss`. */
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
  /** RFC 9126: where authorization requests are pushed. */
  readonly pushed_authorization_request_endpoint?: string
  /** RFC 9126: `true` when the provider accepts only pushed authorization requests. */
  readonly require_pushed_authorization_requests?: boolean
  /** `true` when these values came from a discovery document, `false` for the fixed paths. */
  readonly discovered: boolean
  readonly [field: string]: unknown
}
