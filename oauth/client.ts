/**
 * The OAuth 2.0 / OpenID Connect client, a thin layer over openid-client: openid-client
 * makes the requests and checks the answers (authorization code with PKCE, pushed
 * authorization requests, client authentication, refresh, client credentials, userinfo,
 * DPoP proofs and nonce retries, ID token claims); this layer adds what VOOT users need
 * (the spec's fixed paths, the `groups` scope, a {@link TokenSet} whose `expiresAt` goes
 * into a guard, errors that never carry a secret, HTTPS except on loopback) and what
 * openid-client does not do: ID token signatures checked against the provider's JWKS
 * (`id-token.ts`), the implicit grant (`implicit.ts`), refresh against the previous ID token.
 *
 * @module
 */
import * as oidc from 'openid-client'
import { InvalidArgumentError } from '../src/errors.js'
import { readClientOptions } from './client-options.js'
import { loadMetadata } from './discovery.js'
import { OAuthValidationError } from './errors.js'
import { providerFetch, type EndpointRole } from './fetch.js'
import { createJwksCache, verifyIdToken } from './id-token.js'
import { providerError } from './provider-errors.js'
import { authorizationParams, checkRedirectBack, isCodeVerifier, parseImplicitFragment, readParams } from './redirect.js'
import type { CallbackParams, ImplicitFragmentChecks } from './redirect.js'
import { completeRefresh, readScopeArgument, refreshGrant, tokenSetFromFields } from './token-set.js'
import type { AuthorizationUrlOptions, CallbackChecks, OAuthClient, OAuthClientOptions, ProviderMetadata, TokenSet } from './types.js'
import type { RefreshOptions, TokenEndpointAuthMethod } from './types.js'

/** Refetch the JWKS at least this often, in ms. */
const JWKS_MAX_AGE = 10 * 60_000
/** Never refetch the JWKS for an unknown key id sooner than this after the last such refetch, in ms. */
const JWKS_COOLDOWN = 5_000

