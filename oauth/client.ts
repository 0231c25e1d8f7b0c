/**
 * The OAuth 2.0 / OpenID Connect client: gets a personal access token with the `groups`
 * scope (authorization code flow with PKCE), a client-only token (client credentials),
 * the user's profile (userinfo), and verifies ID tokens. Standards-based, so it works with
 * any compliant OpenID Connect provider as well as the group service and its emulator.
 *
 * @module
 */
import type { Dispatcher } from 'undici'
import { InvalidArgumentError, InvalidOptionError } from '../src/errors.js'
import { functionOption, integerOption } from '../src/option-checks.js'
import { loadMetadata, type EndpointOverrides } from './discovery.js'
import { endpointProblem } from './endpoint-url.js'
import { OAuthError, OAuthValidationError } from './errors.js'
import { createHttpSend, isJsonObject, parseJson, unexpectedStatus, type HttpSend } from './http.js'
import { verifyIdToken } from './id-token.js'
import { parseImplicitFragment, type ImplicitFragmentChecks } from './implicit.js'
import { createJwksCache } from './jwks.js'
import { readParams, type CallbackParams } from './params.js'
import { codeChallenge, isCodeVerifier, randomValue } from './pkce.js'
import { errorFromFields, tokenSetFromFields } from './token-response.js'
import type { IdTokenClaims, ProviderMetadata, TokenSet, UserInfo } from './types.js'
import { parseBearerChallenge } from './www-authenticate.js'

/**
 * How the client authenticates at the token endpoint (RFC 6749 section 2.3, OIDC Core section 9).
 *
 * @example
 * ```ts
 * createOAuthClient({ ...options, tokenEndpointAuthMethod: 'client_secret_post' })
 * ```
 */
export type TokenEndpointAuthMethod = 'client_secret_basic' | 'client_secret_post' | 'none'

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
  /** The client secret. Leave out for a public client (then `tokenEndpointAuthMethod` is `none`). */
  clientSecret?: string | undefined
  /**
   * The registered redirect URI, needed by the authorization code and implicit flows.
   * Any absolute URI without a fragment: HTTPS in production, HTTP in development, or a
   * custom scheme for a mobile app.
   */
  redirectUri?: string | undefined
  /** Scopes asked for by default. Default `['openid', 'groups']`. */
  scopes?: readonly string[] | undefined
  /**
   * Client authentication at the token endpoint. Default `client_secret_basic` (as the
   * spec asks), or `client_secret_post` when the provider's metadata lists only that, or
   * `none` without a client secret.
   */
  tokenEndpointAuthMethod?: TokenEndpointAuthMethod | undefined
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
  /** Allowed clock skew for ID token `exp`/`iat`, in ms. Default `30000`. */
  clockTolerance?: number | undefined
  /** Clock, in ms since the epoch, for token expiry and ID token checks. Default `Date.now`. */
  now?: (() => number) | undefined
}

/**
 * Options of {@link OAuthClient.authorizationUrl}.
 *
 * @example
 * ```ts
 * await client.authorizationUrl({ scope: ['openid', 'groups'], params: { prompt: 'login' } })
 * ```
 */
export interface AuthorizationUrlOptions {
  /** The `state` to send. Default: a fresh random value. */
  state?: string
  /** The `nonce` to send. Default: a fresh random value when the scope has `openid`, else none. */
  nonce?: string
  /** Scopes to ask for, as a list or a space-separated string. Default: the client's `scopes`. */
  scope?: string | readonly string[]
  /** Further parameters (`prompt`, `login_hint`, `ui_locales`, `max_age`, ...). */
  params?: Readonly<Record<string, string>>
}

/**
 * An authorization request: send the user to `url`; keep `state`, `nonce` and
 * `codeVerifier` in the session for {@link OAuthClient.handleCallback}.
 *
 * @example
 * ```ts
 * const { url, state, nonce, codeVerifier } = await client.authorizationUrl()
 * req.session.login = { state, nonce, codeVerifier }
 * res.redirect(url)
 * ```
 */
