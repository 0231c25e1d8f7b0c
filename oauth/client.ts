/**
 * The OAuth client: openid-client makes the requests and checks the answers; this layer adds
 * what docs/oauth.md lists under "what is ours" (defaults, token sets, secret-free errors).
 *
 * @module
 */
import * as oidc from 'openid-client'
import { InvalidArgumentError } from '../src/index.js'
import { readClientOptions } from './client-options.js'
import { loadMetadata } from './discovery.js'
import { OAuthValidationError } from './errors.js'
import { providerFetch, type EndpointRole } from './fetch.js'
import { createJwksCache, verifyIdToken } from './id-token.js'
import { registerLogoutTokenContext } from './logout-token.js'
import { providerError } from './provider-errors.js'
import { authorizationParams, checkRedirectBack, isCodeVerifier, parseImplicitFragment, readParams } from './redirect.js'
import { completeRefresh, readScopeArgument, refreshGrant, tokenSetFromFields } from './token-set.js'
import type {
  AuthorizationUrlOptions,
  CallbackChecks,
  CallbackParams,
  OAuthClient,
  OAuthClientOptions,
  ProviderMetadata,
  TokenSet,
} from './types.js'

// JWKS: refetched when older than 10 minutes, and for an unknown key id no sooner than 5 s after the last such refetch.
const JWKS_TIMES = { maxAge: 10 * 60_000, cooldown: 5_000 }

/**
 * Creates an OAuth 2.0 / OpenID Connect client.
 *
 * @throws {@link voot-guard!InvalidOptionError} for an invalid or unknown option, naming it.
 *
 * @example
 * ```ts
 * import { createOAuthClient } from 'voot-guard/oauth'
 *
 * const client = createOAuthClient({ authUrl: 'https://auth.dataporten.no', clientId, clientSecret, redirectUri })
 * const { url, ...checks } = await client.authorizationUrl() // GET /login: keep checks in the session
 * const tokens = await client.handleCallback(req.query, checks) // GET /callback
 * ```
 */
