/**
 * The OAuth client against odd provider answers, served by an undici MockAgent (no
 * network): discovery problems, client authentication on the wire, token endpoint
 * errors and malformed answers, transport limits, callback checks (RFC 9207 `iss`,
 * repeated parameters), ID token checks on hand-made tokens, JWKS refetching, userinfo;
 * and the failures of the newer features: RFC 9207 on the implicit redirect, refresh
 * against the previous token set, max_age, pushed authorization requests, and JWT client
 * assertions as they go over the wire.
 */
import { inspect } from 'node:util'
import { decodeProtectedHeader, exportJWK, generateKeyPair, jwtVerify, SignJWT, type CryptoKey, type JWK, type JWTPayload } from 'jose'
import { MockAgent } from 'undici'
import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import { InvalidArgumentError, InvalidOptionError, UpstreamError } from '../../src/errors.js'
import { createOAuthClient, OAuthError, OAuthValidationError, type OAuthClient, type OAuthClientOptions } from '../../oauth/index.js'

const ISSUER = 'https://op.example.org'
const JSON_HEADERS = { 'content-type': 'application/json' }
const NOW = Date.parse('2026-11-21T12:00:00Z')
const SECONDS = Math.floor(NOW / 1000)
const REDIRECT = 'https://app.example.org/callback'
const SECRET = 'client-secret-value-0123456789'
const VERIFIER = 'v'.repeat(43)

interface Captured {
  headers: Record<string, string>
  body: URLSearchParams
}

let agent: MockAgent
let rsa: { privateKey: CryptoKey; jwk: JWK }

beforeAll(async () => {
  const { privateKey, publicKey } = await generateKeyPair('RS256')
  rsa = { privateKey, jwk: { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' } }
})

afterEach(async () => {
  await agent?.close()
})

function discoveryDoc(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    issuer: ISSUER,
    authorization_endpoint: `${ISSUER}/authorize`,
    token_endpoint: `${ISSUER}/token`,
    userinfo_endpoint: `${ISSUER}/userinfo`,
    jwks_uri: `${ISSUER}/jwks`,
    ...overrides,
  }
}

/** A MockAgent that serves `doc` as the discovery document (persistently). */
function provider(doc: Record<string, unknown> | null = discoveryDoc()) {
  agent = new MockAgent()
  agent.disableNetConnect()
  const pool = agent.get(ISSUER)
  if (doc !== null)
    pool.intercept({ path: '/.well-known/openid-configuration', method: 'GET' }).reply(200, doc, { headers: JSON_HEADERS }).persist()
  return pool
}

function client(overrides: Partial<OAuthClientOptions> = {}): OAuthClient {
  return createOAuthClient({
    issuer: ISSUER,
    clientId: 'my-client',
    clientSecret: SECRET,
    redirectUri: REDIRECT,
    scopes: ['openid', 'groups'],
    dispatcher: agent,
    now: () => NOW,
    ...overrides,
  })
}

/** Intercepts one token request, records it, and answers `status` with `body`. */
function tokenEndpoint(
  pool: ReturnType<MockAgent['get']>,
  status: number,
  body: unknown,
  headers: Record<string, string> = JSON_HEADERS,
): Captured {
  const captured: Captured = { headers: {}, body: new URLSearchParams() }
  pool.intercept({ path: '/token', method: 'POST' }).reply((request) => {
    captured.headers = Object.fromEntries(Object.entries(request.headers as Record<string, string>).map(([k, v]) => [k.toLowerCase(), v]))
    captured.body = new URLSearchParams(String(request.body))
    return { statusCode: status, data: typeof body === 'string' ? body : JSON.stringify(body), responseOptions: { headers } }
  })
  return captured
}

function jwks(pool: ReturnType<MockAgent['get']>, keys: JWK[] = [rsa.jwk]) {
  return pool.intercept({ path: '/jwks', method: 'GET' }).reply(200, { keys }, { headers: JSON_HEADERS })
}

function idToken(claims: JWTPayload = {}, header: Record<string, unknown> = {}): Promise<string> {
  return new SignJWT({ iss: ISSUER, sub: 'alice', aud: 'my-client', iat: SECONDS, exp: SECONDS + 300, ...claims })
    .setProtectedHeader({ alg: 'RS256', kid: 'k1', ...header })
    .sign(rsa.privateKey)
}

function callback(params: Record<string, string> = {}): string {
  return `${REDIRECT}?${new URLSearchParams({ code: 'the-authorization-code-123', state: 'st', ...params })}`
}

const CHECKS = { state: 'st', codeVerifier: VERIFIER }

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise
  } catch (err) {
    return err
  }
  throw new Error('expected a rejection')
}

function expectNoSecrets(err: unknown, secrets: readonly string[]): void {
  const texts = [String(err), JSON.stringify(err), (err as Error).stack ?? '', inspect(err, { depth: 10, showHidden: true })]
  for (const secret of secrets) for (const text of texts) expect(text).not.toContain(secret)
}