export interface AuthorizationRequest {
  /** Where to redirect the user. */
  readonly url: string
  readonly state: string
  /** The nonce sent; `undefined` when none was (scope without `openid`). */
  readonly nonce: string | undefined
  /** The PKCE verifier. Keep it server-side: it is as sensitive as the code. */
  readonly codeVerifier: string
}

/**
 * What the redirect back is checked against: the values {@link OAuthClient.authorizationUrl}
 * returned (pass `nonce` through even when it is `undefined`).
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
   *
   * @throws {@link voot-guard!InvalidArgumentError} without `redirectUri` or with bad arguments.
   */
  authorizationUrl(options?: AuthorizationUrlOptions): Promise<AuthorizationRequest>
  /**
   * Handles the redirect back: checks `state` (and `iss`, RFC 9207), turns an `error` into
   * an {@link OAuthError}, exchanges the code (with the PKCE verifier and client
   * authentication) and verifies the ID token when there is one.
   *
   * @throws {@link OAuthValidationError}, {@link OAuthError}, or {@link voot-guard!UpstreamError}.
   */
  handleCallback(params: CallbackParams, checks: CallbackChecks): Promise<TokenSet>
  /**
   * Gets a client-only token (client credentials grant). The group service refuses `me/*`
   * for such tokens (they represent no user): use them for `groups`, `grouptypes`, ...
   */
  clientCredentials(options?: { scope?: string | readonly string[] }): Promise<TokenSet>
  /** Gets fresh tokens with a refresh token (when the provider issues them). */
  refresh(refreshToken: string, options?: { scope?: string | readonly string[] }): Promise<TokenSet>
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
  implicitAuthorizationUrl(options?: Omit<AuthorizationUrlOptions, 'nonce'>): Promise<{ readonly url: string; readonly state: string }>
  /** {@link parseImplicitFragment} with this client's scopes and clock. */
  parseImplicitFragment(urlOrFragment: CallbackParams, checks: Pick<ImplicitFragmentChecks, 'state'>): TokenSet
}

const ALLOWED_ALGORITHMS = new Set([
  'RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519',
])

// Parameters the client sets itself; `params` must not override them.
const RESERVED_PARAMS = new Set([
  'client_id', 'redirect_uri', 'response_type', 'scope', 'state', 'nonce', 'code_challenge', 'code_challenge_method',
])

// RFC 6749 appendix A.4: scope-token = 1*NQCHAR
const SCOPE_TOKEN = /^[\x21\x23-\x5B\x5D-\x7E]+$/
// RFC 6749 appendix A.1 / A.5: client_id and state are VSCHARs
const VSCHARS = /^[\x20-\x7E]+$/

/** Refetch the JWKS at least this often, in ms. */
const JWKS_MAX_AGE = 10 * 60_000
/** Never refetch the JWKS for an unknown key id sooner than this after the last such refetch, in ms. */
const JWKS_COOLDOWN = 5_000

/**
 * Creates an OAuth 2.0 / OpenID Connect client.
 *
 * @throws {@link voot-guard!InvalidOptionError} for invalid options, including an endpoint that is
 * neither HTTPS nor loopback.
 *
 * @example
 * ```ts
 * import { createOAuthClient } from 'voot-guard/oauth'
 *
 * const client = createOAuthClient({
 *   authUrl: 'https://auth.dataporten.no',
 *   clientId: 'my-app',
 *   clientSecret: process.env.CLIENT_SECRET,
 *   redirectUri: 'https://app.example.org/callback',
 *   scopes: ['openid', 'groups'],
 * })
 *
 * // GET /login
 * const { url, state, nonce, codeVerifier } = await client.authorizationUrl()
 * req.session.login = { state, nonce, codeVerifier }
 * res.redirect(url)
 *
 * // GET /callback
 * const tokens = await client.handleCallback(req.query, req.session.login)
 * req.session.accessToken = tokens.accessToken
 * ```
 */
