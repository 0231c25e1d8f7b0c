/**
 * Sessions and the browser endpoints, without a browser: sealed cookies (forged, truncated,
 * stale, for another name, under a retired or an unknown secret), the open-redirect checks
 * of `rd`, the callback's refusals and sign-out's Origin check and fleet-wide invalidation.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Emulator } from '../../testing/index.js'
import type { GateServer } from '../../gate/index.js'
import { createSessionCookies, type GateSession } from '../../gate/session/session.js'
import { COOKIE_SECRETS, startGateEmulator, startTestGate, testGateConfig } from './support/gate-harness.js'
import { send } from './support/raw-request.js'

let emulator: Emulator
let gate: GateServer
let origin: string

beforeAll(async () => {
  emulator = await startGateEmulator()
  gate = await startTestGate(testGateConfig(emulator, { redirectHosts: ['app.example.org'] }))
  origin = gate.url
}, 30_000)

afterAll(async () => {
  await gate?.close()
  await emulator?.close()
})

const MAX_AGE = 8 * 3_600_000
const HOST = { scheme: 'http' as const, host: '127.0.0.1' }

function session(user: string, overrides: Partial<GateSession> = {}): GateSession {
  return {
    accessToken: emulator.issueToken(user),
    expiresAt: Date.now() + 3_600_000,
    refreshToken: undefined,
    sub: user,
    issuedAt: Date.now(),
    ...overrides,
  }
}

/** A `Cookie` header for `session`, sealed as the gate would with `secrets`. */
function cookieFor(value: GateSession, secrets: readonly string[] = COOKIE_SECRETS, name?: string): string {
  const cookies = createSessionCookies({ name: undefined, secrets, maxAge: MAX_AGE }, Date.now)
  const line = cookies.writeSession(value, HOST) as string
  const pair = line.split(';')[0] as string
  return name === undefined ? pair : `${name}=${pair.slice(pair.indexOf('=') + 1)}`
}

/** The value of a session sealed, with the gate's secrets, for a cookie of another name. */
function sealedFor(name: string, value: GateSession): string {
  const cookies = createSessionCookies({ name, secrets: COOKIE_SECRETS, maxAge: MAX_AGE }, Date.now)
  const pair = (cookies.writeSession(value, HOST) as string).split(';')[0] as string
  return pair.slice(pair.indexOf('=') + 1)
}

function check(path: string, cookie: string | undefined, accept = 'text/html') {
  return send(gate.url, '/_gate/auth-request', {
    headers: {
      'x-original-url': `${origin}${path}`,
      'x-original-method': 'GET',
      accept,
      ...(cookie === undefined ? {} : { cookie }),
    },
  })
}

describe('the session cookie', () => {
  it('lets a signed-in member through, with the sub from the session', async () => {
    const answer = await check('/admin/x', cookieFor(session('alice')))
    expect(answer.status).toBe(200)
    expect(answer.headers['x-voot-user']).toBe('alice')
  })

  it('answers 403 to a signed-in non-member: never 401, so no sign-in loop', async () => {
    const answer = await check('/admin/x', cookieFor(session('bob')))
    expect(answer.status).toBe(403)
    expect(answer.headers.location).toBeUndefined()
  })

  it('opens a cookie sealed under a secret still in the list (rotation), not under one that was dropped', async () => {
    const oldOnly = cookieFor(session('alice'), [COOKIE_SECRETS[1] as string])
    expect((await check('/admin/x', oldOnly)).status).toBe(200)
    const unknown = cookieFor(session('alice'), ['a-secret-the-gate-has-never-seen-0123456789'])
    expect((await check('/admin/x', unknown)).status).toBe(401)
  })

  it('refuses forged, truncated, stale, expired and misnamed cookies as no session (401 with the sign-in location)', async () => {
    const good = cookieFor(session('alice'))
    const value = good.slice(good.indexOf('=') + 1)
    const flipped = `${value.slice(0, 20)}${value[20] === 'A' ? 'B' : 'A'}${value.slice(21)}`
    const cases: Record<string, string> = {
      forged: 'voot-gate=dGhpcyBpcyBub3QgYSBzZWFsZWQgY29va2ll',
      flipped: `voot-gate=${flipped}`,
      truncated: `voot-gate=${value.slice(0, value.length - 10)}`,
      stale: cookieFor(session('alice', { issuedAt: Date.now() - MAX_AGE - 60_000 })),
      expired: cookieFor(session('alice', { expiresAt: Date.now() - 1000 })),
      'another name': `voot-gate=${sealedFor('another-cookie', session('alice'))}`,
    }
    for (const [name, cookie] of Object.entries(cases)) {
      const answer = await check('/admin/x', cookie)
      expect(answer.status, name).toBe(401)
      expect(answer.headers.location, name).toMatch(/\/_gate\/signin\?rd=/)
    }
    expect((await check('/admin/x', good)).status).toBe(200)
  })

  it('prefers an Authorization header to the cookie', async () => {
    const answer = await send(gate.url, '/_gate/auth-request', {
      headers: {
        'x-original-url': `${origin}/admin/x`,
        'x-original-method': 'GET',
        cookie: cookieFor(session('alice')),
        authorization: `Bearer ${emulator.issueToken('bob')}`,
      },
    })
    expect(answer.status).toBe(403)
  })
})