describe('discovery', () => {
  it('refuses a document for another issuer', async () => {
    provider(discoveryDoc({ issuer: 'https://evil.example.org' }))
    const err = await rejection(client().metadata())
    expect(err).toBeInstanceOf(OAuthValidationError)
    expect(err).toMatchObject({ check: 'issuer', code: 'ERR_OAUTH' })
  })

  it('refuses an issuer that differs only by a trailing slash (issuer mode is exact)', async () => {
    provider(discoveryDoc({ issuer: `${ISSUER}/` }))
    expect(await rejection(client().metadata())).toMatchObject({ check: 'issuer' })
  })

  it.each([
    ['a plain-HTTP token endpoint', { token_endpoint: 'http://op.example.org/token' }, 'token_endpoint'],
    ['a plain-HTTP JWKS', { jwks_uri: 'http://op.example.org/jwks' }, 'jwks_uri'],
    ['an authorization endpoint with a fragment', { authorization_endpoint: `${ISSUER}/authorize#x` }, 'authorization_endpoint'],
    ['no token endpoint', { token_endpoint: undefined }, 'token_endpoint'],
    ['a userinfo endpoint that is not a URL', { userinfo_endpoint: 42 }, 'userinfo_endpoint'],
  ])('refuses %s with a typed error', async (_case, overrides, field) => {
    provider(discoveryDoc(overrides))
    const err = await rejection(client().metadata())
    expect(err).toBeInstanceOf(OAuthValidationError)
    expect(err).toMatchObject({ check: 'endpoint', message: expect.stringContaining(field) })
  })

  it('allows plain HTTP on loopback for discovered endpoints', async () => {
    agent = new MockAgent()
    agent.disableNetConnect()
    const local = 'http://127.0.0.1:4000'
    agent
      .get(local)
      .intercept({ path: '/.well-known/openid-configuration', method: 'GET' })
      .reply(
        200,
        { issuer: local, authorization_endpoint: `${local}/a`, token_endpoint: `http://localhost:4000/t` },
        { headers: JSON_HEADERS },
      )
    const metadata = await client({ issuer: local }).metadata()
    expect(metadata.token_endpoint).toBe('http://localhost:4000/t')
  })

  it("falls back to the spec's fixed paths when authUrl has no discovery document", async () => {
    const pool = provider(null)
    pool.intercept({ path: '/.well-known/openid-configuration', method: 'GET' }).reply(404, { message: 'Requested resource was not found' })
    const metadata = await client({ issuer: undefined, authUrl: `${ISSUER}/` }).metadata()
    expect(metadata).toMatchObject({ discovered: false, issuer: ISSUER, token_endpoint: `${ISSUER}/oauth/token` })
  })

  it('requires the document for an OpenID Connect issuer', async () => {
    const pool = provider(null)
    pool.intercept({ path: '/.well-known/openid-configuration', method: 'GET' }).reply(404, '')
    const err = await rejection(client().metadata())
    expect(err).toBeInstanceOf(UpstreamError)
    expect(err).toMatchObject({ code: 'ERR_UPSTREAM_STATUS', upstreamStatus: 404, endpoint: 'discovery' })
  })

  it('does not cache a failure: the next call discovers again', async () => {
    const pool = provider(null)
    pool.intercept({ path: '/.well-known/openid-configuration', method: 'GET' }).reply(503, '')
    pool.intercept({ path: '/.well-known/openid-configuration', method: 'GET' }).reply(200, discoveryDoc(), { headers: JSON_HEADERS })
    const c = client()
    expect(await rejection(c.metadata())).toMatchObject({ code: 'ERR_UPSTREAM_STATUS', upstreamStatus: 503 })
    expect((await c.metadata()).token_endpoint).toBe(`${ISSUER}/token`)
  })

  it('never follows a redirect', async () => {
    const pool = provider(null)
    pool
      .intercept({ path: '/.well-known/openid-configuration', method: 'GET' })
      .reply(302, '', { headers: { location: 'https://evil.example.org/doc' } })
    const err = await rejection(client().metadata())
    expect(err).toMatchObject({ code: 'ERR_UPSTREAM_REDIRECT', upstreamStatus: 302 })
  })

  it('refuses a document that is not a JSON object', async () => {
    const pool = provider(null)
    pool
      .intercept({ path: '/.well-known/openid-configuration', method: 'GET' })
      .reply(200, '<html>', { headers: { 'content-type': 'text/html' } })
    expect(await rejection(client().metadata())).toMatchObject({ check: 'metadata' })
  })

  it('lets explicit endpoints win over discovered ones', async () => {
    provider()
    const metadata = await client({ endpoints: { userinfo: `${ISSUER}/other-userinfo` } }).metadata()
    expect(metadata.userinfo_endpoint).toBe(`${ISSUER}/other-userinfo`)
  })
})