export function createOAuthClient(options: OAuthClientOptions): OAuthClient {
  if (typeof options !== 'object' || options === null) throw new InvalidOptionError('', 'must be an object')
  const { issuer, required } = readIssuer(options)
  const clientId = readClientId(options.clientId)
  const clientSecret = readSecret(options.clientSecret)
  const redirectUri = readRedirectUri(options.redirectUri)
  const defaultScopes = options.scopes === undefined ? ['openid', 'groups'] : readScopes('scopes', options.scopes)
  const configuredAuthMethod = readAuthMethod(options.tokenEndpointAuthMethod, clientSecret)
  if (options.discovery !== undefined && typeof options.discovery !== 'boolean') {
    throw new InvalidOptionError('discovery', 'must be a boolean')
  }
  const overrides = readOverrides(options.endpoints)
  const algorithms = readAlgorithms(options.idTokenAlgorithms)
  const timeout = integerOption('timeout', options.timeout, 5_000, 1, 600_000)
  const maxResponseBytes = integerOption('maxResponseBytes', options.maxResponseBytes, 1 << 20, 1, 64 << 20)
  const clockTolerance = integerOption('clockTolerance', options.clockTolerance, 30_000, 0, 600_000)
  const now = functionOption('now', options.now, Date.now)
  const dispatcher = readDispatcher(options.dispatcher)

  const send: HttpSend = createHttpSend({ timeout, maxResponseBytes, dispatcher })

  let metadataCache: ProviderMetadata | undefined
  let metadataInflight: Promise<ProviderMetadata> | undefined
  const metadata = (): Promise<ProviderMetadata> => {
    if (metadataCache !== undefined) return Promise.resolve(metadataCache)
    metadataInflight ??= loadMetadata({ issuer, required, enabled: options.discovery !== false, overrides }, send)
      .then((loaded) => (metadataCache = loaded))
      .finally(() => {
        metadataInflight = undefined
      })
    return metadataInflight
  }

  const jwks = createJwksCache({
    send,
    now,
    maxAge: JWKS_MAX_AGE,
    cooldown: JWKS_COOLDOWN,
    uri: async () => {
      const { jwks_uri: uri } = await metadata()
      if (uri === undefined) throw new OAuthValidationError('metadata', 'The provider publishes no jwks_uri', { status: 502 })
      return uri
    },
  })

  const authMethod = async (): Promise<TokenEndpointAuthMethod> => {
    if (configuredAuthMethod !== undefined) return configuredAuthMethod
    if (clientSecret === undefined) return 'none'
    const supported = (await metadata()).token_endpoint_auth_methods_supported
    if (supported !== undefined && !supported.includes('client_secret_basic') && supported.includes('client_secret_post')) {
      return 'client_secret_post'
    }
    return 'client_secret_basic'
  }

  /** POSTs a grant to the token endpoint; returns the token set without verified claims. */
  const tokenRequest = async (
    grant: Record<string, string>,
    requestedScopes: readonly string[],
    secrets: readonly (string | undefined)[],
  ): Promise<TokenSet> => {
    const { token_endpoint: endpoint } = await metadata()
    const method = await authMethod()
    const body = new URLSearchParams(grant)
    // The spec lists client_id among the form fields even with HTTP Basic; RFC 6749 allows it.
    body.set('client_id', clientId)
    const headers: Record<string, string> = {
      'content-type': 'application/x-www-form-urlencoded',
      accept: 'application/json',
    }
    if (method === 'client_secret_basic' && clientSecret !== undefined) {
      // RFC 6749 section 2.3.1: both parts form-urlencoded before Base64.
      headers['authorization'] = `Basic ${Buffer.from(`${formEncode(clientId)}:${formEncode(clientSecret)}`).toString('base64')}`
    } else if (method === 'client_secret_post' && clientSecret !== undefined) {
      body.set('client_secret', clientSecret)
    }
    const sentAt = now()
    const res = await send({ role: 'token', method: 'POST', url: endpoint, headers, body: body.toString() })
    const redact = [...secrets, clientSecret]
    const json = parseJson(res.body)
    if (res.status === 200) {
      if (!isJsonObject(json)) {
        throw new OAuthValidationError('response', 'The token endpoint answered with a body that is not a JSON object', { status: 502 })
      }
      const error = errorFromFields(json, { responseStatus: 200, redact })
      if (error !== undefined) throw error
      return tokenSetFromFields(json, { requestedScopes, sentAt })
    }
    if (res.status >= 400 && res.status < 500 && res.status !== 429 && isJsonObject(json)) {
      const error = errorFromFields(json, { responseStatus: res.status, redact })
      if (error !== undefined) throw error
    }
    throw unexpectedStatus('token', res.status)
  }

  const checkIdToken = async (
    tokens: TokenSet,
    nonce: string | undefined | null,
  ): Promise<TokenSet> => {
    if (tokens.idToken === undefined) return Object.freeze(tokens)
    const claims = await verifyIdToken(tokens.idToken, {
      issuer: (await metadata()).issuer,
      clientId,
      algorithms,
      now: now(),
      clockTolerance,
      nonce,
      accessToken: tokens.accessToken,
      jwks,
    })
    return Object.freeze({ ...tokens, claims })
  }

  const buildUrl = async (
    responseType: 'code' | 'token',
    opts: AuthorizationUrlOptions,
  ): Promise<{ url: URL; state: string; scopes: readonly string[] }> => {
    if (redirectUri === undefined) {
      throw new InvalidArgumentError('authorizationUrl(): the client was created without options.redirectUri')
    }
    if (typeof opts !== 'object' || opts === null) throw new InvalidArgumentError('authorizationUrl(): options must be an object')
    const scopes = opts.scope === undefined ? defaultScopes : readScopeArgument(opts.scope)
    const state = opts.state === undefined ? randomValue() : readVschars('state', opts.state)
    const url = new URL((await metadata()).authorization_endpoint)
    const set = (name: string, value: string): void => url.searchParams.set(name, value)
    set('response_type', responseType)
    set('client_id', clientId)
    set('redirect_uri', redirectUri)
    if (scopes.length > 0) set('scope', scopes.join(' '))
    set('state', state)
    for (const [name, value] of Object.entries(opts.params ?? {})) {
      if (RESERVED_PARAMS.has(name)) throw new InvalidArgumentError(`authorizationUrl(): params.${name} is set by the client itself`)
      if (typeof value !== 'string') throw new InvalidArgumentError(`authorizationUrl(): params.${name} must be a string`)
      set(name, value)
    }
    return { url, state, scopes }
  }

  return Object.freeze({
    clientId,
    metadata,

    async authorizationUrl(opts: AuthorizationUrlOptions = {}): Promise<AuthorizationRequest> {
      const { url, state, scopes } = await buildUrl('code', opts)
      const nonce =
        opts.nonce !== undefined ? readVschars('nonce', opts.nonce) : scopes.includes('openid') ? randomValue() : undefined
      const codeVerifier = randomValue()
      url.searchParams.set('code_challenge', codeChallenge(codeVerifier))
      url.searchParams.set('code_challenge_method', 'S256')
      if (nonce !== undefined) url.searchParams.set('nonce', nonce)
      return Object.freeze({ url: url.href, state, nonce, codeVerifier })
    },

    async handleCallback(params: CallbackParams, checks: CallbackChecks): Promise<TokenSet> {
      if (
        typeof checks !== 'object' || checks === null ||
        typeof checks.state !== 'string' || checks.state === '' ||
        typeof checks.codeVerifier !== 'string'
      ) {
        throw new OAuthValidationError(
          'state',
          'handleCallback() needs the state and codeVerifier kept from authorizationUrl() (has the session expired?)',
        )
      }
      if (!isCodeVerifier(checks.codeVerifier)) {
        throw new InvalidArgumentError('handleCallback(): checks.codeVerifier is not a valid PKCE code verifier')
      }
      if (redirectUri === undefined) {
        throw new InvalidArgumentError('handleCallback(): the client was created without options.redirectUri')
      }
      const fields = readParams(params, 'query')
      if (fields.get('state') !== checks.state) {
        throw new OAuthValidationError('state', 'The state of the redirect back does not match the one sent')
      }
      const meta = await metadata()
      const iss = fields.get('iss')
      // RFC 9207: the iss parameter tells which provider sent the user back (mix-up attacks).
      if (iss !== undefined ? iss !== meta.issuer : meta.authorization_response_iss_parameter_supported === true) {
        throw new OAuthValidationError('issuer', 'The iss of the redirect back is missing or names another issuer')
      }
      const error = errorFromFields(Object.fromEntries(fields))
      if (error !== undefined) throw error
      const code = fields.get('code')
      if (code === undefined || code === '') {
        throw new OAuthValidationError('response', 'The redirect back carries neither a code nor an error')
      }
      // Anything but a string (a null from a database, say) means "no nonce was sent": never "skip the check".
      const nonce = typeof checks.nonce === 'string' ? checks.nonce : undefined
      const grant = { grant_type: 'authorization_code', code, redirect_uri: redirectUri, code_verifier: checks.codeVerifier }
      const tokens = await tokenRequest(grant, defaultScopes, [code, checks.codeVerifier])
      if (nonce !== undefined && tokens.idToken === undefined) {
        throw new OAuthValidationError('id_token', 'The token response has no ID token, though a nonce was sent (scope openid)', { status: 502 })
      }
      return checkIdToken(tokens, nonce)
    },

    async clientCredentials(opts: { scope?: string | readonly string[] } = {}): Promise<TokenSet> {
      if ((await authMethod()) === 'none' || clientSecret === undefined) {
        throw new InvalidArgumentError('clientCredentials(): a confidential client (options.clientSecret) is needed')
      }
      const scopes = opts.scope === undefined ? [] : readScopeArgument(opts.scope)
      const grant: Record<string, string> = { grant_type: 'client_credentials' }
      if (scopes.length > 0) grant['scope'] = scopes.join(' ')
      return Object.freeze(await tokenRequest(grant, scopes, []))
    },

    async refresh(refreshToken: string, opts: { scope?: string | readonly string[] } = {}): Promise<TokenSet> {
      if (typeof refreshToken !== 'string' || refreshToken === '') {
        throw new InvalidArgumentError('refresh(): refreshToken must be a non-empty string')
      }
      const scopes = opts.scope === undefined ? undefined : readScopeArgument(opts.scope)
      const grant: Record<string, string> = { grant_type: 'refresh_token', refresh_token: refreshToken }
      if (scopes !== undefined && scopes.length > 0) grant['scope'] = scopes.join(' ')
      const tokens = await tokenRequest(grant, scopes ?? defaultScopes, [refreshToken])
      // OpenID Connect Core section 12.2: a refreshed ID token may repeat the original nonce.
      return checkIdToken(tokens, null)
    },

    async userinfo(token: string | TokenSet, opts: { subject?: string } = {}): Promise<UserInfo> {
      const accessToken = typeof token === 'string' ? token : token?.accessToken
      if (typeof accessToken !== 'string' || accessToken === '') {
        throw new InvalidArgumentError('userinfo(): the access token must be a non-empty string')
      }
      const subject = opts.subject ?? (typeof token === 'string' ? undefined : token.claims?.sub)
      const { userinfo_endpoint: endpoint } = await metadata()
      if (endpoint === undefined) {
        throw new OAuthValidationError('metadata', 'The provider publishes no userinfo_endpoint', { status: 502 })
      }
      const res = await send({
        role: 'userinfo',
        method: 'GET',
        url: endpoint,
        headers: { authorization: `Bearer ${accessToken}`, accept: 'application/json' },
      })
      if (res.status === 401 || res.status === 403) throw userinfoError(res.status, res.headers['www-authenticate'], res.body, accessToken)
      if (res.status !== 200) throw unexpectedStatus('userinfo', res.status)
      const type = String(res.headers['content-type'] ?? '').toLowerCase()
      if (type.startsWith('application/jwt')) {
        throw new OAuthValidationError('response', 'Signed or encrypted userinfo responses are not supported', { status: 502 })
      }
      const info = parseJson(res.body)
      if (!isJsonObject(info)) {
        throw new OAuthValidationError('response', 'The userinfo endpoint answered with a body that is not a JSON object', { status: 502 })
      }
      if (subject !== undefined && info['sub'] !== subject) {
        throw new OAuthValidationError('subject', 'The userinfo sub differs from the ID token\'s', { status: 502 })
      }
      return Object.freeze(info) as UserInfo
    },

    async verifyIdToken(idToken: string, opts: { nonce?: string; accessToken?: string } = {}): Promise<IdTokenClaims> {
      if (typeof idToken !== 'string' || idToken === '') throw new InvalidArgumentError('verifyIdToken(): idToken must be a string')
      return verifyIdToken(idToken, {
        issuer: (await metadata()).issuer,
        clientId,
        algorithms,
        now: now(),
        clockTolerance,
        nonce: opts.nonce ?? null,
        ...(opts.accessToken === undefined ? {} : { accessToken: opts.accessToken }),
        jwks,
      })
    },

    async implicitAuthorizationUrl(opts: Omit<AuthorizationUrlOptions, 'nonce'> = {}) {
      const { url, state } = await buildUrl('token', opts)
      return Object.freeze({ url: url.href, state })
    },

    parseImplicitFragment(urlOrFragment: CallbackParams, checks: Pick<ImplicitFragmentChecks, 'state'>): TokenSet {
      return parseImplicitFragment(urlOrFragment, { state: checks?.state, scopes: defaultScopes, now })
    },
  })
}

