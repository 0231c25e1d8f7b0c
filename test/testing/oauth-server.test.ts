/**
 * The emulated authorization server (testing/oauth-server.ts) over real HTTP: discovery,
 * JWKS, the consent page, the code and implicit flows, the token endpoint's checks
 * (client authentication, single-use and expiring codes, redirect_uri, PKCE) and userinfo.
 */
import { createHash, randomBytes } from 'node:crypto'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { defaultData, type EmulatorData } from '../../testing/index.js'
import { createOAuthServer, type OAuthServer } from '../../testing/oauth-server/oauth-server.js'
import { TokenStore } from '../../testing/token-store.js'

interface Provider {
  readonly issuer: string
  readonly oauth: OAuthServer
  readonly tokens: TokenStore
  close(): Promise<void>
}

async function startProvider(now: () => number, data: EmulatorData = defaultData): Promise<Provider> {
  const tokens = new TokenStore(now)
  let oauth: OAuthServer | undefined
  const server: Server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1')
      if (oauth === undefined || !(await oauth.handle(req, res, url))) res.writeHead(404).end()
    })()
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  oauth = createOAuthServer({ data, tokens, issuer, now })
  return {
    issuer,
    oauth,
    tokens,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

const REDIRECT = 'http://127.0.0.1:3000/callback'
const BASIC = `Basic ${Buffer.from('demo-client:demo-secret').toString('base64')}`

let clock = Date.parse('2026-11-21T12:00:00Z')
let provider: Provider

beforeAll(async () => {
  provider = await startProvider(() => clock)
})
afterAll(async () => {
  await provider.close()
})

function authorizeUrl(params: Record<string, string>): string {
  const url = new URL('/oauth/authorization', provider.issuer)
  for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value)
  return url.href
}

function verifierPair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url')
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') }
}

/** GETs the consent page and returns the pending request id from its form. */
async function consent(url: string): Promise<{ requestId: string; html: string }> {
  const res = await fetch(url, { redirect: 'manual' })
  expect(res.status).toBe(200)
  expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8')
  const html = await res.text()
  const requestId = /name="request_id" value="([^"]+)"/.exec(html)?.[1]
  expect(requestId).toBeDefined()
  return { requestId: requestId ?? '', html }
}

/** POSTs the consent form; returns the Location of the answer (or the status when none). */
async function decide(
  requestId: string,
  fields: Record<string, string>,
): Promise<{ status: number; location: URL | undefined; text: string }> {
  const res = await fetch(`${provider.issuer}/oauth/authorization`, {
    method: 'POST',
    redirect: 'manual',
    body: new URLSearchParams({ request_id: requestId, ...fields }),
  })
  const location = res.headers.get('location')
  return { status: res.status, location: location === null ? undefined : new URL(location), text: await res.text() }
}

async function codeFor(params: Record<string, string>, user = 'alice'): Promise<string> {
  const { requestId } = await consent(
    authorizeUrl({ response_type: 'code', client_id: 'demo-client', redirect_uri: REDIRECT, state: 's1', ...params }),
  )
  const { location } = await decide(requestId, { user, decision: 'approve' })
  const code = location?.searchParams.get('code')
  expect(code).toBeTruthy()
  return code ?? ''
}

/** POSTs to the token endpoint; `authorization` null sends no Authorization header. */
async function tokenRequest(fields: Record<string, string>, authorization: string | null = BASIC) {
  const res = await fetch(`${provider.issuer}/oauth/token`, {
    method: 'POST',
    headers: authorization === null ? {} : { authorization },
    body: new URLSearchParams(fields),
  })
  return { status: res.status, headers: res.headers, json: (await res.json()) as Record<string, unknown> }
}