describe('rd: no open redirect', () => {
  it.each([
    ['https://evil.example/', 'another host'],
    ['//evil.example/x', 'a protocol-relative URL'],
    ['/\\evil.example', 'a backslash'],
    ['/\r\nSet-Cookie:x=1', 'a header injection'],
    ['https://app.example.org@evil.example/', 'userinfo hiding the host'],
    ['http://app.example.org/', 'plain http to a host that is not loopback'],
    ['javascript:alert(1)', 'a script URL'],
  ])('refuses rd=%s (%s) with 400', async (rd) => {
    const answer = await send(gate.url, `/_gate/signin?rd=${encodeURIComponent(rd)}`)
    expect(answer.status).toBe(400)
    expect(answer.headers['set-cookie']).toBeUndefined()
  })

  it.each([
    ['/wiki/page?x=1', 'a relative path'],
    ['https://app.example.org/x', 'a host in redirectHosts'],
  ])('accepts rd=%s (%s): a sign-in starts', async (rd) => {
    const answer = await send(gate.url, `/_gate/signin?rd=${encodeURIComponent(rd)}`)
    expect(answer.status).toBe(302)
    const location = new URL(answer.headers.location as string)
    expect(location.origin).toBe(emulator.authUrl)
    expect(location.searchParams.get('code_challenge_method')).toBe('S256')
    const cookie = (answer.headers['set-cookie'] as string[])[0] as string
    expect(cookie).toMatch(/^voot-gate-signin=[A-Za-z0-9_-]+; Path=\/; Max-Age=600; HttpOnly; SameSite=Lax$/)
    expect(cookie).not.toContain(location.searchParams.get('state') as string)
  })
})

describe('the callback', () => {
  it('answers 400 and sets no session without the sign-in cookie, or with a wrong state', async () => {
    const none = await send(gate.url, '/_gate/callback?code=abc&state=xyz')
    expect(none.status).toBe(400)
    expect(String(none.headers['set-cookie'])).not.toMatch(/voot-gate=[^;]/)
    const started = await send(gate.url, '/_gate/signin?rd=%2F')
    const signInCookie = ((started.headers['set-cookie'] as string[])[0] as string).split(';')[0] as string
    const wrong = await send(gate.url, '/_gate/callback?code=abc&state=not-the-state', { headers: { cookie: signInCookie } })
    expect(wrong.status).toBe(400)
    expect(String(wrong.headers['set-cookie'])).not.toMatch(/(^|,)\s*voot-gate=[^;]/)
  })
})

describe('sign-out', () => {
  it('refuses a POST without a same-origin Origin, and a GET', async () => {
    const cookie = cookieFor(session('alice'))
    expect((await send(gate.url, '/_gate/signout', { method: 'POST', headers: { cookie } })).status).toBe(403)
    expect((await send(gate.url, '/_gate/signout', { method: 'POST', headers: { cookie, origin: 'https://evil.example' } })).status).toBe(
      403,
    )
    expect((await send(gate.url, '/_gate/signout', { method: 'GET', headers: { cookie, origin } })).status).toBe(405)
  })

  it('clears the cookie and drops the token’s cached answers', async () => {
    const alice = session('alice')
    const cookie = cookieFor(alice)
    expect((await check('/admin/x', cookie)).status).toBe(200)
    emulator.resetLog()
    expect((await check('/admin/x', cookie)).status).toBe(200)
    expect(emulator.count()).toBe(0)
    const out = await send(gate.url, '/_gate/signout?rd=%2Fbye', { method: 'POST', headers: { cookie, origin } })
    expect(out.status).toBe(303)
    expect(out.headers.location).toBe('/bye')
    expect(out.headers['set-cookie']).toEqual(['voot-gate=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax'])
    // A copy of the old cookie opens no more (the sign-out list), and the same token sent
    // as a bearer is asked of the group service anew (its cached answers were dropped).
    const copy = await check('/admin/x', cookie)
    expect(copy.status).toBe(401)
    expect(copy.headers.location).toMatch(/\/_gate\/signin\?rd=/)
    expect(emulator.count()).toBe(0)
    const bearer = await send(gate.url, '/_gate/auth-request', {
      headers: { 'x-original-url': `${origin}/admin/x`, 'x-original-method': 'GET', authorization: `Bearer ${alice.accessToken}` },
    })
    expect(bearer.status).toBe(200)
    expect(emulator.count()).toBeGreaterThan(0)
    // Another session of the same user is not signed out by it.
    expect((await check('/admin/x', cookieFor(session('alice')))).status).toBe(200)
  })

  it('answers 400 to a bad rd, as sign-in does, and signs out all the same', async () => {
    const cookie = cookieFor(session('alice'))
    const out = await send(gate.url, `/_gate/signout?rd=${encodeURIComponent('https://evil.example/')}`, {
      method: 'POST',
      headers: { cookie, origin },
    })
    expect(out.status).toBe(400)
    expect(out.headers.location).toBeUndefined()
    expect(out.headers['set-cookie']).toEqual(['voot-gate=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax'])
    expect((await check('/admin/x', cookie)).status).toBe(401)
  })
})