function userinfoError(status: number, header: string | string[] | undefined, body: string, accessToken: string): OAuthError {
  const challenge = parseBearerChallenge(header)
  const json = parseJson(body)
  const fields: Record<string, unknown> = { ...(isJsonObject(json) ? json : {}), ...challenge }
  if (typeof fields['error'] !== 'string') fields['error'] = status === 401 ? 'invalid_token' : 'insufficient_scope'
  const error = errorFromFields(fields, { responseStatus: status, redact: [accessToken] })
  return new OAuthError(error?.error ?? 'invalid_token', {
    status,
    responseStatus: status,
    ...(error?.errorDescription === undefined ? {} : { errorDescription: error.errorDescription }),
    ...(error?.errorUri === undefined ? {} : { errorUri: error.errorUri }),
  })
}

/** application/x-www-form-urlencoded encoding of one value (RFC 6749 appendix B). */
function formEncode(value: string): string {
  return encodeURIComponent(value).replace(/%20/g, '+')
}

function readIssuer(options: OAuthClientOptions): { issuer: string; required: boolean } {
  const { authUrl, issuer } = options
  if ((authUrl === undefined) === (issuer === undefined)) {
    throw new InvalidOptionError(authUrl === undefined ? 'authUrl' : 'issuer', 'give exactly one of authUrl and issuer')
  }
  const name = issuer === undefined ? 'authUrl' : 'issuer'
  const value = issuer ?? authUrl
  const problem = endpointProblem(value)
  if (problem !== undefined) throw new InvalidOptionError(name, problem)
  if (new URL(value as string).search !== '') throw new InvalidOptionError(name, 'must not contain a query')
  return { issuer: value as string, required: issuer !== undefined }
}