describe('discovery and JWKS', () => {
  it('publishes an OpenID Connect discovery document for the issuer', async () => {
    const res = await fetch(`${provider.issuer}/.well-known/openid-configuration`)
    expect(res.status).toBe(200)
    const doc = (await res.json()) as Record<string, unknown>
    expect(doc).toMatchObject({
      issuer: provider.issuer,
      authorization_endpoint: `${provider.issuer}/oauth/authorization`,
      token_endpoint: `${provider.issuer}/oauth/token`,
      userinfo_endpoint: `${provider.issuer}/openid/userinfo`,
      jwks_uri: `${provider.issuer}/openid/jwks`,
      response_types_supported: expect.arrayContaining(['code', 'token']),
      grant_types_supported: expect.arrayContaining(['authorization_code', 'client_credentials']),
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
      id_token_signing_alg_values_supported: ['RS256'],
      scopes_supported: expect.arrayContaining(['openid', 'groups']),
      subject_types_supported: ['public'],
    })
  })

  it('publishes the public RSA key with a kid, and no private part', async () => {
    const jwks = (await (await fetch(`${provider.issuer}/openid/jwks`)).json()) as { keys: Record<string, unknown>[] }
    expect(jwks.keys).toHaveLength(1)
    expect(jwks.keys[0]).toMatchObject({ kty: 'RSA', alg: 'RS256', use: 'sig', kid: expect.any(String), n: expect.any(String), e: 'AQAB' })
    for (const part of ['d', 'p', 'q', 'dp', 'dq', 'qi']) expect(jwks.keys[0]).not.toHaveProperty(part)
  })

  it('rotates keys, keeping the previous one published unless told not to', async () => {
    const p = await startProvider(() => clock)
    try {
      const before = (await (await fetch(`${p.issuer}/openid/jwks`)).json()) as { keys: { kid: string }[] }
      const kid = await p.oauth.rotateKeys()
      const after = (await (await fetch(`${p.issuer}/openid/jwks`)).json()) as { keys: { kid: string }[] }
      expect(after.keys.map((k) => k.kid)).toEqual([kid, before.keys[0]?.kid])
      const kid2 = await p.oauth.rotateKeys({ keepPrevious: false })
      const last = (await (await fetch(`${p.issuer}/openid/jwks`)).json()) as { keys: { kid: string }[] }
      expect(last.keys.map((k) => k.kid)).toEqual([kid2])
    } finally {
      await p.close()
    }
  })

  it('leaves other paths to the caller', async () => {
    expect((await fetch(`${provider.issuer}/nothing-here`)).status).toBe(404)
  })
})