export function createOAuthClient(options: OAuthClientOptions): OAuthClient {
  const config = readClientOptions(options)
  const { clientId, clientSecret, redirectUri, defaultScopes, algorithms, clockTolerance, now, dpop, privateKey } = config
  const limits = { timeout: config.timeout, maxResponseBytes: config.maxResponseBytes, dispatcher: config.dispatcher }

  let metadataCache: ProviderMetadata | undefined
  let metadataInflight: Promise<ProviderMetadata> | undefined
  const metadata = (): Promise<ProviderMetadata> => {
    if (metadataCache !== undefined) return Promise.resolve(metadataCache)
    return (metadataInflight ??= loadMetadata(config, providerFetch(limits, 'discovery'))
      .then((loaded) => (metadataCache = loaded))
      .finally(() => (metadataInflight = undefined)))
  }
  const jwksUri = async () =>
    (await metadata()).jwks_uri ?? Promise.reject(new OAuthValidationError('metadata', 'The provider publishes no jwks_uri'))
  const keys = createJwksCache({ fetch: providerFetch(limits, 'jwks'), now, uri: jwksUri, ...JWKS_TIMES })

  const authMethod = (meta: ProviderMetadata) => {
    const listed = meta.token_endpoint_auth_methods_supported ?? []
    if (config.authMethod !== undefined) return config.authMethod
    if (privateKey !== undefined) return 'private_key_jwt'
    if (clientSecret === undefined) return 'none'
    // The spec asks for Basic; a provider that lists only the form gets the form.
    return listed.includes('client_secret_post') && !listed.includes('client_secret_basic') ? 'client_secret_post' : 'client_secret_basic'
  }

  const clientAuthentication = async (meta: ProviderMetadata): Promise<oidc.ClientAuth> => {
    // Client assertions carry `typ: JWT`, the key's own `alg` name (EdDSA, not Ed25519) and this client's clock.
    const assertion = (alg?: string) => ({
      [oidc.modifyAssertion]: (header: Record<string, unknown>, claims: Record<string, unknown>) => {
        const iat = Math.floor(now() / 1000)
        Object.assign(header, { typ: 'JWT' }, alg === undefined ? {} : { alg })
        Object.assign(claims, { iat, nbf: iat, exp: iat + 60 })
      },
    })
    const method = authMethod(meta)
    if (method === 'private_key_jwt' && privateKey !== undefined) {
      const key = { key: await privateKey.cryptoKey(), ...(privateKey.kid === undefined ? {} : { kid: privateKey.kid }) }
      return oidc.PrivateKeyJwt(key, assertion(privateKey.alg))
    }
    if (method === 'client_secret_jwt') return oidc.ClientSecretJwt(clientSecret, assertion())
    if (method === 'none' || method === 'private_key_jwt') return oidc.None()
    return method === 'client_secret_post' ? oidc.ClientSecretPost(clientSecret) : oidc.ClientSecretBasic(clientSecret)
  }

  /** An openid-client configuration for calls to `role`, with this client's clock, fetch and authentication. */
  const configuration = async (role: EndpointRole, sent?: string[]): Promise<oidc.Configuration> => {
    const meta = await metadata()
    const clock = {
      [oidc.clockSkew]: Math.floor(now() / 1000) - Math.floor(Date.now() / 1000),
      [oidc.clockTolerance]: Math.ceil(clockTolerance / 1000),
      ...(algorithms.length === 1 ? { id_token_signed_response_alg: algorithms[0] } : {}),
    }
    const server = { ...meta, id_token_signing_alg_values_supported: [...algorithms] } as unknown as oidc.ServerMetadata
    const result = new oidc.Configuration(server, clientId, clock, await clientAuthentication(meta))
    result[oidc.customFetch] = providerFetch(limits, role, sent)
    result.timeout = Math.ceil(limits.timeout / 1000) + 1 // ours ends every call first
    // Every endpoint passed the HTTPS-except-loopback rule: plain HTTP is loopback.
    // eslint-disable-next-line @typescript-eslint/no-deprecated -- deprecated to stand out, which is the point here
    if (Object.values(meta).some((value) => String(value).startsWith('http:'))) oidc.allowInsecureRequests(result)
    return result
  }

  let dpopHandle: oidc.DPoPHandle | undefined
  /** One call through openid-client, with the DPoP handle (one per client: it remembers the nonces) and errors mapped. */
  const call = async <T>(
    role: EndpointRole,
    secrets: readonly (string | undefined)[],
    run: (cfg: oidc.Configuration, o: object) => Promise<T>,
  ) => {
    const sent: string[] = []
    const cfg = await configuration(role, sent)
    if (dpop !== undefined) dpopHandle ??= oidc.getDPoPHandle(cfg, dpop)
    return run(cfg, dpopHandle === undefined ? {} : { DPoP: dpopHandle }).catch(async (err: unknown) => {
      throw await providerError(err, role, [...secrets, ...sent, clientSecret])
    })
  }

  const grant = async (
    scopes: readonly string[],
    secrets: readonly string[],
    run: (cfg: oidc.Configuration, o: object) => Promise<object>,
  ) => {
    const sentAt = now()
    const fields = (await call('token', secrets, run)) as Record<string, unknown>
    return tokenSetFromFields(fields, { requestedScopes: scopes, sentAt, dpop: dpop !== undefined })
  }

  const idTokenChecks = async (nonce: string | undefined | null, maxAge?: number, accessToken?: string) => {
    const context = { issuer: (await metadata()).issuer, clientId, algorithms, now: now(), clockTolerance, nonce, maxAge, keys }
    return accessToken === undefined ? context : { ...context, accessToken }
  }
  /** Claims and signature of an ID token from the token endpoint (openid-client checks only the claims: TLS vouches for it). */
  const withClaims = async (tokens: TokenSet, nonce: string | undefined | null, maxAge?: number): Promise<TokenSet> => {
    if (tokens.idToken === undefined) return Object.freeze(tokens)
    return Object.freeze({ ...tokens, claims: await verifyIdToken(tokens.idToken, await idTokenChecks(nonce, maxAge, tokens.accessToken)) })
  }

  /** Where to send the user, pushed first (RFC 9126) when PAR is on. */
  const authorizationTarget = async (responseType: 'code' | 'token', opts: AuthorizationUrlOptions) => {
    if (redirectUri === undefined) throw new InvalidArgumentError('authorizationUrl(): the client was created without options.redirectUri')
    const { params, ...checks } = authorizationParams(responseType, { clientId, redirectUri, scopes: defaultScopes }, opts)
    const meta = await metadata()
    const mode = config.pushedAuthorizationRequests
    if (mode === 'never' || (mode === 'auto' && meta.require_pushed_authorization_requests !== true)) {
      return { url: oidc.buildAuthorizationUrl(await configuration('pushed_authorization_request'), params).href, ...checks }
    }
    if (meta.pushed_authorization_request_endpoint === undefined) {
      throw new OAuthValidationError('metadata', 'Pushed authorization requests are on, but the provider has no PAR endpoint', {
        status: 502,
      })
    }
    const url = await call('pushed_authorization_request', [], (cfg, o) => oidc.buildAuthorizationUrlWithPAR(cfg, params, o))
    return { url: url.href, ...checks }
  }

  const client: OAuthClient = Object.freeze({
    clientId,
    metadata,

    authorizationUrl: async (opts: AuthorizationUrlOptions = {}) => Object.freeze(await authorizationTarget('code', opts)),

    async handleCallback(params: CallbackParams, checks: CallbackChecks) {
      const { state, codeVerifier, maxAge } = (typeof checks === 'object' ? checks : null) ?? ({} as Partial<CallbackChecks>)
      if (typeof state !== 'string' || state === '' || typeof codeVerifier !== 'string') {
        throw new OAuthValidationError(
          'state',
          'handleCallback() needs the state and codeVerifier kept from authorizationUrl() (has the session expired?)',
        )
      }
      if (!isCodeVerifier(codeVerifier))
        throw new InvalidArgumentError('handleCallback(): checks.codeVerifier is not a valid PKCE code verifier')
      if (maxAge != null && (typeof maxAge !== 'number' || !Number.isSafeInteger(maxAge) || maxAge < 0)) {
        throw new InvalidArgumentError('handleCallback(): checks.maxAge must be the whole number of seconds sent as max_age')
      }
      if (redirectUri === undefined) throw new InvalidArgumentError('handleCallback(): the client was created without options.redirectUri')
      const fields = readParams(params, 'query')
      const meta = await metadata()
      checkRedirectBack(fields, { state, issuer: meta.issuer, requireIssuer: meta.authorization_response_iss_parameter_supported === true })
      const code = fields.get('code')
      if (code === undefined || code === '')
        throw new OAuthValidationError('response', 'The redirect back carries neither a code nor an error')
      const current = new URL(redirectUri)
      for (const [name, value] of fields) current.searchParams.set(name, value)
      // Anything but a string (a null from a database, say) means "no nonce was sent": never "skip the check".
      const nonce = typeof checks.nonce === 'string' ? checks.nonce : undefined
      const expected = { pkceCodeVerifier: codeVerifier, expectedState: state, ...(nonce === undefined ? {} : { expectedNonce: nonce }) }
      const tokens = await grant(defaultScopes, [code, codeVerifier], (cfg, o) =>
        oidc.authorizationCodeGrant(cfg, current, { ...expected, ...(maxAge == null ? {} : { maxAge }) }, { client_id: clientId }, o),
      )
      return withClaims(tokens, nonce, maxAge ?? undefined)
    },

    async clientCredentials(opts: { scope?: string | readonly string[] } = {}) {
      if (authMethod(await metadata()) === 'none') {
        throw new InvalidArgumentError('clientCredentials(): a confidential client (options.clientSecret or options.privateKey) is needed')
      }
      const scopes = opts.scope === undefined ? [] : readScopeArgument(opts.scope)
      const fields = { client_id: clientId, ...(scopes.length > 0 ? { scope: scopes.join(' ') } : {}) }
      return Object.freeze(await grant(scopes, [], (cfg, o) => oidc.clientCredentialsGrant(cfg, fields, o)))
    },

    async refresh(tokens: string | TokenSet, opts = {}) {
      const { refreshToken, scope, requestedScopes, previous } = refreshGrant(tokens, opts, defaultScopes)
      const fields = { client_id: clientId, ...(scope === undefined ? {} : { scope }) }
      const fresh = await grant(requestedScopes, [refreshToken], (cfg, o) => oidc.refreshTokenGrant(cfg, refreshToken, fields, o))
      // OpenID Connect Core section 12.2: a refreshed ID token may repeat the original nonce.
      return completeRefresh(previous, await withClaims(fresh, null))
    },

    async userinfo(token: string | TokenSet, opts: { subject?: string } = {}) {
      const accessToken = typeof token === 'string' ? token : token.accessToken
      if (typeof accessToken !== 'string' || accessToken === '')
        throw new InvalidArgumentError('userinfo(): give an access token or a token set')
      if ((await metadata()).userinfo_endpoint === undefined)
        throw new OAuthValidationError('metadata', 'The provider publishes no userinfo_endpoint')
      const subject = opts.subject ?? (typeof token === 'string' ? undefined : token.claims?.sub)
      // eslint-disable-next-line @typescript-eslint/no-deprecated -- without an ID token there is no subject to hold it to
      const expected = subject ?? oidc.skipSubjectCheck
      return Object.freeze({ ...(await call('userinfo', [accessToken], (cfg, o) => oidc.fetchUserInfo(cfg, accessToken, expected, o))) })
    },

    async verifyIdToken(idToken: string, opts: { nonce?: string; accessToken?: string } = {}) {
      if (typeof idToken !== 'string' || idToken === '') throw new InvalidArgumentError('verifyIdToken(): idToken must be a string')
      return verifyIdToken(idToken, await idTokenChecks(opts.nonce ?? null, undefined, opts.accessToken))
    },

    async implicitAuthorizationUrl(opts: Omit<AuthorizationUrlOptions, 'nonce' | 'maxAge'> = {}) {
      const { url, state } = await authorizationTarget('token', opts)
      return Object.freeze({ url, state })
    },

    parseImplicitFragment(urlOrFragment: CallbackParams, checks: { state: string }) {
      // RFC 9207 needs the metadata, which a synchronous method cannot fetch: before it is loaded, only an
      // iss equal to the configured issuer passes (up to a trailing slash for an {auth_url}), and none at all is refused.
      const meta = metadataCache
      const iss = meta === undefined ? readParams(urlOrFragment, 'fragment').get('iss') : undefined
      if (meta === undefined && iss === undefined) {
        throw new OAuthValidationError(
          'issuer',
          'The redirect back has no iss, and the provider metadata that says whether one is required is not loaded yet: ' +
            'call implicitAuthorizationUrl() or await client.metadata() first',
        )
      }
      const trim = (value = ''): string => (config.required ? value : value.replace(/\/+$/, ''))
      const issuer = meta?.issuer ?? (iss !== undefined && trim(iss) === trim(config.issuer) ? iss : config.issuer)
      const requireIssuer = meta?.authorization_response_iss_parameter_supported === true
      return parseImplicitFragment(urlOrFragment, { state: checks.state, scopes: defaultScopes, now, issuer, requireIssuer })
    },
  })
  // Logout Tokens are checked against the same provider, keys and clock as ID tokens.
  registerLogoutTokenContext(client, {
    issuer: async () => (await metadata()).issuer,
    clientId,
    algorithms,
    now,
    clockTolerance,
    keys,
  })
  return client
}