/**
 * Creates an OAuth 2.0 / OpenID Connect client.
 *
 * @throws {@link voot-guard!InvalidOptionError} for invalid or unknown options, including an
 * endpoint that is neither HTTPS nor loopback.
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
  const { clientId, clientSecret, redirectUri, defaultScopes, algorithms, clockTolerance, now, dpop } = config
  const limits = { timeout: config.timeout, maxResponseBytes: config.maxResponseBytes, dispatcher: config.dispatcher }

  let metadataCache: ProviderMetadata | undefined
  let metadataInflight: Promise<ProviderMetadata> | undefined
  const metadata = (): Promise<ProviderMetadata> => {
    if (metadataCache !== undefined) return Promise.resolve(metadataCache)
    const target = { issuer: config.issuer, required: config.required, enabled: config.discovery, overrides: config.overrides }
    metadataInflight ??= loadMetadata(target, providerFetch(limits, 'discovery'))
      .then((loaded) => (metadataCache = loaded))
      .finally(() => {
        metadataInflight = undefined
      })
    return metadataInflight
  }

  const keys = createJwksCache({
    fetch: providerFetch(limits, 'jwks'),
    now,
    maxAge: JWKS_MAX_AGE,
    cooldown: JWKS_COOLDOWN,
    uri: async () => {
      const { jwks_uri: uri } = await metadata()
      if (uri === undefined) throw new OAuthValidationError('metadata', 'The provider publishes no jwks_uri', { status: 502 })
      return uri
    },
  })

  const authMethod = (meta: ProviderMetadata): TokenEndpointAuthMethod => {
    if (config.authMethod !== undefined) return config.authMethod
    if (config.privateKey !== undefined) return 'private_key_jwt'
    if (clientSecret === undefined) return 'none'
    const listed = meta.token_endpoint_auth_methods_supported
    // The spec asks for Basic; a provider that lists only the form gets the form.
    return listed?.includes('client_secret_post') === true && !listed.includes('client_secret_basic')
      ? 'client_secret_post'
      : 'client_secret_basic'
  }

  const clientAuthentication = async (method: TokenEndpointAuthMethod): Promise<oidc.ClientAuth> => {
    const secret = clientSecret ?? ''
    if (method === 'client_secret_basic') return oidc.ClientSecretBasic(secret)
    if (method === 'client_secret_post') return oidc.ClientSecretPost(secret)
    // Client assertions carry `typ: JWT`, the key's own `alg` name (EdDSA rather than Ed25519, say) and this client's clock.
    const header = (alg?: string) => ({
      [oidc.modifyAssertion]: (fields: Record<string, unknown>, claims: Record<string, unknown>) => {
        const iat = Math.floor(now() / 1000)
        Object.assign(fields, { typ: 'JWT' }, alg === undefined ? {} : { alg })
        Object.assign(claims, { iat, nbf: iat, exp: iat + 60 })
      },
    })
    if (method === 'client_secret_jwt') return oidc.ClientSecretJwt(secret, header())
    const signing = config.privateKey
    if (method === 'private_key_jwt' && signing !== undefined) {
      const key = { key: await signing.cryptoKey(), ...(signing.kid === undefined ? {} : { kid: signing.kid }) }
      return oidc.PrivateKeyJwt(key, header(signing.alg))
    }
    return oidc.None()
  }

  /** An openid-client configuration for calls to `role`: this client's metadata, clock, limits and authentication. */
  const configuration = async (role: EndpointRole, sent?: string[]): Promise<oidc.Configuration> => {
    const meta = await metadata()
    const clock = {
      [oidc.clockSkew]: Math.floor(now() / 1000) - Math.floor(Date.now() / 1000),
      [oidc.clockTolerance]: Math.ceil(clockTolerance / 1000),
      ...(algorithms.length === 1 ? { id_token_signed_response_alg: algorithms[0] } : {}),
    }
    const server = { ...meta, id_token_signing_alg_values_supported: [...algorithms] } as unknown as oidc.ServerMetadata
    const result = new oidc.Configuration(server, clientId, clock, await clientAuthentication(authMethod(meta)))
    result[oidc.customFetch] = providerFetch(limits, role, sent)
    // Our own deadline ends every call first; openid-client's is in whole seconds.
    result.timeout = Math.ceil(limits.timeout / 1000) + 1
    // Every endpoint passed the HTTPS-except-loopback rule; plain HTTP is left for loopback.
    if (Object.values(meta).some((value) => typeof value === 'string' && value.startsWith('http:'))) oidc.allowInsecureRequests(result)
    return result
  }

  let dpopHandle: oidc.DPoPHandle | undefined
  /** openid-client's per-call options: the DPoP handle (one per client, so that it remembers the server's nonces). */
  const callOptions = (cfg: oidc.Configuration): { DPoP?: oidc.DPoPHandle } => {
    if (dpop === undefined) return {}
    dpopHandle ??= oidc.getDPoPHandle(cfg, dpop)
    return { DPoP: dpopHandle }
  }

  /** One call to `role` through openid-client, its failures mapped to this package's errors. */
  const call = async <T>(role: EndpointRole, secrets: readonly (string | undefined)[], run: (cfg: oidc.Configuration) => Promise<T>) => {
    const sent: string[] = []
    const cfg = await configuration(role, sent)
    try {
      return await run(cfg)
    } catch (err) {
      throw await providerError(err, role, [...secrets, ...sent, clientSecret])
    }
  }

  const tokenRequest = async (
    requestedScopes: readonly string[],
    secrets: readonly (string | undefined)[],
    grant: (cfg: oidc.Configuration) => Promise<oidc.TokenEndpointResponse>,
  ): Promise<TokenSet> => {
    const sentAt = now()
    const json = await call('token', secrets, grant)
    return tokenSetFromFields(json as unknown as Record<string, unknown>, { requestedScopes, sentAt, dpop: dpop !== undefined })
  }

  const idTokenChecks = async (nonce: string | undefined | null, maxAge?: number) => ({
    issuer: (await metadata()).issuer,
    clientId,
    algorithms,
    now: now(),
    clockTolerance,
    nonce,
    maxAge,
    keys,
  })

  /** The signature of an ID token from the token endpoint, which openid-client leaves unchecked (TLS vouches for it). */
  const checkIdToken = async (tokens: TokenSet, nonce: string | undefined | null, maxAge?: number): Promise<TokenSet> => {
    if (tokens.idToken === undefined) return Object.freeze(tokens)
    const claims = await verifyIdToken(tokens.idToken, { ...(await idTokenChecks(nonce, maxAge)), accessToken: tokens.accessToken })
    return Object.freeze({ ...tokens, claims })
  }

  /** The authorization endpoint URL to send the user to, pushed first (RFC 9126) when PAR is on. */
  const authorizationTarget = async (params: URLSearchParams): Promise<string> => {
    const meta = await metadata()
    const mode = config.pushedAuthorizationRequests
    const pushed = mode === 'always' || (mode === 'auto' && meta.require_pushed_authorization_requests === true)
    if (!pushed) return oidc.buildAuthorizationUrl(await configuration('pushed_authorization_request'), params).href
    if (meta.pushed_authorization_request_endpoint === undefined) {
      throw new OAuthValidationError('metadata', 'Pushed authorization requests are on, but the provider has no PAR endpoint', {
        status: 502,
      })
    }
    const url = await call('pushed_authorization_request', [], (cfg) => oidc.buildAuthorizationUrlWithPAR(cfg, params, callOptions(cfg)))
    return url.href
  }

  const needRedirectUri = (method: string): string => {
    if (redirectUri === undefined) throw new InvalidArgumentError(`${method}(): the client was created without options.redirectUri`)
    return redirectUri
  }

  return Object.freeze({
    clientId,
    metadata,

    async authorizationUrl(opts: AuthorizationUrlOptions = {}) {
      const { params, ...checks } = authorizationParams(
        'code',
        { clientId, redirectUri: needRedirectUri('authorizationUrl'), scopes: defaultScopes },
        opts,
      )
      return Object.freeze({ url: await authorizationTarget(params), ...checks })
    },

    async handleCallback(params: CallbackParams, checks: CallbackChecks) {
      if (
        typeof checks !== 'object' ||
        checks === null ||
        typeof checks.state !== 'string' ||
        checks.state === '' ||
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
      const current = new URL(needRedirectUri('handleCallback'))
      const fields = readParams(params, 'query')
      const meta = await metadata()
      checkRedirectBack(fields, {
        state: checks.state,
        issuer: meta.issuer,
        requireIssuer: meta.authorization_response_iss_parameter_supported === true,
      })
      const code = fields.get('code')
      if (code === undefined || code === '') {
        throw new OAuthValidationError('response', 'The redirect back carries neither a code nor an error')
      }
      for (const [name, value] of fields) current.searchParams.set(name, value)
      // Anything but a string (a null from a database, say) means "no nonce was sent": never "skip the check".
      const nonce = typeof checks.nonce === 'string' ? checks.nonce : undefined
      const expected = {
        pkceCodeVerifier: checks.codeVerifier,
        expectedState: checks.state,
        ...(nonce === undefined ? {} : { expectedNonce: nonce }),
        ...(maxAge === undefined ? {} : { maxAge }),
      }
      const tokens = await tokenRequest(defaultScopes, [code, checks.codeVerifier], (cfg) =>
        oidc.authorizationCodeGrant(cfg, current, expected, { client_id: clientId }, callOptions(cfg)),
      )
      return checkIdToken(tokens, nonce, maxAge)
    },

    async clientCredentials(opts: { scope?: string | readonly string[] } = {}) {
      if (authMethod(await metadata()) === 'none') {
        throw new InvalidArgumentError('clientCredentials(): a confidential client (options.clientSecret or options.privateKey) is needed')
      }
      const scopes = opts.scope === undefined ? [] : readScopeArgument(opts.scope)
      const fields = { client_id: clientId, ...(scopes.length > 0 ? { scope: scopes.join(' ') } : {}) }
      return Object.freeze(await tokenRequest(scopes, [], (cfg) => oidc.clientCredentialsGrant(cfg, fields, callOptions(cfg))))
    },

    async refresh(tokens: string | TokenSet, opts: RefreshOptions = {}) {
      const grant = refreshGrant(tokens, opts, defaultScopes)
      const fields = { client_id: clientId, ...(grant.scope === undefined ? {} : { scope: grant.scope }) }
      const fresh = await tokenRequest(grant.requestedScopes, [grant.refreshToken], (cfg) =>
        oidc.refreshTokenGrant(cfg, grant.refreshToken, fields, callOptions(cfg)),
      )
      // OpenID Connect Core section 12.2: a refreshed ID token may repeat the original nonce.
      return completeRefresh(grant.previous, await checkIdToken(fresh, null))
    },

    async userinfo(token: string | TokenSet, opts: { subject?: string } = {}) {
      const accessToken = typeof token === 'string' ? token : token?.accessToken
      if (typeof accessToken !== 'string' || accessToken === '')
        throw new InvalidArgumentError('userinfo(): give an access token or a token set')
      if ((await metadata()).userinfo_endpoint === undefined) {
        throw new OAuthValidationError('metadata', 'The provider publishes no userinfo_endpoint', { status: 502 })
      }
      const subject = opts.subject ?? (typeof token === 'string' ? undefined : token.claims?.sub)
      const info = await call('userinfo', [accessToken], (cfg) =>
        oidc.fetchUserInfo(cfg, accessToken, subject ?? oidc.skipSubjectCheck, callOptions(cfg)),
      )
      return Object.freeze({ ...info })
    },

    async verifyIdToken(idToken: string, opts: { nonce?: string; accessToken?: string } = {}) {
      if (typeof idToken !== 'string' || idToken === '') throw new InvalidArgumentError('verifyIdToken(): idToken must be a string')
      return verifyIdToken(idToken, {
        ...(await idTokenChecks(opts.nonce ?? null)),
        ...(opts.accessToken === undefined ? {} : { accessToken: opts.accessToken }),
      })
    },

    async implicitAuthorizationUrl(opts: Omit<AuthorizationUrlOptions, 'nonce' | 'maxAge'> = {}) {
      const base = { clientId, redirectUri: needRedirectUri('implicitAuthorizationUrl'), scopes: defaultScopes }
      const { params, state } = authorizationParams('token', base, opts)
      return Object.freeze({ url: await authorizationTarget(params), state })
    },

    parseImplicitFragment(urlOrFragment: CallbackParams, checks: Pick<ImplicitFragmentChecks, 'state'>) {
      return parseImplicitFragment(urlOrFragment, {
        state: checks.state,
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