describe('authorization endpoint', () => {
  it('shows an accessible consent page: labelled users, the scopes, Approve and Decline buttons', async () => {
    const { html } = await consent(
      authorizeUrl({ response_type: 'code', client_id: 'demo-client', redirect_uri: REDIRECT, scope: 'openid groups', state: 'x' }),
    )
    expect(html).toContain('<html lang="en">')
    expect(html).toMatch(/<legend>Demo user<\/legend>/)
    expect(html).toMatch(/<label><input type="radio" name="user" value="alice" required> Alice Hansen/)
    expect(html).toMatch(/<label><input type="radio" name="user" value="bob" required> Bob Nilsen/)
    expect(html).toContain('<code>groups</code>')
    expect(html).toMatch(/<button type="submit" name="decision" value="approve">Approve<\/button>/)
    expect(html).toMatch(/<button type="submit" name="decision" value="decline" formnovalidate>Decline<\/button>/)
    // The spec: an unsecured (HTTP) redirect URI gets a highlighted warning.
    expect(html).toMatch(/class="warning" role="alert"/)
  })

  it('preselects the login_hint user', async () => {
    const { html } = await consent(
      authorizeUrl({ response_type: 'code', client_id: 'demo-client', redirect_uri: REDIRECT, login_hint: 'bob' }),
    )
    expect(html).toMatch(/value="bob" required checked>/)
  })

  it.each([
    ['an unknown client', { client_id: 'nobody', redirect_uri: REDIRECT }],
    ['no client_id', { redirect_uri: REDIRECT }],
    ['an unregistered redirect_uri', { client_id: 'demo-client', redirect_uri: 'http://app.example.org:3000/elsewhere' }],
    ['another host', { client_id: 'demo-client', redirect_uri: 'http://evil.example/callback' }],
    ['no redirect_uri', { client_id: 'demo-client' }],
  ])('shows an error page, never a redirect, for %s', async (_case, params) => {
    const res = await fetch(authorizeUrl({ response_type: 'code', state: 'x', ...params }), { redirect: 'manual' })
    expect(res.status).toBe(400)
    expect(res.headers.get('location')).toBeNull()
    expect(await res.text()).toContain('Sign-in request refused')
  })

  it('accepts a loopback redirect URI on any port (RFC 8252 section 7.3), but not another path or host', async () => {
    for (const redirectUri of ['http://127.0.0.1:54321/callback', 'http://localhost:1/callback']) {
      const res = await fetch(authorizeUrl({ response_type: 'code', client_id: 'demo-client', redirect_uri: redirectUri }), {
        redirect: 'manual',
      })
      expect(res.status).toBe(200)
    }
    const other = await fetch(
      authorizeUrl({ response_type: 'code', client_id: 'demo-client', redirect_uri: 'http://127.0.0.2:3000/callback' }),
      { redirect: 'manual' },
    )
    expect(other.status).toBe(400)
  })

  it('accepts any app on loopback for demo-client (any port, path and query), and nothing wider', async () => {
    const status = async (redirectUri: string) =>
      (await fetch(authorizeUrl({ response_type: 'code', client_id: 'demo-client', redirect_uri: redirectUri }), { redirect: 'manual' }))
        .status
    // The gate behind a proxy on loopback (docs/gate.md, "Try it on your machine"), the examples, any app.
    for (const redirectUri of [
      'http://127.0.0.1:8000/_gate/callback',
      'http://localhost:4181/_gate/callback',
      'http://127.0.0.1/_gate/callback',
      'http://127.0.0.1:3000/callback',
      'http://localhost:5173/auth/done?next=%2Fadmin',
      'http://127.0.0.1:8000/_gate/callback?x=1',
    ]) {
      expect(await status(redirectUri), redirectUri).toBe(200)
    }
    for (const redirectUri of [
      'https://127.0.0.1:8000/_gate/callback', // registered as http
      'http://app.example.org:8000/_gate/callback', // not loopback
      'http://127.0.0.1.example.org/_gate/callback',
      'http://127.0.0.2:8000/_gate/callback', // another loopback address than registered
      'http://[::1]:8000/_gate/callback',
      'http://user@127.0.0.1:8000/_gate/callback', // user info never matches loosely
      'http://127.0.0.1:8000/callback#fragment',
    ]) {
      expect(await status(redirectUri), redirectUri).toBe(400)
    }
  })

  it('matches non-loopback redirect URIs exactly, port included', async () => {
    const data: EmulatorData = {
      ...defaultData,
      clients: [{ clientId: 'web', clientSecret: 'web-secret', redirectUris: ['https://app.example.org/cb'] }],
    }
    const p = await startProvider(() => clock, data)
    try {
      const url = (redirect: string) =>
        `${p.issuer}/oauth/authorization?response_type=code&client_id=web&redirect_uri=${encodeURIComponent(redirect)}`
      expect((await fetch(url('https://app.example.org/cb'), { redirect: 'manual' })).status).toBe(200)
      expect((await fetch(url('https://app.example.org:8443/cb'), { redirect: 'manual' })).status).toBe(400)
      expect((await fetch(url('https://app.example.org/cb?x=1'), { redirect: 'manual' })).status).toBe(400)
    } finally {
      await p.close()
    }
  })

  it.each([
    ['an unsupported response_type', { response_type: 'id_token' }, 'unsupported_response_type'],
    ['no response_type', {}, 'unsupported_response_type'],
    ['the plain PKCE method', { response_type: 'code', code_challenge: 'a'.repeat(43), code_challenge_method: 'plain' }, 'invalid_request'],
    ['a PKCE challenge without method', { response_type: 'code', code_challenge: 'a'.repeat(43) }, 'invalid_request'],
    ['a malformed PKCE challenge', { response_type: 'code', code_challenge: 'short', code_challenge_method: 'S256' }, 'invalid_request'],
    ['prompt=none', { response_type: 'code', prompt: 'none' }, 'login_required'],
  ])('redirects back with an error for %s', async (_case, params, error) => {
    const res = await fetch(authorizeUrl({ client_id: 'demo-client', redirect_uri: REDIRECT, state: 'st', ...params }), {
      redirect: 'manual',
    })
    expect(res.status).toBe(302)
    const location = new URL(res.headers.get('location') ?? '')
    expect(location.origin + location.pathname).toBe(REDIRECT)
    expect(location.searchParams.get('error')).toBe(error)
    expect(location.searchParams.get('state')).toBe('st')
    expect(location.searchParams.get('iss')).toBe(provider.issuer)
  })

  it('redirects back with access_denied and the state when the person declines', async () => {
    const { requestId } = await consent(
      authorizeUrl({ response_type: 'code', client_id: 'demo-client', redirect_uri: REDIRECT, state: 'keep-me' }),
    )
    const { status, location } = await decide(requestId, { decision: 'decline' })
    expect(status).toBe(302)
    expect(location?.searchParams.get('error')).toBe('access_denied')
    expect(location?.searchParams.get('state')).toBe('keep-me')
    expect(location?.searchParams.get('code')).toBeNull()
  })

  it('refuses a replayed or unknown consent form', async () => {
    const { requestId } = await consent(authorizeUrl({ response_type: 'code', client_id: 'demo-client', redirect_uri: REDIRECT }))
    expect((await decide(requestId, { user: 'alice', decision: 'approve' })).status).toBe(302)
    const replay = await decide(requestId, { user: 'alice', decision: 'approve' })
    expect(replay.status).toBe(400)
    expect(replay.text).toContain('unknown or has expired')
    expect((await decide('made-up', { user: 'alice', decision: 'approve' })).status).toBe(400)
  })

  it('asks again when no (or an unknown) user was chosen', async () => {
    const { requestId } = await consent(authorizeUrl({ response_type: 'code', client_id: 'demo-client', redirect_uri: REDIRECT }))
    expect((await decide(requestId, { decision: 'approve' })).status).toBe(400)
    expect((await decide(requestId, { user: 'mallory', decision: 'approve' })).status).toBe(400)
    expect((await decide(requestId, { user: 'bob', decision: 'approve' })).status).toBe(302)
  })

  it('implicit flow: the token comes in the fragment, with type, lifetime, scope and state', async () => {
    const { requestId } = await consent(
      authorizeUrl({ response_type: 'token', client_id: 'demo-client', redirect_uri: REDIRECT, scope: 'groups profile', state: 'imp' }),
    )
    const { location } = await decide(requestId, { user: 'bob', decision: 'approve' })
    expect(location?.search).toBe('')
    const fragment = new URLSearchParams(location?.hash.slice(1))
    expect(fragment.get('token_type')).toBe('Bearer')
    expect(fragment.get('expires_in')).toBe('28800')
    expect(fragment.get('scope')).toBe('groups profile')
    expect(fragment.get('state')).toBe('imp')
    const record = provider.tokens.lookup(fragment.get('access_token') ?? '')
    expect(record).toMatchObject({ userId: 'bob', clientId: 'demo-client', scopes: ['groups', 'profile'] })
  })

  it('implicit flow: errors go in the fragment too', async () => {
    const { requestId } = await consent(
      authorizeUrl({ response_type: 'token', client_id: 'demo-client', redirect_uri: REDIRECT, state: 'imp' }),
    )
    const { location } = await decide(requestId, { decision: 'decline' })
    expect(new URLSearchParams(location?.hash.slice(1)).get('error')).toBe('access_denied')
  })

  it('grants only scopes the client is registered for', async () => {
    const code = await codeFor({ scope: 'groups admin-everything' })
    const { json } = await tokenRequest({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT })
    expect(json['scope']).toBe('groups')
  })
})

