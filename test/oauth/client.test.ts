/**
 * The OAuth client (voot-guard/oauth) against the emulator over real HTTP: the code flow
 * with PKCE driven through the consent page with plain HTTP requests, its failure modes,
 * client credentials, the implicit flow, userinfo, ID tokens (nonce, expiry with a fake
 * clock, key rotation), discovery versus the spec's fixed paths, and that no secret ever
 * ends up in an error.
 */
import { createHash } from 'node:crypto'
import { inspect } from 'node:util'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import {
  createOAuthClient,
  OAuthError,
  OAuthValidationError,
  type AuthorizationRequest,
  type OAuthClient,
  type OAuthClientOptions,
} from '../../oauth/index.js'
import { startEmulator, type Emulator } from '../../testing/index.js'

const START = Date.parse('2026-11-21T12:00:00Z')
let serverClock = START
let clientClock = START
let emulator: Emulator
let redirectUri: string

beforeAll(async () => {
  emulator = await startEmulator({ now: () => serverClock })
  // Any port on loopback matches the demo client's registered redirect URI (RFC 8252).
  redirectUri = 'http://127.0.0.1:43210/callback'
})
afterAll(async () => {
  await emulator.close()
})
beforeEach(() => {
  serverClock = START
  clientClock = START
  emulator.resetLog()
})

function makeClient(overrides: Partial<OAuthClientOptions> = {}): OAuthClient {
  return createOAuthClient({
    authUrl: emulator.authUrl,
    clientId: 'demo-client',
    clientSecret: 'demo-secret',
    redirectUri,
    scopes: ['openid', 'profile', 'groups'],
    now: () => clientClock,
    ...overrides,
  })
}

/** Follows an authorization URL through the consent page as `user`; returns where the browser would go next. */
async function consent(url: string, user: string | undefined, decision: 'approve' | 'decline' = 'approve'): Promise<string> {
  const page = await fetch(url, { redirect: 'manual' })
  expect(page.status).toBe(200)
  const html = await page.text()
  const action = /<form method="post" action="([^"]+)"/.exec(html)?.[1] ?? ''
  const requestId = /name="request_id" value="([^"]+)"/.exec(html)?.[1] ?? ''
  const fields: Record<string, string> = { request_id: requestId, decision }
  if (user !== undefined) fields['user'] = user
  const res = await fetch(new URL(action, url), { method: 'POST', redirect: 'manual', body: new URLSearchParams(fields) })
  expect(res.status).toBe(302)
  return res.headers.get('location') ?? ''
}

async function signIn(client: OAuthClient, user = 'alice'): Promise<{ request: AuthorizationRequest; callback: string }> {
  const request = await client.authorizationUrl()
  return { request, callback: await consent(request.url, user) }
}

function expectNoSecrets(err: unknown, secrets: readonly string[]): void {
  const texts = [String(err), JSON.stringify(err), (err as Error).stack ?? '', inspect(err, { depth: 10, showHidden: true })]
  for (const secret of secrets) for (const text of texts) expect(text).not.toContain(secret)
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise
  } catch (err) {
    return err
  }
  throw new Error('expected a rejection')
}

