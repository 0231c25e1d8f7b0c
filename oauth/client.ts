/**
 * The OAuth 2.0 / OpenID Connect client: gets a personal access token with the `groups`
 * scope (authorization code flow with PKCE, pushed authorization requests), a client-only
 * token (client credentials), fresh tokens (refresh), the user's profile (userinfo), and
 * verifies ID tokens. Standards-based, so it works with any compliant OpenID Connect
 * provider as well as the group service and its emulator.
 *
 * The public shapes are in `client-types.ts`; each concern has its own module
 * (`authorization-request.ts`, `par.ts`, `client-authentication.ts`, `refresh.ts`, ...).
 *
 * @module
 */
import { InvalidArgumentError } from '../src/errors.js'
import { buildAuthorizationRequest } from './authorization-request.js'
import { createClientAuthentication } from './client-authentication.js'
import { readClientOptions } from './client-options.js'
import type {
  AuthorizationRequest,
  AuthorizationUrlOptions,
  CallbackChecks,
  OAuthClient,
  OAuthClientOptions,
  RefreshOptions,
} from './client-types.js'
import { loadMetadata } from './discovery.js'
import { postToEndpoint } from './endpoint-post.js'
import { OAuthValidationError } from './errors.js'
import { createHttpSend, type HttpSend } from './http.js'
import { verifyIdToken } from './id-token.js'
import { parseImplicitFragment, type ImplicitFragmentChecks } from './implicit.js'
import { createJwksCache } from './jwks.js'
import { readParams, type CallbackParams } from './params.js'
import { pushAuthorizationRequest, usesPushedRequest } from './par.js'
import { isCodeVerifier } from './pkce.js'
import { completeRefresh, refreshGrant } from './refresh.js'
import { readScopeArgument } from './scope.js'
import { errorFromFields, tokenSetFromFields } from './token-response.js'
import type { IdTokenClaims, ProviderMetadata, TokenSet, UserInfo } from './types.js'
import { fetchUserinfo } from './userinfo.js'

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
 * const { url, ...checks } = await client.authorizationUrl()
 * req.session.login = checks // state, nonce, codeVerifier, maxAge
 * res.redirect(url)
 *
 * // GET /callback
 * const tokens = await client.handleCallback(req.query, req.session.login)
 * req.session.accessToken = tokens.accessToken
 * ```
 */
export function createOAuthClient(options: OAuthClientOptions): OAuthClient {
  const config = readClientOptions(options)
  const { clientId, redirectUri, defaultScopes, algorithms, clockTolerance, now } = config
  const { timeout, maxResponseBytes, dispatcher } = config
  const send: HttpSend = createHttpSend({ timeout, maxResponseBytes, dispatcher })

  let metadataCache: ProviderMetadata | undefined
  let metadataInflight: Promise<ProviderMetadata> | undefined
  const metadata = (): Promise<ProviderMetadata> => {
    if (metadataCache !== undefined) return Promise.resolve(metadataCache)
    const target = { issuer: config.issuer, required: config.required, enabled: config.discovery, overrides: config.overrides }
    metadataInflight ??= loadMetadata(target, send)
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

  const auth = createClientAuthentication(
    { clientId, clientSecret: config.clientSecret, privateKey: config.privateKey, method: config.authMethod },
    metadata,
    now,
  )

  /** POSTs a grant to the token endpoint; returns the token set without verified claims. */
  const tokenRequest = async (
    grant: Record<string, string>,
    requestedScopes: readonly string[],
    secrets: readonly (string | undefined)[],
  ): Promise<TokenSet> => {
    const { token_endpoint: url } = await metadata()
    const parts = await auth.parts()
    const sentAt = now()
    const json = await postToEndpoint(send, { role: 'token', url, fields: grant, auth: parts, success: 200, redact: secrets })
    return tokenSetFromFields(json, { requestedScopes, sentAt })
  }

  const idTokenChecks = async (nonce: string | undefined | null, maxAge?: number) => ({
    issuer: (await metadata()).issuer,
    clientId,
    algorithms,
    now: now(),
    clockTolerance,
    nonce,
    maxAge,
    jwks,
  })

  const checkIdToken = async (tokens: TokenSet, nonce: string | undefined | null, maxAge?: number): Promise<TokenSet> => {
    if (tokens.idToken === undefined) return Object.freeze(tokens)
    const claims = await verifyIdToken(tokens.idToken, { ...(await idTokenChecks(nonce, maxAge)), accessToken: tokens.accessToken })
    return Object.freeze({ ...tokens, claims })
  }

  /** The authorization endpoint URL to send the user to, pushed first when PAR is on. */
  const authorizationTarget = async (params: URLSearchParams): Promise<string> => {
    const meta = await metadata()
    if (usesPushedRequest(config.pushedAuthorizationRequests, meta)) {
      return pushAuthorizationRequest(send, meta, params, await auth.parts())
    }
    const url = new URL(meta.authorization_endpoint)
    for (const [name, value] of params) url.searchParams.set(name, value)
    return url.href
  }

  const needRedirectUri = (method: string): string => {
    if (redirectUri === undefined) throw new InvalidArgumentError(`${method}(): the client was created without options.redirectUri`)
    return redirectUri
  }

  return Object.freeze({
    clientId,
    metadata,

    async authorizationUrl(opts: AuthorizationUrlOptions = {}): Promise<AuthorizationRequest> {
      const uri = needRedirectUri('authorizationUrl')
      const built = buildAuthorizationRequest({ responseType: 'code', clientId, redirectUri: uri, defaultScopes, options: opts })
      const url = await authorizationTarget(built.params)
      const { state, nonce, maxAge } = built
      return Object.freeze({ url, state, nonce, codeVerifier: built.codeVerifier as string, maxAge })
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
      const maxAge = readMaxAgeCheck(checks.maxAge)
      const uri = needRedirectUri('handleCallback')
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
      const grant = { grant_type: 'authorization_code', code, redirect_uri: uri, code_verifier: checks.codeVerifier }
      const tokens = await tokenRequest(grant, defaultScopes, [code, checks.codeVerifier])
      if ((nonce !== undefined || maxAge !== undefined) && tokens.idToken === undefined) {
        throw new OAuthValidationError('id_token', 'The token response has no ID token, though a nonce or max_age was sent', { status: 502 })
      }
      return checkIdToken(tokens, nonce, maxAge)
    },

    async clientCredentials(opts: { scope?: string | readonly string[] } = {}): Promise<TokenSet> {
      if ((await auth.method()) === 'none') {
        throw new InvalidArgumentError('clientCredentials(): a confidential client (options.clientSecret or options.privateKey) is needed')
      }
      const scopes = opts.scope === undefined ? [] : readScopeArgument(opts.scope)
      const grant: Record<string, string> = { grant_type: 'client_credentials' }
      if (scopes.length > 0) grant['scope'] = scopes.join(' ')
      return Object.freeze(await tokenRequest(grant, scopes, []))
    },

    async refresh(tokens: string | TokenSet, opts: RefreshOptions = {}): Promise<TokenSet> {
      const grant = refreshGrant(tokens, opts, defaultScopes)
      const fresh = await tokenRequest({ ...grant.fields }, grant.requestedScopes, [grant.refreshToken])
      // OpenID Connect Core section 12.2: a refreshed ID token may repeat the original nonce.
      return completeRefresh(grant.previous, await checkIdToken(fresh, null))
    },

    async userinfo(token: string | TokenSet, opts: { subject?: string } = {}): Promise<UserInfo> {
      return fetchUserinfo(send, metadata, token, opts)
    },

    async verifyIdToken(idToken: string, opts: { nonce?: string; accessToken?: string } = {}): Promise<IdTokenClaims> {
      if (typeof idToken !== 'string' || idToken === '') throw new InvalidArgumentError('verifyIdToken(): idToken must be a string')
      return verifyIdToken(idToken, {
        ...(await idTokenChecks(opts.nonce ?? null)),
        ...(opts.accessToken === undefined ? {} : { accessToken: opts.accessToken }),
      })
    },

    async implicitAuthorizationUrl(opts: Omit<AuthorizationUrlOptions, 'nonce' | 'maxAge'> = {}) {
      const uri = needRedirectUri('implicitAuthorizationUrl')
      const built = buildAuthorizationRequest({ responseType: 'token', clientId, redirectUri: uri, defaultScopes, options: opts })
      return Object.freeze({ url: await authorizationTarget(built.params), state: built.state })
    },

    parseImplicitFragment(urlOrFragment: CallbackParams, checks: Pick<ImplicitFragmentChecks, 'state'>): TokenSet {
      return parseImplicitFragment(urlOrFragment, {
        state: checks?.state,
        scopes: defaultScopes,
        now,
        ...implicitIssuerChecks(metadataCache, config, urlOrFragment),
      })
    },
  })
}

/**
 * The RFC 9207 checks of an implicit redirect. They need the metadata, which a synchronous
 * method cannot fetch: once loaded, its issuer and `authorization_response_iss_parameter_supported`
 * are used; before, only an `iss` equal to the configured issuer passes, and a redirect
 * without one is refused (`check === 'issuer'`) rather than let through unchecked.
 */
function implicitIssuerChecks(
  meta: ProviderMetadata | undefined,
  config: { readonly issuer: string; readonly required: boolean },
  urlOrFragment: CallbackParams,
): Pick<ImplicitFragmentChecks, 'issuer' | 'requireIssuer'> {
  if (meta !== undefined) {
    return { issuer: meta.issuer, requireIssuer: meta.authorization_response_iss_parameter_supported === true }
  }
  const iss = readParams(urlOrFragment, 'fragment').get('iss')
  if (iss === undefined) {
    // Fail closed, as the issuer check it is: whether iss is required cannot be known yet.
    throw new OAuthValidationError(
      'issuer',
      'The redirect back has no iss, and the provider metadata that says whether one is required is not loaded yet: ' +
        'call implicitAuthorizationUrl() or await client.metadata() first',
    )
  }
  // As in discovery: an OpenID Connect issuer matches exactly; a spec {auth_url} up to a trailing slash.
  const trim = (value: string): string => (config.required ? value : value.replace(/\/+$/, ''))
  return { issuer: trim(iss) === trim(config.issuer) ? iss : config.issuer }
}

function readMaxAgeCheck(value: unknown): number | undefined {
  if (value === undefined || value === null) return undefined
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw new InvalidArgumentError('handleCallback(): checks.maxAge must be the whole number of seconds sent as max_age')
  }
  return value
}