describe('token endpoint: authorization code', () => {
  it('exchanges a code with HTTP Basic client authentication, with no-store caching', async () => {
    const { verifier, challenge } = verifierPair()
    const code = await codeFor({ scope: 'groups', code_challenge: challenge, code_challenge_method: 'S256' })
    const res = await tokenRequest({
      grant_type: 'authorization_code',
      code,
      redirect_uri: REDIRECT,
      client_id: 'demo-client',
      code_verifier: verifier,
    })
    expect(res.status).toBe(200)
    expect(res.headers.get('cache-control')).toBe('no-store')
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8')
    expect(res.json).toEqual({ access_token: expect.any(String), token_type: 'Bearer', expires_in: 28800, scope: 'groups' })
    expect(provider.tokens.lookup(res.json['access_token'] as string)).toMatchObject({ userId: 'alice', scopes: ['groups'] })
  })

  it('accepts client_secret_post', async () => {
    const code = await codeFor({ scope: 'groups' })
    const res = await tokenRequest(
      { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, client_id: 'demo-client', client_secret: 'demo-secret' },
      null,
    )
    expect(res.status).toBe(200)
  })

  it('decodes form-urlencoded Basic credentials (RFC 6749 section 2.3.1)', async () => {
    const data: EmulatorData = {
      ...defaultData,
      clients: [{ clientId: 'odd:id', clientSecret: 'p@ss word:+%', redirectUris: [REDIRECT] }],
    }
    const p = await startProvider(() => clock, data)
    try {
      const enc = (s: string) => encodeURIComponent(s).replace(/%20/g, '+')
      const res = await fetch(`${p.issuer}/oauth/token`, {
        method: 'POST',
        headers: { authorization: `Basic ${Buffer.from(`${enc('odd:id')}:${enc('p@ss word:+%')}`).toString('base64')}` },
        body: new URLSearchParams({ grant_type: 'client_credentials' }),
      })
      expect(res.status).toBe(200)
    } finally {
      await p.close()
    }
  })

  it('refuses a second use of a code, and revokes the token of the first', async () => {
    const code = await codeFor({ scope: 'groups' })
    const first = await tokenRequest({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT })
    expect(first.status).toBe(200)
    const second = await tokenRequest({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT })
    expect(second.status).toBe(400)
    expect(second.json).toMatchObject({ error: 'invalid_grant' })
    expect(provider.tokens.lookup(first.json['access_token'] as string)).toBeUndefined()
  })

  it('refuses an expired code (60 s)', async () => {
    const code = await codeFor({ scope: 'groups' })
    clock += 61_000
    const res = await tokenRequest({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT })
    expect(res.status).toBe(400)
    expect(res.json).toMatchObject({ error: 'invalid_grant', error_description: 'The code has expired' })
  })

  it("refuses a redirect_uri other than the authorization request's", async () => {
    const code = await codeFor({ scope: 'groups' })
    const res = await tokenRequest({ grant_type: 'authorization_code', code, redirect_uri: 'http://localhost:3000/callback' })
    expect(res.json).toMatchObject({ error: 'invalid_grant' })
    const none = await tokenRequest({ grant_type: 'authorization_code', code: await codeFor({}) })
    expect(none.json).toMatchObject({ error: 'invalid_grant' })
  })

  it('verifies PKCE: a wrong or missing verifier is refused, and so is a verifier without challenge', async () => {
    const { challenge } = verifierPair()
    const pkce = { code_challenge: challenge, code_challenge_method: 'S256' }
    const wrong = await tokenRequest({
      grant_type: 'authorization_code',
      code: await codeFor(pkce),
      redirect_uri: REDIRECT,
      code_verifier: verifierPair().verifier,
    })
    expect(wrong.json).toMatchObject({ error: 'invalid_grant' })
    const missing = await tokenRequest({ grant_type: 'authorization_code', code: await codeFor(pkce), redirect_uri: REDIRECT })
    expect(missing.json).toMatchObject({ error: 'invalid_grant' })
    const unasked = await tokenRequest({
      grant_type: 'authorization_code',
      code: await codeFor({}),
      redirect_uri: REDIRECT,
      code_verifier: verifierPair().verifier,
    })
    expect(unasked.json).toMatchObject({ error: 'invalid_grant' })
  })

  it('refuses a code issued to another client', async () => {
    const code = await codeFor({ scope: 'groups' })
    const other = `Basic ${Buffer.from('demo-service:demo-service-secret').toString('base64')}`
    const res = await tokenRequest({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT }, other)
    expect(res.json).toMatchObject({ error: 'invalid_grant' })
  })

  it('issues an RS256 ID token with iss, sub, aud, exp, iat, auth_time, nonce and at_hash for scope openid', async () => {
    const code = await codeFor({ scope: 'openid groups', nonce: 'n-0S6_WzA2Mj' })
    const { json } = await tokenRequest({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT })
    const [header, payload] = String(json['id_token'])
      .split('.')
      .slice(0, 2)
      .map((part) => JSON.parse(Buffer.from(part, 'base64url').toString()) as Record<string, unknown>)
    expect(header).toMatchObject({ alg: 'RS256', kid: expect.any(String) })
    const now = Math.floor(clock / 1000)
    expect(payload).toMatchObject({
      iss: provider.issuer,
      sub: 'alice',
      aud: 'demo-client',
      iat: now,
      exp: now + 600,
      auth_time: now,
      nonce: 'n-0S6_WzA2Mj',
      at_hash: createHash('sha256').update(String(json['access_token'])).digest().subarray(0, 16).toString('base64url'),
    })
  })
})