describe('token requests on the wire', () => {
  it("sends the spec's form fields with HTTP Basic; both parts form-urlencoded (RFC 6749 section 2.3.1)", async () => {
    const pool = provider()
    const captured = tokenEndpoint(pool, 200, { access_token: 'at-1', token_type: 'Bearer', expires_in: 3600, scope: 'groups' })
    const c = client({ clientId: 'my:client', clientSecret: 'sëcret +/%', scopes: ['groups'] })
    const tokens = await c.handleCallback(callback(), CHECKS)
    expect(tokens).toEqual({ accessToken: 'at-1', tokenType: 'Bearer', expiresIn: 3600, expiresAt: NOW + 3_600_000, scopes: ['groups'] })
    // openid-client names the charset; the form is UTF-8 either way.
    expect(captured.headers['content-type']).toMatch(/^application\/x-www-form-urlencoded(;charset=UTF-8)?$/)
    expect(captured.headers['authorization']).toBe(`Basic ${Buffer.from('my%3Aclient:s%C3%ABcret+%2B%2F%25').toString('base64')}`)
    expect(Object.fromEntries(captured.body)).toEqual({
      grant_type: 'authorization_code',
      code: 'the-authorization-code-123',
      redirect_uri: REDIRECT,
      code_verifier: VERIFIER,
      client_id: 'my:client',
    })
  })

  it('uses client_secret_post when the provider lists only that', async () => {
    const pool = provider(discoveryDoc({ token_endpoint_auth_methods_supported: ['client_secret_post', 'private_key_jwt'] }))
    const captured = tokenEndpoint(pool, 200, { access_token: 'at-1', token_type: 'bearer' })
    await client({ scopes: ['groups'] }).handleCallback(callback(), CHECKS)
    expect(captured.headers['authorization']).toBeUndefined()
    expect(captured.body.get('client_secret')).toBe(SECRET)
    expect(captured.body.get('client_id')).toBe('my-client')
  })

  it('sends only client_id for a public client', async () => {
    const pool = provider()
    const captured = tokenEndpoint(pool, 200, { access_token: 'at-1', token_type: 'Bearer' })
    await client({ clientSecret: undefined, scopes: ['groups'] }).handleCallback(callback(), CHECKS)
    expect(captured.headers['authorization']).toBeUndefined()
    expect(captured.body.get('client_secret')).toBeNull()
    expect(captured.body.get('client_id')).toBe('my-client')
  })

  it('fills in the requested scopes when the answer lists none, and leaves expiry undefined when it has none', async () => {
    const pool = provider()
    tokenEndpoint(pool, 200, { access_token: 'at-1', token_type: 'Bearer' })
    const tokens = await client({ scopes: ['groups', 'profile'] }).handleCallback(callback(), CHECKS)
    expect(tokens.scopes).toEqual(['groups', 'profile'])
    expect(tokens.expiresIn).toBeUndefined()
    expect(tokens.expiresAt).toBeUndefined()
  })

  it('sends client credentials with an optional scope', async () => {
    const pool = provider()
    const captured = tokenEndpoint(pool, 200, { access_token: 'at-1', token_type: 'Bearer', expires_in: '60' })
    const tokens = await client().clientCredentials({ scope: ['groups'] })
    expect(Object.fromEntries(captured.body)).toEqual({ grant_type: 'client_credentials', scope: 'groups', client_id: 'my-client' })
    expect(tokens.expiresIn).toBe(60)
    await expect(client({ clientSecret: undefined }).clientCredentials()).rejects.toThrow(/confidential client/)
  })

  it('refreshes tokens, verifying a new ID token without requiring the nonce', async () => {
    const pool = provider()
    jwks(pool)
    const captured = tokenEndpoint(pool, 200, {
      access_token: 'at-2',
      token_type: 'Bearer',
      refresh_token: 'rt-2',
      id_token: await idToken({ nonce: 'old-nonce' }),
    })
    const tokens = await client().refresh('rt-1')
    expect(Object.fromEntries(captured.body)).toEqual({ grant_type: 'refresh_token', refresh_token: 'rt-1', client_id: 'my-client' })
    expect(tokens).toMatchObject({ accessToken: 'at-2', refreshToken: 'rt-2', claims: { sub: 'alice' } })
  })
})

describe('token endpoint answers', () => {
  it('turns an RFC 6749 error body into an OAuthError, with secrets echoed by the provider redacted', async () => {
    const pool = provider()
    tokenEndpoint(pool, 400, {
      error: 'invalid_grant',
      error_description: `code the-authorization-code-123 with verifier ${VERIFIER} and secret ${SECRET} is bad\u0000\n`,
      error_uri: 'https://op.example.org/errors#grant',
    })
    const err = await rejection(client().handleCallback(callback(), CHECKS))
    expect(err).toBeInstanceOf(OAuthError)
    expect(err).toMatchObject({
      error: 'invalid_grant',
      responseStatus: 400,
      errorUri: 'https://op.example.org/errors#grant',
      errorDescription: 'code [redacted] with verifier [redacted] and secret [redacted] is bad',
    })
    expectNoSecrets(err, ['the-authorization-code-123', VERIFIER, SECRET])
  })

  it('shortens a long error description and refuses a malformed error code', async () => {
    const pool = provider()
    tokenEndpoint(pool, 400, { error: 'bad "code"\n', error_description: 'x'.repeat(5000) })
    const err = (await rejection(client().handleCallback(callback(), CHECKS))) as OAuthError
    expect(err.error).toBe('invalid_error_code')
    expect(err.errorDescription?.length).toBeLessThan(400)
  })

  it('treats an error inside a 200 answer as an error', async () => {
    const pool = provider()
    tokenEndpoint(pool, 200, { error: 'invalid_request' })
    expect(await rejection(client().handleCallback(callback(), CHECKS))).toMatchObject({ error: 'invalid_request' })
  })

  it.each([
    ['not JSON', 'access_token=abc', 'response'],
    ['without access_token', { token_type: 'Bearer' }, 'response'],
    ['with a DPoP token type', { access_token: 'x', token_type: 'DPoP' }, 'response'],
    ['without a token type', { access_token: 'x' }, 'response'],
    ['with a negative expires_in', { access_token: 'x', token_type: 'Bearer', expires_in: -5 }, 'response'],
    ['with a scope that is not a string', { access_token: 'x', token_type: 'Bearer', scope: ['groups'] }, 'response'],
  ])('refuses a 200 answer %s', async (_case, body, check) => {
    const pool = provider()
    tokenEndpoint(pool, 200, body)
    const err = await rejection(client({ scopes: ['groups'] }).handleCallback(callback(), CHECKS))
    expect(err).toBeInstanceOf(OAuthValidationError)
    expect(err).toMatchObject({ check })
  })

  it.each([
    [500, 'ERR_UPSTREAM_STATUS'],
    [502, 'ERR_UPSTREAM_STATUS'],
    [429, 'ERR_UPSTREAM_RATE_LIMITED'],
    [400, 'ERR_UPSTREAM_STATUS'],
  ])('maps a %i without an OAuth error body to an UpstreamError', async (status, code) => {
    const pool = provider()
    tokenEndpoint(pool, status, '<html>oops</html>', { 'content-type': 'text/html' })
    const err = await rejection(client().handleCallback(callback(), CHECKS))
    expect(err).toBeInstanceOf(UpstreamError)
    expect(err).toMatchObject({ code, upstreamStatus: status, endpoint: 'token', status: 503 })
  })

  it('aborts an answer larger than maxResponseBytes', async () => {
    const pool = provider()
    tokenEndpoint(pool, 200, { access_token: 'x'.repeat(5000), token_type: 'Bearer' })
    const err = await rejection(client({ maxResponseBytes: 2048 }).handleCallback(callback(), CHECKS))
    expect(err).toMatchObject({ code: 'ERR_UPSTREAM_BODY_TOO_LARGE', endpoint: 'token' })
  })

  it('gives up at the deadline', async () => {
    const pool = provider()
    pool
      .intercept({ path: '/token', method: 'POST' })
      .reply(200, { access_token: 'x', token_type: 'Bearer' }, { headers: JSON_HEADERS })
      .delay(5_000)
    const started = Date.now()
    const err = await rejection(client({ timeout: 100 }).handleCallback(callback(), CHECKS))
    expect(err).toMatchObject({ code: 'ERR_UPSTREAM_TIMEOUT', endpoint: 'token' })
    expect(Date.now() - started).toBeLessThan(4_000)
  })

  it('requires an ID token when a nonce was sent', async () => {
    const pool = provider()
    tokenEndpoint(pool, 200, { access_token: 'x', token_type: 'Bearer' })
    expect(await rejection(client().handleCallback(callback(), { ...CHECKS, nonce: 'n' }))).toMatchObject({ check: 'id_token' })
  })
})

