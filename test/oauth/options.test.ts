/**
 * The OAuth client's options (checked at creation, with the option's name in the
 * message), the HTTPS-except-loopback rule, authorization URL arguments, and the
 * implicit-flow fragment parser.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { InvalidArgumentError, InvalidOptionError } from '../../src/errors.js'
import {
  createOAuthClient,
  isLoopbackHost,
  OAuthError,
  OAuthValidationError,
  parseImplicitFragment,
  type OAuthClientOptions,
} from '../../oauth/index.js'

const BASE: OAuthClientOptions = {
  authUrl: 'https://auth.example.org',
  clientId: 'my-client',
  clientSecret: 'top-secret-value',
  redirectUri: 'https://app.example.org/callback',
}

// A P-256 private key (made for these tests only).
const EC_KEY = {
  kty: 'EC',
  crv: 'P-256',
  x: 'MKBCTNIcKUSDii11ySs3526iDZ8AiTo7Tu6KPAqv7D4',
  y: '4Etl6SRW2YiLUrN5vfvVHuhp7x8PxltmWWlbbM4IFyM',
  d: '870MB6gfuTJ4HtUnUvYMyJpr5eUZNP4Bk43bVdj3eAE',
}

function creationError(options: Partial<OAuthClientOptions> & Record<string, unknown>): InvalidOptionError {
  try {
    createOAuthClient({ ...BASE, ...options } as OAuthClientOptions)
  } catch (err) {
    expect(err).toBeInstanceOf(InvalidOptionError)
    return err as InvalidOptionError
  }
  throw new Error('expected createOAuthClient to throw')
}

describe('HTTPS is required except on loopback', () => {
  it.each([
    'http://auth.example.org',
    'http://10.0.0.1',
    'http://localhost.example.org',
    'http://127.0.0.1.nip.io',
    'ftp://auth.example.org',
    'file:///etc/passwd',
  ])('refuses authUrl %s at creation', (authUrl) => {
    expect(creationError({ authUrl }).option).toBe('authUrl')
  })

  it.each([
    'https://auth.example.org',
    'http://127.0.0.1:4000',
    'http://127.8.9.10',
    'http://localhost:8080',
    'http://[::1]:3000',
    'HTTP://LOCALHOST',
  ])('accepts %s', (authUrl) => {
    expect(() => createOAuthClient({ ...BASE, authUrl })).not.toThrow()
  })

  it('applies to issuer and to explicit endpoints too', () => {
    expect(creationError({ authUrl: undefined, issuer: 'http://op.example.org' }).option).toBe('issuer')
    expect(creationError({ endpoints: { token: 'http://auth.example.org/token' } }).option).toBe('endpoints.token')
    expect(creationError({ endpoints: { jwks: 'https://auth.example.org/jwks#frag' } }).option).toBe('endpoints.jwks')
  })

  it('knows the loopback names', () => {
    expect(isLoopbackHost('127.0.0.1')).toBe(true)
    expect(isLoopbackHost('127.255.0.9')).toBe(true)
    expect(isLoopbackHost('[::1]')).toBe(true)
    expect(isLoopbackHost('localhost')).toBe(true)
    expect(isLoopbackHost('localhost.')).toBe(true)
    expect(isLoopbackHost('128.0.0.1')).toBe(false)
    expect(isLoopbackHost('localhost.evil.org')).toBe(false)
    expect(isLoopbackHost('[::2]')).toBe(false)
  })

  it('allows a plain-HTTP or custom-scheme redirect URI (the spec allows both), but not one with a fragment', () => {
    expect(() => createOAuthClient({ ...BASE, redirectUri: 'http://dev.example.org/cb' })).not.toThrow()
    expect(() => createOAuthClient({ ...BASE, redirectUri: 'no.example.app:/oauth' })).not.toThrow()
    expect(creationError({ redirectUri: 'https://app.example.org/cb#x' }).option).toBe('redirectUri')
    expect(creationError({ redirectUri: 'https://app.example.org/cb?tenant=a' }).message).toContain('must not contain a query')
    expect(creationError({ redirectUri: '/relative' }).option).toBe('redirectUri')
  })
})

describe('other options', () => {
  it.each([
    ['neither authUrl nor issuer', { authUrl: undefined }, 'authUrl'],
    ['both authUrl and issuer', { issuer: 'https://auth.example.org' }, 'issuer'],
    ['an authUrl with credentials', { authUrl: 'https://u:p@auth.example.org' }, 'authUrl'],
    ['an authUrl with a query', { authUrl: 'https://auth.example.org/?x=1' }, 'authUrl'],
    ['no clientId', { clientId: undefined }, 'clientId'],
    ['a clientId with a control character', { clientId: 'a\nb' }, 'clientId'],
    ['an empty clientSecret', { clientSecret: '' }, 'clientSecret'],
    ['scopes with a space', { scopes: ['openid groups'] }, 'scopes'],
    ['scopes as a string', { scopes: 'openid' }, 'scopes'],
    ['an unknown auth method', { tokenEndpointAuthMethod: 'tls_client_auth' }, 'tokenEndpointAuthMethod'],
    [
      'client_secret_basic without secret',
      { clientSecret: undefined, tokenEndpointAuthMethod: 'client_secret_basic' },
      'tokenEndpointAuthMethod',
    ],
    ['discovery that is not a boolean', { discovery: 'yes' }, 'discovery'],
    ['an unknown endpoint', { endpoints: { introspection: 'https://a.example.org' } }, 'endpoints.introspection'],
    ['HS256 for ID tokens', { idTokenAlgorithms: ['HS256'] }, 'idTokenAlgorithms'],
    ['alg none for ID tokens', { idTokenAlgorithms: ['none'] }, 'idTokenAlgorithms'],
    ['no ID token algorithm', { idTokenAlgorithms: [] }, 'idTokenAlgorithms'],
    ['a zero timeout', { timeout: 0 }, 'timeout'],
    ['a fractional maxResponseBytes', { maxResponseBytes: 1.5 }, 'maxResponseBytes'],
    ['a negative clockTolerance', { clockTolerance: -1 }, 'clockTolerance'],
    ['a dispatcher that is not one', { dispatcher: {} }, 'dispatcher'],
    ['a clock that is not a function', { now: 5 }, 'now'],
    ['private_key_jwt without privateKey', { tokenEndpointAuthMethod: 'private_key_jwt' }, 'privateKey'],
    ['privateKey with client_secret_basic', { tokenEndpointAuthMethod: 'client_secret_basic', privateKey: EC_KEY }, 'privateKey'],
    [
      'client_secret_jwt without secret',
      { clientSecret: undefined, tokenEndpointAuthMethod: 'client_secret_jwt' },
      'tokenEndpointAuthMethod',
    ],
    ['a privateKey that is a string', { privateKey: 'top-secret-value' }, 'privateKey'],
    ['a public key as privateKey', { privateKey: { ...EC_KEY, d: undefined } }, 'privateKey'],
    ['a symmetric key as privateKey', { privateKey: { kty: 'oct', k: 'top-secret-value' } }, 'privateKey'],
    ['a privateKey on an unknown curve', { privateKey: { ...EC_KEY, crv: 'secp256k1' } }, 'privateKey'],
    ['a privateKey whose alg does not fit it', { privateKey: { ...EC_KEY, alg: 'RS256' } }, 'privateKey'],
    ['a privateKey with HS256', { privateKey: { ...EC_KEY, alg: 'HS256' } }, 'privateKey'],
    ['a privateKey with an empty kid', { privateKey: { ...EC_KEY, kid: '' } }, 'privateKey'],
    ['an unknown pushedAuthorizationRequests mode', { pushedAuthorizationRequests: 'sometimes' }, 'pushedAuthorizationRequests'],
  ])('refuses %s, naming the option', (_case, options, option) => {
    const err = creationError(options as Record<string, unknown>)
    expect(err.option).toBe(option)
    expect(err.message).toContain(`options.${option}`)
    expect(err.message).not.toContain('top-secret-value')
    expect(err.message).not.toContain(EC_KEY.d)
  })

  it('refuses an unknown option with a suggestion, as the resolver does', () => {
    expect(creationError({ clientSecrett: 'x' }).message).toBe('options.clientSecrett: is not an option (did you mean clientSecret?)')
    expect(creationError({ dPoP: {} }).message).toContain('(did you mean dpop?)')
    expect(creationError({ grantType: 'implicit' }).message).toBe('options.grantType: is not an option')
  })

  it('keeps openid-client out of the core: nothing in src/ imports it or voot-guard/oauth', () => {
    const sources = readdirSync('src', { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.ts'))
    expect(sources.length).toBeGreaterThan(10)
    for (const file of sources)
      expect(readFileSync(join('src', file), 'utf8')).not.toMatch(/from '(openid-client|oauth4webapi|\.\.\/oauth)/)
  })

  it('accepts a private JWK, and chooses private_key_jwt for it', () => {
    expect(() => createOAuthClient({ ...BASE, clientSecret: undefined, privateKey: EC_KEY })).not.toThrow()
    expect(() => createOAuthClient({ ...BASE, tokenEndpointAuthMethod: 'client_secret_jwt' })).not.toThrow()
    expect(() => createOAuthClient({ ...BASE, pushedAuthorizationRequests: 'never' })).not.toThrow()
  })

  it('needs redirectUri only for the flows that redirect', async () => {
    const client = createOAuthClient({ ...BASE, redirectUri: undefined })
    await expect(client.authorizationUrl()).rejects.toBeInstanceOf(InvalidArgumentError)
    await expect(client.handleCallback('?code=x&state=s', { state: 's', codeVerifier: 'v'.repeat(43) })).rejects.toBeInstanceOf(
      InvalidArgumentError,
    )
  })
})

describe('authorizationUrl arguments', () => {
  const client = createOAuthClient({ ...BASE, discovery: false })

  it("uses the given state, nonce, scope and extra parameters, and keeps the endpoint's own query", async () => {
    const withQuery = createOAuthClient({
      ...BASE,
      discovery: false,
      endpoints: { authorization: 'https://auth.example.org/authorize?tenant=x' },
    })
    const request = await withQuery.authorizationUrl({
      state: 's1',
      nonce: 'n1',
      scope: 'openid groups',
      params: { prompt: 'login', ui_locales: 'nb en' },
    })
    const url = new URL(request.url)
    expect(url.searchParams.get('tenant')).toBe('x')
    expect(url.searchParams.get('state')).toBe('s1')
    expect(url.searchParams.get('nonce')).toBe('n1')
    expect(url.searchParams.get('scope')).toBe('openid groups')
    expect(url.searchParams.get('prompt')).toBe('login')
    expect(url.searchParams.get('ui_locales')).toBe('nb en')
    expect(request).toMatchObject({ state: 's1', nonce: 'n1' })
  })

  it('sends no nonce without openid, and the default scopes are openid and groups', async () => {
    expect((await client.authorizationUrl({ scope: ['groups'] })).nonce).toBeUndefined()
    const request = await client.authorizationUrl()
    expect(new URL(request.url).searchParams.get('scope')).toBe('openid groups')
    expect(request.nonce).toEqual(expect.any(String))
  })

  it("refuses parameters that would override the client's own, and malformed values", async () => {
    await expect(client.authorizationUrl({ params: { code_challenge_method: 'plain' } })).rejects.toThrow(/code_challenge_method/)
    await expect(client.authorizationUrl({ params: { redirect_uri: 'https://evil.example.org' } })).rejects.toThrow(InvalidArgumentError)
    await expect(client.authorizationUrl({ scope: ['a b'] })).rejects.toThrow(InvalidArgumentError)
    await expect(client.authorizationUrl({ state: 'line\nbreak' })).rejects.toThrow(InvalidArgumentError)
    await expect(client.authorizationUrl({ params: { request_uri: 'urn:x' } })).rejects.toThrow(/request_uri/)
  })

  it('sends maxAge as max_age, and returns it; refuses a bad or contradicting one', async () => {
    const request = await client.authorizationUrl({ maxAge: 0 })
    expect(new URL(request.url).searchParams.get('max_age')).toBe('0')
    expect(request.maxAge).toBe(0)
    expect((await client.authorizationUrl({ params: { max_age: '90' } })).maxAge).toBe(90)
    expect((await client.authorizationUrl({ maxAge: 90, params: { max_age: '90' } })).maxAge).toBe(90)
    expect((await client.authorizationUrl()).maxAge).toBeUndefined()
    for (const maxAge of [-1, 1.5, Number.NaN, '60'] as unknown as number[]) {
      await expect(client.authorizationUrl({ maxAge })).rejects.toThrow(/maxAge/)
    }
    await expect(client.authorizationUrl({ params: { max_age: '1h' } })).rejects.toThrow(/max_age/)
    await expect(client.authorizationUrl({ maxAge: 60, params: { max_age: '90' } })).rejects.toThrow(InvalidArgumentError)
  })

  it('refuses a response_mode the flow cannot read, naming response_mode', async () => {
    for (const mode of ['form_post', 'jwt', 'query.jwt', 'fragment.jwt', 'form_post.jwt', 'fragment', 'web_message']) {
      await expect(client.authorizationUrl({ params: { response_mode: mode } })).rejects.toThrow(/response_mode/)
    }
    await expect(client.implicitAuthorizationUrl({ params: { response_mode: 'query' } })).rejects.toThrow(/response_mode/)
    expect(new URL((await client.authorizationUrl({ params: { response_mode: 'query' } })).url).searchParams.get('response_mode')).toBe(
      'query',
    )
    expect((await client.implicitAuthorizationUrl({ params: { response_mode: 'fragment' } })).url).toContain('response_mode=fragment')
  })
})

describe('parseImplicitFragment', () => {
  const NOW = 1_800_000_000_000

  it('reads a whole redirect URL, location.hash or the bare parameters', () => {
    const fragment = 'access_token=tok.en-1&token_type=bearer&expires_in=3600&scope=groups%20profile&state=s1'
    for (const input of [`https://app.example.org/cb#${fragment}`, `#${fragment}`, fragment, new URLSearchParams(fragment)]) {
      expect(parseImplicitFragment(input, { state: 's1', now: () => NOW })).toEqual({
        accessToken: 'tok.en-1',
        tokenType: 'Bearer',
        expiresIn: 3600,
        expiresAt: NOW + 3_600_000,
        scopes: ['groups', 'profile'],
      })
    }
  })

  it('uses the requested scopes when none are listed, and drops an unverified id_token', () => {
    const tokens = parseImplicitFragment('#access_token=t&token_type=Bearer&state=s&id_token=eyJ.eyJ.x', { state: 's', scopes: ['groups'] })
    expect(tokens.scopes).toEqual(['groups'])
    expect(tokens).not.toHaveProperty('idToken')
    expect(tokens.expiresAt).toBeUndefined()
  })

  it('checks the state first, and needs one', () => {
    expect(() => parseImplicitFragment('#access_token=t&token_type=Bearer&state=other', { state: 's' })).toThrow(OAuthValidationError)
    expect(() => parseImplicitFragment('#error=access_denied&state=other', { state: 's' })).toThrow(/state/)
    expect(() => parseImplicitFragment('#access_token=t&token_type=Bearer', { state: '' })).toThrow(OAuthValidationError)
  })

  it('checks iss (RFC 9207) when present, and requires it when told to', () => {
    const fragment = '#access_token=t&token_type=Bearer&state=s'
    const issuer = 'https://op.example.org'
    const iss = (value: string): string => `${fragment}&iss=${encodeURIComponent(value)}`
    expect(parseImplicitFragment(iss(issuer), { state: 's', issuer }).accessToken).toBe('t')
    expect(parseImplicitFragment(fragment, { state: 's', issuer }).accessToken).toBe('t')
    expect(parseImplicitFragment(iss(issuer), { state: 's', issuer, requireIssuer: true }).accessToken).toBe('t')
    for (const [input, checks] of [
      [iss('https://evil.example.org'), { issuer }],
      [iss(`${issuer}/`), { issuer }],
      [fragment, { issuer, requireIssuer: true }],
      // An iss that cannot be checked is not waved through.
      [iss(issuer), {}],
    ] as const) {
      expect(() => parseImplicitFragment(input, { state: 's', ...checks })).toThrow(expect.objectContaining({ check: 'issuer' }))
    }
    // The iss check comes before the error, as with the state: a forged error names the wrong issuer too.
    expect(() => parseImplicitFragment('#error=access_denied&state=s&iss=https%3A%2F%2Fevil.example.org', { state: 's', issuer })).toThrow(
      OAuthValidationError,
    )
    expect(() => parseImplicitFragment(fragment, { state: 's', requireIssuer: true })).toThrow(InvalidArgumentError)
  })

  it('turns an error into an OAuthError', () => {
    try {
      parseImplicitFragment('#error=access_denied&error_description=Nope&state=s', { state: 's' })
      throw new Error('expected a throw')
    } catch (err) {
      expect(err).toBeInstanceOf(OAuthError)
      expect(err).toMatchObject({ error: 'access_denied', errorDescription: 'Nope', code: 'ERR_OAUTH' })
    }
  })

  it('refuses a repeated parameter, a missing token and a foreign token type; never echoes the token', () => {
    expect(() => parseImplicitFragment('#access_token=a&access_token=b&token_type=Bearer&state=s', { state: 's' })).toThrow(
      /more than once/,
    )
    expect(() => parseImplicitFragment('#token_type=Bearer&state=s', { state: 's' })).toThrow(/access_token/)
    let caught: unknown
    try {
      parseImplicitFragment('#access_token=secret-token-value&token_type=mac&state=s', { state: 's' })
    } catch (err) {
      caught = err
    }
    expect(caught).toMatchObject({ check: 'response' })
    expect(String(caught)).not.toContain('secret-token-value')
  })
})