describe('authorization code flow with PKCE', () => {
  it('builds an authorization request with S256 PKCE, state, nonce and the scopes', async () => {
    const client = makeClient()
    const request = await client.authorizationUrl()
    const url = new URL(request.url)
    expect(url.origin + url.pathname).toBe(`${emulator.authUrl}/oauth/authorization`)
    const params = Object.fromEntries(url.searchParams)
    expect(params).toEqual({
      response_type: 'code',
      client_id: 'demo-client',
      redirect_uri: redirectUri,
      scope: 'openid profile groups',
      state: request.state,
      nonce: request.nonce,
      code_challenge: createHash('sha256').update(request.codeVerifier).digest('base64url'),
      code_challenge_method: 'S256',
    })
    expect(request.codeVerifier).toMatch(/^[A-Za-z0-9_-]{43}$/)
    const again = await client.authorizationUrl()
    expect(again.state).not.toBe(request.state)
    expect(again.codeVerifier).not.toBe(request.codeVerifier)
  })

  it('signs in: the code is exchanged, the ID token verified, and the token works on the group endpoints', async () => {
    const client = makeClient()
    const { request, callback } = await signIn(client, 'alice')
    const tokens = await client.handleCallback(callback, request)
    expect(tokens).toMatchObject({
      tokenType: 'Bearer',
      expiresIn: 28_800,
      expiresAt: START + 28_800_000,
      scopes: ['openid', 'profile', 'groups'],
      idToken: expect.any(String),
      claims: { iss: emulator.authUrl, sub: 'alice', aud: 'demo-client', nonce: request.nonce, name: 'Alice Hansen' },
    })
    expect(Object.isFrozen(tokens)).toBe(true)
    const res = await fetch(`${emulator.baseUrl}/me/groups`, { headers: { authorization: `Bearer ${tokens.accessToken}` } })
    expect(res.status).toBe(200)
    expect(((await res.json()) as { id: string }[]).map((g) => g.id)).toContain('fc:org:example.org')
    expect(emulator.count('/oauth/token')).toBe(1)
  })

  it('accepts the callback as URLSearchParams, a query object, a query string or a relative URL', async () => {
    const client = makeClient({ scopes: ['groups'] })
    for (const form of ['params', 'object', 'query', 'relative'] as const) {
      const { request, callback } = await signIn(client, 'bob')
      const search = new URL(callback).searchParams
      const input = {
        params: search,
        object: Object.fromEntries(search),
        query: `?${search.toString()}`,
        relative: `/callback?${search.toString()}`,
      }[form]
      const tokens = await client.handleCallback(input, request)
      expect(tokens.scopes).toEqual(['groups'])
      expect(tokens.idToken).toBeUndefined()
      expect(request.nonce).toBeUndefined()
    }
  })

  it('refuses a state mismatch before any token request', async () => {
    const client = makeClient()
    const { request, callback } = await signIn(client)
    const err = await rejection(client.handleCallback(callback, { ...request, state: 'another-state' }))
    expect(err).toBeInstanceOf(OAuthValidationError)
    expect(err).toMatchObject({ code: 'ERR_OAUTH', check: 'state', status: 400 })
    expect(emulator.count('/oauth/token')).toBe(0)
  })

  it('refuses a callback when the session lost its state', async () => {
    const client = makeClient()
    const { callback } = await signIn(client)
    const err = await rejection(client.handleCallback(callback, {} as never))
    expect(err).toMatchObject({ check: 'state' })
  })

  it('turns a declined consent into an OAuthError access_denied', async () => {
    const client = makeClient()
    const request = await client.authorizationUrl()
    const callback = await consent(request.url, undefined, 'decline')
    const err = await rejection(client.handleCallback(callback, request))
    expect(err).toBeInstanceOf(OAuthError)
    expect(err).toMatchObject({ code: 'ERR_OAUTH', error: 'access_denied', errorDescription: 'The user declined the request' })
    expect(emulator.count('/oauth/token')).toBe(0)
  })

  it('refuses to reuse a code, with no code, verifier or secret in the error', async () => {
    const client = makeClient()
    const { request, callback } = await signIn(client)
    const tokens = await client.handleCallback(callback, request)
    const err = await rejection(client.handleCallback(callback, request))
    expect(err).toBeInstanceOf(OAuthError)
    expect(err).toMatchObject({ error: 'invalid_grant', responseStatus: 400, status: 400 })
    const code = new URL(callback).searchParams.get('code') ?? ''
    expectNoSecrets(err, [code, request.codeVerifier, 'demo-secret', tokens.accessToken])
    // The reuse revoked the first token (RFC 6749 section 4.1.2).
    expect(emulator.tokens.lookup(tokens.accessToken)).toBeUndefined()
  })

  it('fails with invalid_grant when the code is redeemed with another redirect_uri', async () => {
    const { request, callback } = await signIn(makeClient())
    const other = makeClient({ redirectUri: 'http://localhost:43210/callback' })
    const err = await rejection(other.handleCallback(callback, request))
    expect(err).toMatchObject({ error: 'invalid_grant' })
  })

  it('fails with invalid_grant for a wrong PKCE verifier', async () => {
    const client = makeClient()
    const { request, callback } = await signIn(client)
    const other = await client.authorizationUrl()
    const err = await rejection(client.handleCallback(callback, { ...request, codeVerifier: other.codeVerifier }))
    expect(err).toMatchObject({ error: 'invalid_grant' })
    expectNoSecrets(err, [request.codeVerifier, other.codeVerifier])
  })

  it('fails with invalid_client for a wrong secret, without the secret in the error', async () => {
    const client = makeClient({ clientSecret: 'not-the-secret-1234' })
    const { request, callback } = await signIn(client)
    const err = await rejection(client.handleCallback(callback, request))
    expect(err).toMatchObject({ error: 'invalid_client', responseStatus: 401, status: 500, expose: false })
    expectNoSecrets(err, ['not-the-secret-1234', new URL(callback).searchParams.get('code') ?? ''])
  })

  it('works with client_secret_post too', async () => {
    const client = makeClient({ tokenEndpointAuthMethod: 'client_secret_post' })
    const { request, callback } = await signIn(client)
    expect((await client.handleCallback(callback, request)).claims?.sub).toBe('alice')
  })

  it('refuses an ID token whose nonce differs from the one kept', async () => {
    const client = makeClient()
    const { request, callback } = await signIn(client)
    const err = await rejection(client.handleCallback(callback, { ...request, nonce: 'another-nonce' }))
    expect(err).toBeInstanceOf(OAuthValidationError)
    expect(err).toMatchObject({ check: 'nonce' })
  })

  it('refuses an ID token with a nonce when the app kept none', async () => {
    const client = makeClient()
    const { request, callback } = await signIn(client)
    const err = await rejection(client.handleCallback(callback, { state: request.state, codeVerifier: request.codeVerifier }))
    expect(err).toMatchObject({ check: 'nonce' })
  })

  it('treats a null nonce (from a database, say) as "none sent", never as "do not check"', async () => {
    const client = makeClient()
    const { request, callback } = await signIn(client)
    const checks = { state: request.state, codeVerifier: request.codeVerifier, nonce: null as unknown as string }
    expect(await rejection(client.handleCallback(callback, checks))).toMatchObject({ check: 'nonce' })
  })

  it('refuses an expired ID token (fake clock beyond exp plus tolerance)', async () => {
    const client = makeClient()
    const { request, callback } = await signIn(client)
    clientClock = START + 600_000 + 31_000
    const err = await rejection(client.handleCallback(callback, request))
    expect(err).toMatchObject({ check: 'id_token', message: expect.stringContaining('expired') })
  })

  it('accepts an ID token within the clock tolerance', async () => {
    const client = makeClient({ clockTolerance: 60_000 })
    const { request, callback } = await signIn(client)
    clientClock = START + 600_000 + 50_000
    expect((await client.handleCallback(callback, request)).claims?.sub).toBe('alice')
  })

  it('refuses an ID token for another audience', async () => {
    // The code belongs to demo-client; a client that believes it is someone else must not accept its ID token.
    const { request, callback } = await signIn(makeClient())
    const tokens = await makeClient().handleCallback(callback, request)
    const stranger = makeClient({ clientId: 'demo-service', clientSecret: 'demo-service-secret' })
    const err = await rejection(stranger.verifyIdToken(tokens.idToken ?? ''))
    expect(err).toMatchObject({ check: 'id_token', message: expect.stringContaining('"aud"') })
  })

  it('picks up a key rotation', async () => {
    const client = makeClient()
    const first = await signIn(client)
    await client.handleCallback(first.callback, first.request)
    expect(emulator.count('/openid/jwks')).toBe(1)

    // Right away: the cooldown only spaces out refetches for unknown keys, not the first one.
    const kid = await emulator.oauth.rotateKeys({ keepPrevious: false })
    const second = await signIn(client)
    const tokens = await client.handleCallback(second.callback, second.request)
    const header = JSON.parse(Buffer.from(tokens.idToken?.split('.')[0] ?? '', 'base64url').toString()) as { kid: string }
    expect(header.kid).toBe(kid)
    expect(tokens.claims?.sub).toBe('alice')
    expect(emulator.count('/openid/jwks')).toBe(2)
  })
})