describe('the redirect back', () => {
  it('refuses a repeated parameter', async () => {
    provider()
    const url = `${callback()}&state=st`
    expect(await rejection(client().handleCallback(url, CHECKS))).toMatchObject({ check: 'response' })
    expect(await rejection(client().handleCallback({ code: 'c', state: ['st', 'st'] }, CHECKS))).toMatchObject({ check: 'response' })
  })

  it('checks iss (RFC 9207): a wrong one is refused, and a missing one when the provider advertises it', async () => {
    provider(discoveryDoc({ authorization_response_iss_parameter_supported: true }))
    expect(await rejection(client().handleCallback(callback({ iss: 'https://evil.example.org' }), CHECKS))).toMatchObject({
      check: 'issuer',
    })
    expect(await rejection(client().handleCallback(callback(), CHECKS))).toMatchObject({ check: 'issuer' })
  })

  it("checks state before reporting an error, so a forged error cannot pass for the provider's", async () => {
    provider()
    const err = await rejection(client().handleCallback(`${REDIRECT}?error=access_denied&state=forged`, CHECKS))
    expect(err).toMatchObject({ check: 'state' })
  })

  it('refuses a redirect back with neither code nor error', async () => {
    provider()
    expect(await rejection(client().handleCallback(`${REDIRECT}?state=st`, CHECKS))).toMatchObject({ check: 'response' })
  })

  it('refuses an invalid PKCE verifier argument', async () => {
    provider()
    await expect(client().handleCallback(callback(), { state: 'st', codeVerifier: 'short' })).rejects.toThrow(/code verifier/)
  })
})