function readClientId(value: unknown): string {
  if (typeof value !== 'string' || !VSCHARS.test(value)) {
    throw new InvalidOptionError('clientId', 'must be a non-empty string of printable ASCII characters')
  }
  return value
}

function readSecret(value: unknown): string | undefined {
  if (value === undefined) return undefined
  // Never describe the value: it is a secret.
  if (typeof value !== 'string' || value === '') throw new InvalidOptionError('clientSecret', 'must be a non-empty string')
  return value
}

function readRedirectUri(value: unknown): string | undefined {
  if (value === undefined) return undefined
  if (typeof value !== 'string') throw new InvalidOptionError('redirectUri', 'must be a URL string')
  let url: URL
  try {
    url = new URL(value)
  } catch {
    throw new InvalidOptionError('redirectUri', 'must be an absolute URI')
  }
  // RFC 6749 section 3.1.2: absolute, without a fragment.
  if (url.hash !== '' || value.includes('#')) throw new InvalidOptionError('redirectUri', 'must not contain a fragment')
  return value
}

function readScopes(name: string, value: unknown): readonly string[] {
  if (!Array.isArray(value) || !value.every((s) => typeof s === 'string' && SCOPE_TOKEN.test(s))) {
    throw new InvalidOptionError(name, 'must be an array of scope tokens (no spaces, quotes or backslashes)')
  }
  return Object.freeze([...new Set(value as string[])])
}