describe('other grants and endpoints', () => {
  it('gets a client-only token with client credentials; the group service refuses me/* for it', async () => {
    const client = createOAuthClient({
      authUrl: emulator.authUrl,
      clientId: 'demo-service',
      clientSecret: 'demo-service-secret',
      now: () => clientClock,
    })
    const tokens = await client.clientCredentials({ scope: 'groups' })
    expect(tokens).toMatchObject({ tokenType: 'Bearer', expiresIn: 28_800, expiresAt: START + 28_800_000, scopes: ['groups'] })
    expect(tokens.idToken).toBeUndefined()
    const me = await fetch(`${emulator.baseUrl}/me/groups`, { headers: { authorization: `Bearer ${tokens.accessToken}` } })
    expect(me.status).toBe(403)
    const all = await fetch(`${emulator.baseUrl}/groups`, { headers: { authorization: `Bearer ${tokens.accessToken}` } })
    expect(all.status).toBe(200)
  })

  it('implicit flow: builds the request and reads the token from the fragment', async () => {
    const client = makeClient({ scopes: ['groups'] })
    const { url, state } = await client.implicitAuthorizationUrl()
    expect(new URL(url).searchParams.get('response_type')).toBe('token')
    expect(new URL(url).searchParams.get('code_challenge')).toBeNull()
    const callback = await consent(url, 'bob')
    expect(new URL(callback).search).toBe('')
    const tokens = client.parseImplicitFragment(callback, { state })
    expect(tokens).toMatchObject({ tokenType: 'Bearer', expiresIn: 28_800, expiresAt: START + 28_800_000, scopes: ['groups'] })
    expect(emulator.tokens.lookup(tokens.accessToken)?.userId).toBe('bob')
    expect(() => client.parseImplicitFragment(callback, { state: 'other' })).toThrow(OAuthValidationError)
  })

  it('fetches userinfo, checking sub against the ID token', async () => {
    const client = makeClient()
    const { request, callback } = await signIn(client, 'bob')
    const tokens = await client.handleCallback(callback, request)
    expect(await client.userinfo(tokens)).toEqual({ sub: 'bob', name: 'Bob Nilsen', email: 'bob@student.example.org' })
    expect(await client.userinfo(tokens.accessToken)).toMatchObject({ sub: 'bob' })
    const err = await rejection(client.userinfo(tokens.accessToken, { subject: 'alice' }))
    expect(err).toMatchObject({ check: 'subject' })
  })

  it('turns a userinfo 401 into OAuthError invalid_token, without the token', async () => {
    const client = makeClient()
    const token = 'bm90LWEtcmVhbC10b2tlbi1hdC1hbGw'
    const err = await rejection(client.userinfo(token))
    expect(err).toBeInstanceOf(OAuthError)
    expect(err).toMatchObject({ error: 'invalid_token', status: 401, responseStatus: 401, errorDescription: 'Token is invalid' })
    expectNoSecrets(err, [token])
  })
})

