/**
 * The emulator's token handling, statuses and challenges (spec/real-service-behaviour.md,
 * "Status codes and bodies"), its rate limit, and its request log.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { ADHOC_GROUP_ID, ORG_ID, PUBLIC_ADHOC_GROUP_ID, startEmulator, type Emulator } from '../../testing/index.js'

const REALM = 'Bearer realm="voot-guard-emulator"'
const INVALID_TOKEN = `${REALM}, error="invalid_token", error_description="Token is invalid"`
const enc = encodeURIComponent

async function get(url: string, authorization?: string) {
  const res = await fetch(url, { headers: authorization === undefined ? {} : { authorization }, redirect: 'manual' })
  const text = await res.text()
  return { status: res.status, headers: res.headers, text, json: text === '' ? undefined : (JSON.parse(text) as unknown) }
}

let clock = Date.parse('2026-11-21T12:00:00Z')
let emulator: Emulator

beforeAll(async () => {
  emulator = await startEmulator({ now: () => clock })
})
afterAll(async () => {
  await emulator.close()
})
afterEach(() => {
  emulator.resetLog()
})

describe('no token', () => {
  it.each([
    ['no Authorization header', undefined],
    ['a Basic header', 'Basic ZGVtby1jbGllbnQ6ZGVtby1zZWNyZXQ='],
    ['another scheme', 'Token abc'],
  ])('%s on me/* answers 401 with a bare Bearer challenge', async (_case, authorization) => {
    for (const path of ['/me/groups', `/me/groups/${enc(ORG_ID)}`]) {
      const reply = await get(`${emulator.baseUrl}${path}`, authorization)
      expect(reply.status).toBe(401)
      expect(reply.headers.get('www-authenticate')).toBe(REALM)
      expect(reply.headers.get('content-type')).toBe('application/json; charset=utf-8')
      expect(reply.json).toEqual({ message: expect.any(String) })
    }
  })

  it('is fine on the endpoints that do not need one', async () => {
    expect((await get(`${emulator.baseUrl}/grouptypes`)).status).toBe(200)
    expect((await get(`${emulator.baseUrl}/groups`)).status).toBe(200)
    expect((await get(`${emulator.baseUrl}/groups/${enc(PUBLIC_ADHOC_GROUP_ID)}`)).status).toBe(200)
  })
})

describe('invalid tokens', () => {
  it.each([
    ['unknown', 'Bearer AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'],
    ['empty', 'Bearer '],
    ['malformed', 'Bearer not a token at all'],
    ['lower-case scheme, unknown', 'bearer xyz'],
  ])('an %s token answers 401 invalid_token on every endpoint', async (_case, authorization) => {
    for (const path of ['/me/groups', `/me/groups/${enc(ORG_ID)}`, `/groups/${enc(PUBLIC_ADHOC_GROUP_ID)}`, '/groups', '/grouptypes']) {
      const reply = await get(`${emulator.baseUrl}${path}`, authorization)
      expect(reply.status).toBe(401)
      expect(reply.headers.get('www-authenticate')).toBe(INVALID_TOKEN)
      expect(reply.json).toEqual({ message: 'Token is invalid' })
    }
  })

  it('an expired token answers 401 invalid_token, by the injected clock', async () => {
    const token = emulator.issueToken('alice', { expiresIn: 60 })
    clock += 59_000
    expect((await get(`${emulator.baseUrl}/me/groups`, `Bearer ${token}`)).status).toBe(200)
    clock += 1_000
    try {
      const reply = await get(`${emulator.baseUrl}/me/groups`, `Bearer ${token}`)
      expect(reply.status).toBe(401)
      expect(reply.headers.get('www-authenticate')).toBe(INVALID_TOKEN)
    } finally {
      clock -= 60_000
    }
  })

  it('a revoked token answers 401 invalid_token', async () => {
    const token = emulator.issueToken('bob')
    expect((await get(`${emulator.baseUrl}/me/groups`, `Bearer ${token}`)).status).toBe(200)
    emulator.revokeToken(token)
    expect((await get(`${emulator.baseUrl}/me/groups`, `Bearer ${token}`)).headers.get('www-authenticate')).toBe(INVALID_TOKEN)
  })
})

describe('tokens that may not read me/*', () => {
  it('a client-only token answers 403 "This resource requires a personal token"', async () => {
    const token = emulator.issueClientToken()
    for (const path of ['/me/groups', `/me/groups/${enc(ORG_ID)}`]) {
      const reply = await get(`${emulator.baseUrl}${path}`, `Bearer ${token}`)
      expect(reply.status).toBe(403)
      expect(reply.json).toEqual({ message: 'This resource requires a personal token' })
    }
    expect((await get(`${emulator.baseUrl}/groups/${enc(PUBLIC_ADHOC_GROUP_ID)}`, `Bearer ${token}`)).status).toBe(200)
    expect((await get(`${emulator.baseUrl}/groups/${enc(ADHOC_GROUP_ID)}`, `Bearer ${token}`)).status).toBe(404)
  })

  it('a personal token without the groups scope answers 403 with error="invalid_scope"', async () => {
    const token = emulator.issueToken('alice', { scopes: ['openid', 'userid', 'profile'] })
    for (const path of ['/me/groups', `/me/groups/${enc(ORG_ID)}`]) {
      const reply = await get(`${emulator.baseUrl}${path}`, `Bearer ${token}`)
      expect(reply.status).toBe(403)
      expect(reply.headers.get('www-authenticate')).toBe(`${REALM}, error="invalid_scope"`)
      expect(reply.json).toEqual({ message: expect.any(String) })
    }
  })

  it('a split groups scope silently hides the other groups (404 on me/groups/{id})', async () => {
    const token = emulator.issueToken('alice', { scopes: ['groups-org'] })
    const list = await get(`${emulator.baseUrl}/me/groups`, `Bearer ${token}`)
    expect((list.json as { id: string }[]).map((group) => group.id)).toEqual([ORG_ID, 'fc:org:example.org:unit:AVD-U2'])
    expect((await get(`${emulator.baseUrl}/me/groups/${enc(ADHOC_GROUP_ID)}`, `Bearer ${token}`)).status).toBe(404)
    const other = emulator.issueToken('alice', { scopes: ['groups-other'] })
    expect((await get(`${emulator.baseUrl}/me/groups/${enc(ADHOC_GROUP_ID)}`, `Bearer ${other}`)).status).toBe(200)
    expect((await get(`${emulator.baseUrl}/me/groups/${enc(ORG_ID)}`, `Bearer ${other}`)).status).toBe(404)
  })
})

describe('issued tokens', () => {
  it('are opaque 32-byte base64url strings with the documented defaults', () => {
    const token = emulator.issueToken('alice')
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(emulator.tokens.lookup(token)).toEqual({
      userId: 'alice',
      clientId: 'demo-client',
      scopes: ['openid', 'userid', 'profile', 'groups'],
      expiresAt: clock + 28_800_000,
    })
    const client = emulator.issueClientToken({ clientId: 'demo-service', expiresIn: 10 })
    expect(emulator.tokens.lookup(client)).toEqual({ clientId: 'demo-service', scopes: ['groups'], expiresAt: clock + 10_000 })
  })

  it('are refused for an unknown user', () => {
    expect(() => emulator.issueToken('mallory')).toThrow(/unknown user "mallory"/)
  })
})

describe('request log', () => {
  it('records method, path as received, status, time and user, and never a token', async () => {
    const token = emulator.issueToken('bob')
    await get(`${emulator.baseUrl}/me/groups?showAll=true`, `Bearer ${token}`)
    await get(`${emulator.baseUrl}/me/groups/${enc(ORG_ID)}`, 'Bearer nope')
    await get(`${emulator.authUrl}/no-such-page?access_token=${token}&code=c0de&x=1`)
    expect(emulator.requests).toEqual([
      { method: 'GET', path: '/groups/me/groups?showAll=true', status: 200, at: clock, user: 'bob' },
      { method: 'GET', path: `/groups/me/groups/${enc(ORG_ID)}`, status: 401, at: clock },
      { method: 'GET', path: '/no-such-page?access_token=[redacted]&code=[redacted]&x=1', status: 404, at: clock },
    ])
    expect(JSON.stringify(emulator.requests)).not.toContain(token)
  })

  it('counts by exact pathname, as received or decoded, and resets', async () => {
    const token = emulator.issueToken('alice')
    await get(`${emulator.baseUrl}/me/groups`, `Bearer ${token}`)
    await get(`${emulator.baseUrl}/me/groups?showAll=true`, `Bearer ${token}`)
    await get(`${emulator.baseUrl}/me/groups/${enc(ORG_ID)}`, `Bearer ${token}`)
    await get(`${emulator.baseUrl}/v1/me/groups`, `Bearer ${token}`)
    expect(emulator.count('/groups/me/groups')).toBe(2)
    expect(emulator.count('/groups/v1/me/groups')).toBe(1)
    expect(emulator.count(`/groups/me/groups/${enc(ORG_ID)}`)).toBe(1)
    expect(emulator.count(`/groups/me/groups/${ORG_ID}`)).toBe(1)
    expect(emulator.count('/groups/me')).toBe(0)
    expect(emulator.count()).toBe(4)
    emulator.resetLog()
    expect(emulator.count()).toBe(0)
    expect(emulator.count('/groups/me/groups')).toBe(0)
    expect(emulator.requests).toEqual([])
  })
})

describe('rate limit', () => {
  let limited: Emulator
  let limitedClock = 1_000_000

  beforeAll(async () => {
    limited = await startEmulator({ rateLimit: { limit: 2, windowMs: 30_000 }, now: () => limitedClock })
  })
  afterAll(async () => {
    await limited.close()
  })

  it('answers 429 with an empty body and Retry-After past the limit, per window', async () => {
    const token = limited.issueToken('alice')
    expect((await get(`${limited.baseUrl}/me/groups`, `Bearer ${token}`)).status).toBe(200)
    expect((await get(`${limited.baseUrl}/grouptypes`)).status).toBe(200)
    const over = await get(`${limited.baseUrl}/me/groups`, `Bearer ${token}`)
    expect(over.status).toBe(429)
    expect(over.text).toBe('')
    expect(over.headers.get('content-length')).toBe('0')
    expect(over.headers.get('retry-after')).toBe('30')
    limitedClock += 20_000
    expect((await get(`${limited.baseUrl}/grouptypes`)).headers.get('retry-after')).toBe('10')
    // The authorization server is not limited.
    expect((await get(`${limited.authUrl}/no-such-page`)).status).toBe(404)
    limitedClock += 10_000
    expect((await get(`${limited.baseUrl}/me/groups`, `Bearer ${token}`)).status).toBe(200)
    expect(limited.requests.map((entry) => entry.status)).toEqual([200, 200, 429, 429, 404, 200])
  })
})

describe('the authorization server beside the group endpoints', () => {
  it('answers discovery at authUrl with authUrl as issuer, and logs the request', async () => {
    const reply = await get(`${emulator.authUrl}/.well-known/openid-configuration`)
    expect(reply.status).toBe(200)
    expect(reply.json).toMatchObject({ issuer: emulator.authUrl, token_endpoint: `${emulator.authUrl}/oauth/token` })
    expect(emulator.requests).toEqual([{ method: 'GET', path: '/.well-known/openid-configuration', status: 200, at: clock }])
  })

  it('issues tokens the group endpoints accept (client credentials: no me/*)', async () => {
    const res = await fetch(`${emulator.authUrl}/oauth/token`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from('demo-service:demo-service-secret').toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: 'grant_type=client_credentials&scope=groups',
    })
    expect(res.status).toBe(200)
    const { access_token: token } = (await res.json()) as { access_token: string }
    expect((await get(`${emulator.baseUrl}/grouptypes`, `Bearer ${token}`)).status).toBe(200)
    expect((await get(`${emulator.baseUrl}/me/groups`, `Bearer ${token}`)).json).toEqual({
      message: 'This resource requires a personal token',
    })
    expect(JSON.stringify(emulator.requests)).not.toContain(token)
  })

  it('answers 404 JSON to paths neither server knows', async () => {
    for (const path of ['/nope', '/groupsx', '//evil.example/x']) {
      const reply = await get(`${emulator.authUrl}${path}`)
      expect(reply.status).toBe(404)
      expect(reply.json).toEqual({ message: 'Requested resource was not found' })
    }
  })
})