function readScopeArgument(value: unknown): readonly string[] {
  const list = typeof value === 'string' ? value.split(' ').filter((s) => s !== '') : value
  if (!Array.isArray(list) || !list.every((s) => typeof s === 'string' && SCOPE_TOKEN.test(s))) {
    throw new InvalidArgumentError('scope must be a list of scope tokens or a space-separated string of them')
  }
  return Object.freeze([...new Set(list as string[])])
}

function readVschars(name: string, value: unknown): string {
  if (typeof value !== 'string' || !VSCHARS.test(value) || value.length > 512) {
    throw new InvalidArgumentError(`${name} must be 1 to 512 printable ASCII characters`)
  }
  return value
}

function readAuthMethod(value: unknown, secret: string | undefined): TokenEndpointAuthMethod | undefined {
  if (value === undefined) return undefined
  if (value !== 'client_secret_basic' && value !== 'client_secret_post' && value !== 'none') {
    throw new InvalidOptionError('tokenEndpointAuthMethod', 'must be client_secret_basic, client_secret_post or none')
  }
  if (value !== 'none' && secret === undefined) {
    throw new InvalidOptionError('tokenEndpointAuthMethod', `${value} needs options.clientSecret`)
  }
  return value
}

function readOverrides(value: unknown): EndpointOverrides {
  if (value === undefined) return {}
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new InvalidOptionError('endpoints', 'must be an object')
  }
  const overrides: Record<string, string> = {}
  for (const [name, url] of Object.entries(value)) {
    if (!['authorization', 'token', 'userinfo', 'jwks'].includes(name)) {
      throw new InvalidOptionError(`endpoints.${name}`, 'is not a known endpoint (authorization, token, userinfo, jwks)')
    }
    if (url === undefined) continue
    const problem = endpointProblem(url)
    if (problem !== undefined) throw new InvalidOptionError(`endpoints.${name}`, problem)
    overrides[name] = url as string
  }
  return overrides
}

function readAlgorithms(value: unknown): readonly string[] {
  if (value === undefined) return ['RS256']
  if (!Array.isArray(value) || value.length === 0 || !value.every((alg) => ALLOWED_ALGORITHMS.has(alg as string))) {
    throw new InvalidOptionError('idTokenAlgorithms', `must be a non-empty list of ${[...ALLOWED_ALGORITHMS].join(', ')}`)
  }
  return Object.freeze([...(value as string[])])
}

function readDispatcher(value: unknown): Dispatcher | undefined {
  if (value === undefined) return undefined
  if (typeof value !== 'object' || value === null || typeof (value as { dispatch?: unknown }).dispatch !== 'function') {
    throw new InvalidOptionError('dispatcher', 'must be an undici Dispatcher')
  }
  return value as Dispatcher
}