describe('discovery', () => {
  it('uses the discovery document of authUrl', async () => {
    const metadata = await makeClient().metadata()
    expect(metadata).toMatchObject({ discovered: true, issuer: emulator.authUrl, userinfo_endpoint: `${emulator.authUrl}/openid/userinfo` })
  })

  it('works as an OpenID Connect issuer', async () => {
    const client = createOAuthClient({
      issuer: emulator.authUrl,
      clientId: 'demo-client',
      clientSecret: 'demo-secret',
      redirectUri,
      now: () => clientClock,
    })
    const { request, callback } = await signIn(client)
    expect((await client.handleCallback(callback, request)).claims?.sub).toBe('alice')
  })

  it("uses the spec's fixed paths without discovery, and the whole flow still works", async () => {
    const client = makeClient({ discovery: false })
    expect(await client.metadata()).toEqual({
      issuer: emulator.authUrl,
      authorization_endpoint: `${emulator.authUrl}/oauth/authorization`,
      token_endpoint: `${emulator.authUrl}/oauth/token`,
      userinfo_endpoint: `${emulator.authUrl}/userinfo`,
      jwks_uri: `${emulator.authUrl}/openid/jwks`,
      discovered: false,
    })
    const { request, callback } = await signIn(client, 'carol')
    const tokens = await client.handleCallback(callback, request)
    expect(tokens.claims?.sub).toBe('carol')
    expect(await client.userinfo(tokens)).toMatchObject({ sub: 'carol', user: { userid: 'carol' } })
    expect(emulator.count('/.well-known/openid-configuration')).toBe(0)
  })

  it('discovers once and shares the document between concurrent calls', async () => {
    const client = makeClient()
    await Promise.all([client.metadata(), client.authorizationUrl(), client.authorizationUrl()])
    await client.metadata()
    expect(emulator.count('/.well-known/openid-configuration')).toBe(1)
  })
})