describe('token endpoint: errors and client credentials', () => {
  it.each([
    ['a wrong secret', `Basic ${Buffer.from('demo-client:wrong').toString('base64')}`],
    ['an unknown client', `Basic ${Buffer.from('nobody:demo-secret').toString('base64')}`],
    ['garbage Basic credentials', 'Basic !!!'],
  ])('answers 401 invalid_client with a Basic challenge for %s', async (_case, authorization) => {
    const res = await tokenRequest({ grant_type: 'client_credentials' }, authorization)
    expect(res.status).toBe(401)
    expect(res.json).toMatchObject({ error: 'invalid_client', error_description: expect.any(String) })
    expect(res.headers.get('www-authenticate')).toMatch(/^Basic realm=/)
    expect(res.headers.get('cache-control')).toBe('no-store')
  })

  it('answers 401 invalid_client without any client authentication', async () => {
    const res = await tokenRequest({ grant_type: 'client_credentials', client_id: 'demo-client' }, null)
    expect(res.status).toBe(401)
    expect(res.json).toMatchObject({ error: 'invalid_client' })
  })

  it('answers 400 invalid_request for two authentication methods at once, a repeated parameter or a wrong content type', async () => {
    expect(
      (await tokenRequest({ grant_type: 'client_credentials', client_id: 'demo-client', client_secret: 'demo-secret' })).json,
    ).toMatchObject({ error: 'invalid_request' })
    const repeated = await fetch(`${provider.issuer}/oauth/token`, {
      method: 'POST',
      headers: { authorization: BASIC, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=client_credentials&grant_type=authorization_code',
    })
    expect(repeated.status).toBe(400)
    expect(await repeated.json()).toMatchObject({ error: 'invalid_request' })
    const json = await fetch(`${provider.issuer}/oauth/token`, {
      method: 'POST',
      headers: { authorization: BASIC, 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: 'client_credentials' }),
    })
    expect(json.status).toBe(400)
  })

  it('answers unsupported_grant_type, and 405 to GET', async () => {
    expect((await tokenRequest({ grant_type: 'password', username: 'alice', password: 'x' })).json).toMatchObject({
      error: 'unsupported_grant_type',
    })
    const get = await fetch(`${provider.issuer}/oauth/token`)
    expect(get.status).toBe(405)
    expect(get.headers.get('allow')).toBe('POST')
  })

  it('issues a client-only token for client credentials, without openid', async () => {
    const res = await tokenRequest({ grant_type: 'client_credentials', scope: 'openid groups' })
    expect(res.status).toBe(200)
    expect(res.json).toEqual({ access_token: expect.any(String), token_type: 'Bearer', expires_in: 28800, scope: 'groups' })
    const record = provider.tokens.lookup(res.json['access_token'] as string)
    expect(record?.userId).toBeUndefined()
    expect(record?.clientId).toBe('demo-client')
  })
})