describe('ID tokens', () => {
  async function verify(token: string, options: Partial<OAuthClientOptions> = {}, nonce?: string) {
    const pool = provider()
    jwks(pool)
    return client(options).verifyIdToken(token, nonce === undefined ? {} : { nonce })
  }

  it('accepts a valid token and returns its claims', async () => {
    expect(await verify(await idToken({ nonce: 'n1', auth_time: SECONDS }), {}, 'n1')).toMatchObject({ sub: 'alice', nonce: 'n1' })
  })

  it.each([
    ['another issuer', { iss: 'https://evil.example.org' }, '"iss"'],
    ['another audience', { aud: 'someone-else' }, '"aud"'],
    ['several audiences without azp', { aud: ['my-client', 'other'] }, 'azp'],
    ['an azp of another client', { azp: 'other' }, 'azp'],
    ['no sub', { sub: undefined }, '"sub"'],
    ['no iat', { iat: undefined }, '"iat"'],
    ['no exp', { exp: undefined }, '"exp"'],
    ['an iat in the future', { iat: SECONDS + 120, exp: SECONDS + 600 }, '"iat"'],
    ['an expired exp', { exp: SECONDS - 60 }, 'expired'],
    ['a non-numeric auth_time', { auth_time: 'yesterday' }, 'auth_time'],
  ])('refuses a token with %s', async (_case, claims, text) => {
    const err = await rejection(verify(await idToken(claims as JWTPayload)))
    expect(err).toBeInstanceOf(OAuthValidationError)
    expect(err).toMatchObject({ check: 'id_token', message: expect.stringContaining(text) })
  })

  it('accepts several audiences with azp = client id, and exp within the tolerance', async () => {
    expect(await verify(await idToken({ aud: ['my-client', 'other'], azp: 'my-client', exp: SECONDS - 10 }))).toMatchObject({
      sub: 'alice',
    })
  })

  it('refuses a nonce mismatch', async () => {
    expect(await rejection(verify(await idToken({ nonce: 'n1' }), {}, 'n2'))).toMatchObject({ check: 'nonce' })
  })

  it('refuses a tampered token', async () => {
    const [h, , s] = (await idToken()).split('.')
    const forged = Buffer.from(JSON.stringify({ iss: ISSUER, sub: 'admin', aud: 'my-client', iat: SECONDS, exp: SECONDS + 300 })).toString(
      'base64url',
    )
    expect(await rejection(verify(`${h}.${forged}.${s}`))).toMatchObject({
      check: 'id_token',
      message: expect.stringContaining('signature'),
    })
  })

  it('refuses HS256 (signed with the client secret) and unsigned tokens: RS256 only', async () => {
    const hs = await new SignJWT({ iss: ISSUER, sub: 'alice', aud: 'my-client', iat: SECONDS, exp: SECONDS + 300 })
      .setProtectedHeader({ alg: 'HS256' })
      .sign(new TextEncoder().encode(SECRET))
    expect(await rejection(verify(hs))).toMatchObject({ check: 'id_token', message: expect.stringContaining('algorithm') })
    const none = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from(JSON.stringify({ iss: ISSUER, sub: 'a', aud: 'my-client', iat: SECONDS, exp: SECONDS + 60 })).toString('base64url')}.`
    expect(await rejection(verify(none))).toMatchObject({ check: 'id_token' })
  })

  it('accepts a token without kid when the JWKS has one key', async () => {
    expect(await verify(await idToken({}, { kid: undefined }))).toMatchObject({ sub: 'alice' })
  })

  it('refetches the JWKS for an unknown kid, at most once per cooldown', async () => {
    const pool = provider()
    const fetches: number[] = []
    let clock = NOW
    pool
      .intercept({ path: '/jwks', method: 'GET' })
      .reply(() => {
        fetches.push(clock)
        return { statusCode: 200, data: JSON.stringify({ keys: [rsa.jwk] }), responseOptions: { headers: JSON_HEADERS } }
      })
      .persist()
    const c = client({ now: () => clock })
    await c.verifyIdToken(await idToken())
    const unknown = await idToken({}, { kid: 'k2' })
    expect(await rejection(c.verifyIdToken(unknown))).toMatchObject({ message: expect.stringContaining('no key') })
    expect(fetches).toHaveLength(2)
    // Within the cooldown another unknown kid costs the provider nothing...
    clock += 4_000
    expect(await rejection(c.verifyIdToken(unknown))).toMatchObject({ check: 'id_token' })
    expect(fetches).toHaveLength(2)
    // ...after it, one more refetch is allowed.
    clock += 2_000
    expect(await rejection(c.verifyIdToken(unknown))).toMatchObject({ check: 'id_token' })
    expect(fetches).toHaveLength(3)
  })

  it('checks at_hash against the access token', async () => {
    const pool = provider()
    jwks(pool)
    tokenEndpoint(pool, 200, {
      access_token: 'at-1',
      token_type: 'Bearer',
      id_token: await idToken({ nonce: 'n', at_hash: 'AAAAAAAAAAAAAAAAAAAAAA' }),
    })
    const err = await rejection(client().handleCallback(callback(), { ...CHECKS, nonce: 'n' }))
    expect(err).toMatchObject({ check: 'id_token', message: expect.stringContaining('at_hash') })
  })

  it('maps a JWKS outage to an UpstreamError', async () => {
    const pool = provider()
    pool.intercept({ path: '/jwks', method: 'GET' }).reply(500, '')
    expect(await rejection(client().verifyIdToken(await idToken()))).toMatchObject({ code: 'ERR_UPSTREAM_STATUS', endpoint: 'jwks' })
  })
})

describe('userinfo answers', () => {
  it('reads the error attributes of a Bearer challenge', async () => {
    const pool = provider()
    pool.intercept({ path: '/userinfo', method: 'GET' }).reply(401, '', {
      headers: { 'www-authenticate': 'Bearer realm="op", error="invalid_token", error_description="The token \\"expired\\""' },
    })
    const err = await rejection(client().userinfo('some-access-token'))
    expect(err).toMatchObject({ error: 'invalid_token', errorDescription: 'The token "expired"', status: 401 })
  })

  it('sends the token as a Bearer header', async () => {
    const pool = provider()
    let authorization: unknown
    pool.intercept({ path: '/userinfo', method: 'GET' }).reply((request) => {
      authorization = (request.headers as Record<string, string>)['authorization']
      return { statusCode: 200, data: JSON.stringify({ sub: 'alice' }), responseOptions: { headers: JSON_HEADERS } }
    })
    expect(await client().userinfo('tok-123')).toEqual({ sub: 'alice' })
    expect(authorization).toBe('Bearer tok-123')
  })

  it('refuses signed userinfo and bodies that are not JSON objects', async () => {
    const pool = provider()
    pool.intercept({ path: '/userinfo', method: 'GET' }).reply(200, 'eyJ.eyJ.sig', { headers: { 'content-type': 'application/jwt' } })
    pool.intercept({ path: '/userinfo', method: 'GET' }).reply(200, '[1]', { headers: JSON_HEADERS })
    expect(await rejection(client().userinfo('t'))).toMatchObject({ check: 'response' })
    expect(await rejection(client().userinfo('t'))).toMatchObject({ check: 'response' })
  })
})

describe('the implicit redirect and RFC 9207, through the client', () => {
  const FRAGMENT = '#access_token=at-1&token_type=Bearer&state=st'

  it('requires iss once the metadata advertises it, and checks it against the discovered issuer', async () => {
    provider(discoveryDoc({ authorization_response_iss_parameter_supported: true }))
    const c = client()
    await c.metadata()
    expect(() => c.parseImplicitFragment(FRAGMENT, { state: 'st' })).toThrow(expect.objectContaining({ check: 'issuer' }))
    expect(() => c.parseImplicitFragment(`${FRAGMENT}&iss=https%3A%2F%2Fevil.example.org`, { state: 'st' })).toThrow(
      expect.objectContaining({ check: 'issuer' }),
    )
    expect(c.parseImplicitFragment(`${FRAGMENT}&iss=${encodeURIComponent(ISSUER)}`, { state: 'st' }).accessToken).toBe('at-1')
  })

  it('lets a redirect without iss through when the provider does not advertise it', async () => {
    provider()
    const c = client()
    await c.metadata()
    expect(c.parseImplicitFragment(FRAGMENT, { state: 'st' }).accessToken).toBe('at-1')
    expect(() => c.parseImplicitFragment(`${FRAGMENT}&iss=https%3A%2F%2Fevil.example.org`, { state: 'st' })).toThrow(
      expect.objectContaining({ check: 'issuer' }),
    )
  })

  it('before the metadata is loaded: checks an iss against the configured issuer, and refuses to guess without one', () => {
    provider()
    const c = client()
    expect(c.parseImplicitFragment(`${FRAGMENT}&iss=${encodeURIComponent(ISSUER)}`, { state: 'st' }).accessToken).toBe('at-1')
    expect(() => c.parseImplicitFragment(`${FRAGMENT}&iss=${encodeURIComponent(`${ISSUER}/`)}`, { state: 'st' })).toThrow(
      expect.objectContaining({ check: 'issuer' }),
    )
    expect(() => c.parseImplicitFragment(FRAGMENT, { state: 'st' })).toThrow(
      expect.objectContaining({ check: 'issuer', message: expect.stringMatching(/metadata\(\)/) }),
    )
  })
})

describe('refresh against the previous token set (OpenID Connect Core 12.2)', () => {
  const PREVIOUS_CLAIMS = { iss: ISSUER, sub: 'alice', aud: 'my-client', exp: SECONDS - 10, iat: SECONDS - 3600, auth_time: SECONDS - 3600 }

  function previous(overrides: Record<string, unknown> = {}) {
    return {
      accessToken: 'at-1',
      tokenType: 'Bearer' as const,
      expiresIn: 3600,
      expiresAt: NOW - 1000,
      scopes: ['openid', 'groups'],
      refreshToken: 'rt-1-refresh-token',
      idToken: 'eyJ.previous.token',
      claims: PREVIOUS_CLAIMS,
      ...overrides,
    }
  }

  it('sends the previous refresh token; keeps it, the granted scopes and the ID token when the answer has none', async () => {
    const pool = provider()
    const captured = tokenEndpoint(pool, 200, { access_token: 'at-2', token_type: 'Bearer', expires_in: 60 })
    const tokens = await client({ scopes: ['openid', 'groups', 'profile'] }).refresh(previous({ scopes: ['groups'] }))
    expect(Object.fromEntries(captured.body)).toEqual({
      grant_type: 'refresh_token',
      refresh_token: 'rt-1-refresh-token',
      client_id: 'my-client',
    })
    expect(tokens).toMatchObject({
      accessToken: 'at-2',
      refreshToken: 'rt-1-refresh-token',
      scopes: ['groups'],
      idToken: 'eyJ.previous.token',
    })
    expect(tokens.claims).toEqual(PREVIOUS_CLAIMS)
    expect(Object.isFrozen(tokens)).toBe(true)
  })

  it('takes the rotated refresh token, the granted scopes and the new ID token when they come', async () => {
    const pool = provider()
    jwks(pool)
    tokenEndpoint(pool, 200, {
      access_token: 'at-2',
      token_type: 'Bearer',
      refresh_token: 'rt-2',
      scope: 'openid',
      id_token: await idToken({ auth_time: SECONDS - 3600 }),
    })
    const tokens = await client().refresh(previous(), { scope: 'openid' })
    expect(tokens).toMatchObject({ refreshToken: 'rt-2', scopes: ['openid'], claims: { sub: 'alice', iat: SECONDS } })
  })

  it('an answer without scope to a narrowed request means the requested scopes', async () => {
    const pool = provider()
    const captured = tokenEndpoint(pool, 200, { access_token: 'at-2', token_type: 'Bearer' })
    const tokens = await client().refresh(previous(), { scope: ['groups'] })
    expect(captured.body.get('scope')).toBe('groups')
    expect(tokens.scopes).toEqual(['groups'])
  })

  it.each([
    ['another sub', { sub: 'mallory' }, {}],
    ['another aud', { aud: ['my-client', 'other'], azp: 'my-client' }, {}],
    ['another auth_time', { auth_time: SECONDS - 60 }, {}],
    ['no auth_time, where the previous had one', {}, {}],
    ["another iss than the previous token's", { auth_time: SECONDS - 3600 }, { iss: 'https://old-issuer.example.org' }],
  ])('refuses a new ID token with %s', async (_case, claims, previousClaims) => {
    const pool = provider()
    jwks(pool)
    tokenEndpoint(pool, 200, { access_token: 'at-2', token_type: 'Bearer', id_token: await idToken(claims) })
    const err = await rejection(client().refresh(previous({ claims: { ...PREVIOUS_CLAIMS, ...previousClaims } })))
    expect(err).toBeInstanceOf(OAuthValidationError)
    expect(err).toMatchObject({ check: 'id_token' })
    expectNoSecrets(err, ['rt-1-refresh-token', 'at-2', SECRET])
  })

  it('accepts an auth_time when the previous token had none, and needs a refresh token to start', async () => {
    const pool = provider()
    jwks(pool)
    tokenEndpoint(pool, 200, { access_token: 'at-2', token_type: 'Bearer', id_token: await idToken({ auth_time: SECONDS }) })
    const { auth_time: _dropped, ...withoutAuthTime } = PREVIOUS_CLAIMS
    expect((await client().refresh(previous({ claims: withoutAuthTime }))).claims?.auth_time).toBe(SECONDS)
    await expect(client().refresh(previous({ refreshToken: undefined }))).rejects.toThrow(InvalidArgumentError)
    await expect(client().refresh('')).rejects.toThrow(InvalidArgumentError)
  })
})

describe('max_age on the way back', () => {
  const MAX_AGE = { ...CHECKS, nonce: 'n1', maxAge: 600 }

  async function answer(claims: JWTPayload | null) {
    const pool = provider()
    jwks(pool)
    const body: Record<string, unknown> = { access_token: 'at-1', token_type: 'Bearer' }
    if (claims !== null) body['id_token'] = await idToken({ nonce: 'n1', ...claims })
    tokenEndpoint(pool, 200, body)
  }

  it('accepts an auth_time within max_age plus the clock tolerance', async () => {
    await answer({ auth_time: SECONDS - 600 - 29 })
    expect((await client().handleCallback(callback(), MAX_AGE)).claims?.auth_time).toBe(SECONDS - 629)
  })

  it.each([
    ['no auth_time', {}],
    ['an auth_time older than max_age plus the tolerance', { auth_time: SECONDS - 600 - 31 }],
  ])('refuses an ID token with %s', async (_case, claims) => {
    await answer(claims)
    const err = await rejection(client().handleCallback(callback(), MAX_AGE))
    expect(err).toBeInstanceOf(OAuthValidationError)
    expect(err).toMatchObject({ check: 'id_token', message: expect.stringContaining('auth_time') })
  })

  it('refuses an answer without ID token, and a maxAge that is not a number of seconds', async () => {
    await answer(null)
    expect(await rejection(client().handleCallback(callback(), { ...CHECKS, maxAge: 600 }))).toMatchObject({ check: 'id_token' })
    await expect(client().handleCallback(callback(), { ...CHECKS, maxAge: '600' as unknown as number })).rejects.toThrow(
      InvalidArgumentError,
    )
  })
})

describe('pushed authorization requests on the wire', () => {
  const PAR_DOC = discoveryDoc({ pushed_authorization_request_endpoint: `${ISSUER}/par`, require_pushed_authorization_requests: true })

  function parEndpoint(pool: ReturnType<MockAgent['get']>, status: number, body: unknown): Captured {
    const captured: Captured = { headers: {}, body: new URLSearchParams() }
    pool.intercept({ path: '/par', method: 'POST' }).reply((request) => {
      captured.headers = Object.fromEntries(Object.entries(request.headers as Record<string, string>).map(([k, v]) => [k.toLowerCase(), v]))
      captured.body = new URLSearchParams(String(request.body))
      return { statusCode: status, data: JSON.stringify(body), responseOptions: { headers: JSON_HEADERS } }
    })
    return captured
  }

  it('POSTs every parameter with client authentication, and sends the user with client_id and request_uri only', async () => {
    const pool = provider(PAR_DOC)
    const captured = parEndpoint(pool, 201, { request_uri: 'urn:ietf:params:oauth:request_uri:abc', expires_in: 60 })
    const request = await client().authorizationUrl({ maxAge: 60, params: { prompt: 'login' } })
    const sent = new URL(request.url)
    expect(`${sent.origin}${sent.pathname}`).toBe(`${ISSUER}/authorize`)
    expect([...sent.searchParams].sort()).toEqual([
      ['client_id', 'my-client'],
      ['request_uri', 'urn:ietf:params:oauth:request_uri:abc'],
    ])
    // Both parts form-urlencoded (RFC 6749 section 2.3.1); openid-client also encodes "-", which decodes the same.
    const [id, secret] = Buffer.from((captured.headers['authorization'] ?? '').replace(/^Basic /, ''), 'base64')
      .toString()
      .split(':')
    expect([id, secret].map((part) => decodeURIComponent((part ?? '').replace(/\+/g, ' ')))).toEqual(['my-client', SECRET])
    expect(Object.fromEntries(captured.body)).toMatchObject({
      response_type: 'code',
      client_id: 'my-client',
      redirect_uri: REDIRECT,
      scope: 'openid groups',
      state: request.state,
      nonce: request.nonce,
      code_challenge_method: 'S256',
      max_age: '60',
      prompt: 'login',
    })
    expect(captured.body.get('code_challenge')).toEqual(expect.any(String))
  })

  it("turns a refusal into an OAuthError with the provider's error, with echoed secrets redacted", async () => {
    const pool = provider(PAR_DOC)
    parEndpoint(pool, 400, { error: 'invalid_request', error_description: `bad request from ${SECRET}` })
    const err = await rejection(client().authorizationUrl())
    expect(err).toBeInstanceOf(OAuthError)
    expect(err).toMatchObject({ error: 'invalid_request', responseStatus: 400 })
    expectNoSecrets(err, [SECRET])
  })

  it.each([
    ['a 200 instead of 201', 200, { request_uri: 'urn:x' }, UpstreamError],
    ['a 201 without request_uri', 201, { expires_in: 60 }, OAuthValidationError],
    ['a 500', 500, { error: 'server_error' }, UpstreamError],
  ])('refuses %s', async (_case, status, body, type) => {
    const pool = provider(PAR_DOC)
    parEndpoint(pool, status, body)
    expect(await rejection(client().authorizationUrl())).toBeInstanceOf(type)
  })

  it('always: needs a PAR endpoint in the metadata; never: does not push even when required', async () => {
    provider(discoveryDoc())
    expect(await rejection(client({ pushedAuthorizationRequests: 'always' }).authorizationUrl())).toMatchObject({ check: 'metadata' })
    await agent.close()
    provider(PAR_DOC)
    const plain = await client({ pushedAuthorizationRequests: 'never' }).authorizationUrl()
    expect(new URL(plain.url).searchParams.get('response_type')).toBe('code')
  })

  it('refuses a discovered PAR endpoint that is plain HTTP', async () => {
    provider(discoveryDoc({ pushed_authorization_request_endpoint: 'http://op.example.org/par' }))
    expect(await rejection(client().metadata())).toMatchObject({
      check: 'endpoint',
      message: expect.stringContaining('pushed_authorization_request_endpoint'),
    })
  })
})

describe('JWT client assertions on the wire', () => {
  async function assertionFrom(captured: Captured) {
    expect(captured.headers['authorization']).toBeUndefined()
    expect(captured.body.get('client_secret')).toBeNull()
    expect(captured.body.get('client_assertion_type')).toBe('urn:ietf:params:oauth:client-assertion-type:jwt-bearer')
    return captured.body.get('client_assertion') as string
  }

  it("private_key_jwt: signed with the key's alg and kid; iss = sub = client id, aud = issuer, fresh jti, short exp", async () => {
    const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true })
    const jwk = { ...(await exportJWK(privateKey)), kid: 'client-key-1' }
    const pool = provider()
    const first = tokenEndpoint(pool, 200, { access_token: 'at-1', token_type: 'Bearer' })
    const second = tokenEndpoint(pool, 200, { access_token: 'at-2', token_type: 'Bearer' })
    const c = client({ clientSecret: undefined, privateKey: jwk, scopes: ['groups'] })
    await c.handleCallback(callback(), CHECKS)
    await c.clientCredentials()
    const assertion = await assertionFrom(first)
    expect(decodeProtectedHeader(assertion)).toMatchObject({ alg: 'ES256', kid: 'client-key-1' })
    const { payload } = await jwtVerify(assertion, publicKey, { currentDate: new Date(NOW), algorithms: ['ES256'] })
    expect(payload).toMatchObject({ iss: 'my-client', sub: 'my-client', aud: ISSUER, iat: SECONDS })
    expect((payload.exp as number) - SECONDS).toBeGreaterThan(0)
    expect((payload.exp as number) - SECONDS).toBeLessThanOrEqual(300)
    expect(payload.jti).toEqual(expect.any(String))
    const again = await jwtVerify(await assertionFrom(second), publicKey, { currentDate: new Date(NOW) })
    expect(again.payload.jti).not.toBe(payload.jti)
  })

  it('private_key_jwt: an alg in the JWK wins; RSA defaults to RS256', async () => {
    const { privateKey } = await generateKeyPair('PS256', { extractable: true })
    const pool = provider()
    const withAlg = tokenEndpoint(pool, 200, { access_token: 'at-1', token_type: 'Bearer' })
    const withoutAlg = tokenEndpoint(pool, 200, { access_token: 'at-2', token_type: 'Bearer' })
    const jwk = await exportJWK(privateKey)
    await client({ privateKey: { ...jwk, alg: 'PS256' }, clientSecret: undefined }).clientCredentials()
    await client({ privateKey: jwk, clientSecret: undefined }).clientCredentials()
    expect(decodeProtectedHeader(await assertionFrom(withAlg))).toEqual({ alg: 'PS256', typ: 'JWT' })
    expect(decodeProtectedHeader(await assertionFrom(withoutAlg))).toEqual({ alg: 'RS256', typ: 'JWT' })
  })

  it('client_secret_jwt: HS256 over the client secret', async () => {
    const pool = provider()
    const captured = tokenEndpoint(pool, 200, { access_token: 'at-1', token_type: 'Bearer' })
    await client({ tokenEndpointAuthMethod: 'client_secret_jwt' }).clientCredentials()
    const { payload, protectedHeader } = await jwtVerify(await assertionFrom(captured), new TextEncoder().encode(SECRET), {
      currentDate: new Date(NOW),
    })
    expect(protectedHeader.alg).toBe('HS256')
    expect(payload).toMatchObject({ iss: 'my-client', sub: 'my-client', aud: ISSUER })
  })

  it('never shows the key or the assertion in an error, even when the provider echoes them', async () => {
    const { privateKey } = await generateKeyPair('RS256', { extractable: true })
    const jwk = await exportJWK(privateKey)
    const pool = provider()
    let assertion = ''
    pool.intercept({ path: '/token', method: 'POST' }).reply((request) => {
      assertion = new URLSearchParams(String(request.body)).get('client_assertion') ?? ''
      return {
        statusCode: 401,
        data: JSON.stringify({ error: 'invalid_client', error_description: `bad assertion ${assertion}` }),
        responseOptions: { headers: JSON_HEADERS },
      }
    })
    const err = await rejection(client({ privateKey: jwk, clientSecret: undefined }).clientCredentials())
    expect(err).toMatchObject({ error: 'invalid_client' })
    expect(assertion).not.toBe('')
    // The provider's text is cut at 300 characters, so look for the assertion's claims part too.
    expectNoSecrets(err, [assertion, assertion.split('.')[1] as string, jwk.d as string, jwk.p as string, jwk.q as string])
  })

  it('a key that cannot be imported is an InvalidOptionError naming privateKey, without the key', async () => {
    provider()
    const broken = { kty: 'RSA', n: 'AQAB', e: 'AQAB', d: 'not-really-a-private-exponent-0123456789' }
    const err = await rejection(client({ privateKey: broken, clientSecret: undefined }).clientCredentials())
    expect(err).toBeInstanceOf(InvalidOptionError)
    expect(err).toMatchObject({ option: 'privateKey' })
    expectNoSecrets(err, [broken.d])
    expect((err as Error).cause).toBeUndefined()
  })
})