describe('the session is bound to one host and one cookie', () => {
  it('opens only on the host it was made on', async () => {
    const cookie = cookieFor(session('alice'))
    expect((await check('/admin/x', cookie)).status).toBe(200)
    // The same gate serves localhost too (no rule names a host): the copy opens nothing there.
    const elsewhere = await send(gate.url, '/_gate/auth-request', {
      headers: { 'x-original-url': `http://localhost:${new URL(origin).port}/admin/x`, 'x-original-method': 'GET', cookie },
    })
    expect(elsewhere.status).toBe(401)
  })

  it('refuses two cookies of the session’s name (one tossed in by a sibling subdomain), whichever comes first', async () => {
    const alice = cookieFor(session('alice'))
    const bob = cookieFor(session('bob'))
    expect((await check('/admin/x', `${alice}; ${bob}`)).status).toBe(401)
    expect((await check('/admin/x', `${bob}; ${alice}`)).status).toBe(401)
    expect((await check('/admin/x', `${alice}; ${alice}`)).status).toBe(401)
    expect((await check('/admin/x', `other=1; ${alice}`)).status).toBe(200)
  })
})

describe('rd with host rules: exact names only, written as the URL standard writes them', () => {
  let hosted: GateServer
  beforeAll(async () => {
    hosted = await startTestGate(
      testGateConfig(emulator, {
        rules: [
          { id: 'wiki', host: 'wiki.example.org', allow: 'signed-in' },
          { id: 'any', host: '*.example.org', allow: 'signed-in' },
        ],
        // As a rule naming 127.0.0.1 would: a known host, yet never by plain http from an https page.
        redirectHosts: ['127.0.0.1'],
      }),
    )
  })
  afterAll(() => hosted?.close())

  const from = (host: string) => ({ 'x-forwarded-proto': 'https', 'x-forwarded-host': host })
  const signIn = (rd: string, host = 'wiki.example.org') =>
    send(hosted.url, `/_gate/signin?rd=${encodeURIComponent(rd)}`, { headers: from(host) })

  it.each([
    ['https://lms.example.org/x', 'a subdomain only a wildcard rule names'],
    ['https://evil.example.com\u3002wiki.example.org/', 'an ideographic full stop (U+3002)'],
    ['https://evil.example.com%E3%80%82wiki.example.org/', 'an encoded ideographic full stop'],
    ['https://wiki\uff0eexample\uff0eorg/', 'full-width full stops'],
    ['https://wiki.example.org./x', 'a trailing dot'],
    ['https://wiki.example.org:443/x', 'a default port the URL standard drops'],
    ['http://127.0.0.1:1/', 'plain http to loopback from an https page'],
    ['https://0x7f.1/', 'an IPv4 shorthand'],
  ])('refuses rd=%s (%s) with 400', async (rd) => {
    const answer = await signIn(rd)
    expect(answer.status).toBe(400)
    expect(answer.headers['set-cookie']).toBeUndefined()
  })

  it('accepts the exact host a rule names, and plain http to loopback from plain http on loopback', async () => {
    expect((await signIn('https://wiki.example.org/x', 'lms.example.org')).status).toBe(302)
    expect((await signIn('https://lms.example.org/x', 'lms.example.org')).status).toBe(302)
    const loopback = await send(gate.url, `/_gate/signin?rd=${encodeURIComponent(`http://127.0.0.1:1/x`)}`)
    expect(loopback.status).toBe(302)
  })

  it('refuses to sign in on a host no rule names (strictHosts)', async () => {
    const answer = await signIn('/', 'evil.example.com')
    expect(answer.status).toBe(403)
    expect(answer.headers['set-cookie']).toBeUndefined()
  })
})