describe('userinfo', () => {
  it('answers the OpenID Connect claims at /openid/userinfo and the spec shape at /userinfo', async () => {
    const token = provider.tokens.issue({ userId: 'alice', clientId: 'demo-client', scopes: ['openid', 'groups'], expiresIn: 60 })
    const headers = { authorization: `Bearer ${token}` }
    const oidc = await fetch(`${provider.issuer}/openid/userinfo`, { headers })
    expect(oidc.status).toBe(200)
    expect(await oidc.json()).toEqual({ sub: 'alice', name: 'Alice Hansen', email: 'alice@example.org' })
    const spec = await fetch(`${provider.issuer}/userinfo`, { headers })
    expect(await spec.json()).toEqual({
      sub: 'alice',
      name: 'Alice Hansen',
      email: 'alice@example.org',
      user: { userid: 'alice', name: 'Alice Hansen', email: 'alice@example.org' },
      audience: 'demo-client',
    })
    const post = await fetch(`${provider.issuer}/openid/userinfo`, { method: 'POST', headers })
    expect(post.status).toBe(200)
  })

  it('answers 401 with a Bearer challenge without a token, and with invalid_token for a bad one', async () => {
    const none = await fetch(`${provider.issuer}/userinfo`)
    expect(none.status).toBe(401)
    expect(none.headers.get('www-authenticate')).toBe('Bearer realm="voot-guard-emulator"')
    for (const path of ['/userinfo', '/openid/userinfo']) {
      const bad = await fetch(`${provider.issuer}${path}`, { headers: { authorization: 'Bearer not-a-token' } })
      expect(bad.status).toBe(401)
      expect(bad.headers.get('www-authenticate')).toMatch(/error="invalid_token"/)
    }
  })

  it('answers 403 insufficient_scope for a client-only token, and for a token without openid at /openid/userinfo', async () => {
    const client = provider.tokens.issue({ clientId: 'demo-client', scopes: ['groups'], expiresIn: 60 })
    const res = await fetch(`${provider.issuer}/userinfo`, { headers: { authorization: `Bearer ${client}` } })
    expect(res.status).toBe(403)
    expect(res.headers.get('www-authenticate')).toMatch(/error="insufficient_scope"/)
    const noOpenid = provider.tokens.issue({ userId: 'bob', clientId: 'demo-client', scopes: ['groups'], expiresIn: 60 })
    expect((await fetch(`${provider.issuer}/openid/userinfo`, { headers: { authorization: `Bearer ${noOpenid}` } })).status).toBe(403)
    expect((await fetch(`${provider.issuer}/userinfo`, { headers: { authorization: `Bearer ${noOpenid}` } })).status).toBe(200)
  })
})
