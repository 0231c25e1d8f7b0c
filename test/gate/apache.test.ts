/**
 * Apache httpd 2.4 (Debian's, mod_authnz_fcgi) in front of a plain node:http app and a CGI
 * script inside Apache, asking the gate (a FastCGI authorizer) about every request, with
 * examples/gate/apache.conf as docs/gate.md shows it: bearer requests, a browser sent to
 * sign in and signed in, the statuses of DESIGN section 6 as the client sees them
 * (including 503 with Retry-After while the group service is down), and hostile requests.
 */
import { existsSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Emulator } from '../../testing/index.js'
import { startGateServer, type GateServer } from '../../gate/index.js'
import { APACHE, apacheLog, startApache } from './support/apache.js'
import { gatePort, startGateEmulator, startTestGate, testGateConfig } from './support/gate-harness.js'
import { needBinary, startEchoApp, type RunningProxy } from './support/proxies.js'
import { appSaw, send, type RawAnswer } from './support/raw-request.js'

let emulator: Emulator
let gate: GateServer
let app: Awaited<ReturnType<typeof startEchoApp>>
let apache: RunningProxy | undefined

const fastcgiPort = (running: GateServer) => Number(running.fastcgi!.address.split(':').pop())
const withFastCgi = (e: Emulator) => testGateConfig(e, { fastcgi: { listen: '127.0.0.1:0' } })

async function startFor(running: GateServer, appPort: number): Promise<RunningProxy> {
  return startApache({ gatePort: gatePort(running), fastcgiPort: fastcgiPort(running), appPort })
}

beforeAll(async () => {
  emulator = await startGateEmulator()
  gate = await startTestGate(withFastCgi(emulator))
  app = await startEchoApp()
  if (existsSync(APACHE)) apache = await startFor(gate, app.port)
}, 30_000)

afterAll(async () => {
  await apache?.stop()
  await gate?.close()
  await app?.close()
  await emulator?.close()
})

const bearer = (token: string) => ({ authorization: `Bearer ${token}` })

/** What the CGI script printed: `name=value` lines, `-` for a variable it was not given. */
function cgiSaw(answer: RawAnswer): Record<string, string> {
  return Object.fromEntries(
    answer.body
      .trim()
      .split('\n')
      .map((line) => line.split(/=(.*)/s).slice(0, 2) as [string, string]),
  )
}

/** The status, with Apache's error log when it is not the one expected. */
async function expectStatus(answer: RawAnswer, status: number): Promise<void> {
  if (answer.status !== status) expect(`${answer.status}\n${answer.body}\n${await apacheLog(apache!)}`).toBe(String(status))
}

describe('Apache httpd (mod_authnz_fcgi) in front of a plain app', () => {
  it('lets a member through with the gate headers, and the app sees who', async (ctx) => {
    needBinary(ctx, APACHE)
    const answer = await send(apache!.url, '/admin/reports?year=2026', { headers: bearer(emulator.issueToken('alice')) })
    await expectStatus(answer, 200)
    const saw = appSaw(answer)
    expect(saw.url).toBe('/admin/reports?year=2026')
    expect(saw.headers['x-voot-user']).toBe('alice')
    expect(saw.headers['x-voot-rule']).toBe('admin')
  })

  it('answers 403 to a signed-in non-member (never 401) and the app sees nothing', async (ctx) => {
    needBinary(ctx, APACHE)
    const before = app.seen.length
    const answer = await send(apache!.url, '/admin/reports', { headers: bearer(emulator.issueToken('bob')) })
    await expectStatus(answer, 403)
    expect(app.seen.length).toBe(before)
  })

  it('answers 401 with the Bearer challenge to an API client without a token', async (ctx) => {
    needBinary(ctx, APACHE)
    const answer = await send(apache!.url, '/admin/reports', { headers: { accept: 'application/json' } })
    await expectStatus(answer, 401)
    expect(answer.headers['www-authenticate']).toBe('Bearer realm="voot-gate"')
    expect(answer.headers.location).toBeUndefined()
  })

  it('answers 401 invalid_token for a revoked token', async (ctx) => {
    needBinary(ctx, APACHE)
    const token = emulator.issueToken('alice')
    emulator.revokeToken(token)
    const answer = await send(apache!.url, '/admin/reports', { headers: bearer(token) })
    await expectStatus(answer, 401)
    expect(answer.headers['www-authenticate']).toBe('Bearer realm="voot-gate", error="invalid_token"')
  })

  it('sends a browser without a session to sign in, back to where it was going', async (ctx) => {
    needBinary(ctx, APACHE)
    const answer = await send(apache!.url, '/wiki/page?x=1', { headers: { accept: 'text/html,application/xhtml+xml' } })
    await expectStatus(answer, 302)
    const back = `${apache!.url}/wiki/page?x=1`
    expect(answer.headers.location).toBe(`${apache!.url}/_gate/signin?rd=${encodeURIComponent(back)}`)
  })

  it('sends a browser to sign in on the port it used, with a ServerName that names no port (issue 48)', async (ctx) => {
    needBinary(ctx, APACHE)
    // The documented snippet as an admin runs it on a port other than 80: ServerName without a port.
    expect(apache!.config).toContain('\n    ServerName 127.0.0.1\n')
    expect(apache!.config).toContain(`<VirtualHost 127.0.0.1:${apache!.port}>`)
    expect(apache!.port).not.toBe(80)
    const answer = await send(apache!.url, '/wiki/page', { headers: { accept: 'text/html' } })
    await expectStatus(answer, 302)
    const signin = new URL(answer.headers.location as string)
    expect(signin.origin).toBe(`http://127.0.0.1:${apache!.port}`)
    expect(new URL(signin.searchParams.get('rd') as string).origin).toBe(`http://127.0.0.1:${apache!.port}`)
    // And on through Apache to the OAuth server, which sends the browser back to that port.
    const started = await send(apache!.url, `${signin.pathname}${signin.search}`, { headers: { accept: 'text/html' } })
    await expectStatus(started, 302)
    const authorize = new URL(started.headers.location as string)
    expect(authorize.searchParams.get('redirect_uri')).toBe(`http://127.0.0.1:${apache!.port}/_gate/callback`)
  })

  it('signs a browser in end to end: the sign-in through Apache, the session cookie, the app sees who', async (ctx) => {
    needBinary(ctx, APACHE)
    const jar = new Map<string, string>()
    const cookieHeader = () => [...jar].map(([name, value]) => `${name}=${value}`).join('; ')
    const keep = (answer: RawAnswer) => {
      const setCookie = answer.headers['set-cookie'] ?? []
      for (const line of Array.isArray(setCookie) ? setCookie : [setCookie]) {
        const [pair = ''] = line.split(';')
        const at = pair.indexOf('=')
        if (pair.slice(at + 1) === '') jar.delete(pair.slice(0, at))
        else jar.set(pair.slice(0, at), pair.slice(at + 1))
      }
    }
    const html = { accept: 'text/html' }
    const first = await send(apache!.url, '/wiki/page', { headers: html })
    await expectStatus(first, 302)
    // The sign-in endpoint through Apache (ProxyPassMatch to the gate): to the OAuth server, with the sign-in cookie.
    const signinUrl = new URL(first.headers.location as string)
    const signin = await send(apache!.url, signinUrl.pathname + signinUrl.search, { headers: html })
    await expectStatus(signin, 302)
    keep(signin)
    const authorize = new URL(signin.headers.location as string)
    expect(authorize.href.startsWith(`${emulator.authUrl}/oauth/authorization`)).toBe(true)
    expect(authorize.searchParams.get('redirect_uri')).toBe(`${apache!.url}/_gate/callback`)
    // The emulator's consent page, approved for alice: its answer sends the browser to the callback with the code.
    const consent = await fetch(authorize)
    const requestId = /name="request_id" value="([^"]+)"/.exec(await consent.text())?.[1] ?? ''
    const approved = await fetch(authorize, {
      method: 'POST',
      body: new URLSearchParams({ request_id: requestId, user: 'alice', decision: 'approve' }),
      redirect: 'manual',
    })
    const callbackUrl = new URL(approved.headers.get('location') ?? '')
    const callback = await send(apache!.url, callbackUrl.pathname + callbackUrl.search, { headers: { ...html, cookie: cookieHeader() } })
    await expectStatus(callback, 302)
    keep(callback)
    expect(callback.headers.location).toBe(`${apache!.url}/wiki/page`)
    expect(jar.has('voot-gate')).toBe(true)
    const page = await send(apache!.url, '/wiki/page', { headers: { ...html, cookie: cookieHeader() } })
    await expectStatus(page, 200)
    expect(appSaw(page).headers['x-voot-user']).toBe('alice')
    expect(appSaw(page).headers['x-voot-rule']).toBe('signed-in')
  })

  it('answers 503 with Retry-After while the group service is down, never 500, 401 or 403', async (ctx) => {
    needBinary(ctx, APACHE)
    // A gate of its own: a 429 backs off every cold lookup of its resolver for the time given.
    const ownGate = await startTestGate(withFastCgi(emulator))
    const ownApache = await startFor(ownGate, app.port)
    try {
      const reset = emulator.faults.add({ kind: 'reset' })
      const down = await send(ownApache.url, '/anything', { headers: bearer(emulator.issueToken('carol')) })
      emulator.faults.remove(reset)
      expect(down.status).toBe(503)
      expect(down.headers['retry-after']).toBe('5')
      // The gate's Retry-After (here the time left of a 429's) is what the client gets.
      const limited = emulator.faults.add({ kind: 'status', status: 429, headers: { 'retry-after': '30' } }, { times: 1 })
      const answer = await send(ownApache.url, '/admin/reports', { headers: bearer(emulator.issueToken('alice')) })
      emulator.faults.remove(limited)
      expect(answer.status).toBe(503)
      expect(Number(answer.headers['retry-after'])).toBeGreaterThan(25)
    } finally {
      await ownApache.stop()
      await ownGate.close()
    }
  })

  it('answers 503 with Retry-After when the gate itself cannot be reached, and never lets the request through', async (ctx) => {
    needBinary(ctx, APACHE)
    const other = await startApache({ gatePort: 1, fastcgiPort: 1, appPort: app.port })
    try {
      const before = app.seen.length
      for (const method of ['GET', 'POST']) {
        const answer = await send(other.url, '/admin/reports', { method, headers: bearer(emulator.issueToken('alice')) })
        // mod_authnz_fcgi's 500, turned into the snippet's 503 by its ErrorDocument.
        expect(answer.status, method).toBe(503)
        expect(answer.headers['retry-after'], method).toBe('5')
        // Once: the page's own, not also the one the app's answers get.
        expect(
          (answer.rawHeaders ?? []).filter((name, at) => at % 2 === 0 && name.toLowerCase() === 'cache-control'),
          method,
        ).toEqual(['Cache-Control'])
        expect(answer.headers['cache-control'], method).toBe('no-store')
      }
      expect(app.seen.length).toBe(before)
    } finally {
      await other.stop()
    }
  })

  it('lets anyone through a public rule, and a client-sent identity header never reaches the app', async (ctx) => {
    needBinary(ctx, APACHE)
    const spoof = { 'x-voot-user': 'mallory', 'x-voot-rule': 'admin', 'x-voot-service': 'surf' }
    const open = await send(apache!.url, '/public/page', { headers: spoof })
    await expectStatus(open, 200)
    expect(appSaw(open).headers['x-voot-user'] ?? '').toBe('')
    expect(appSaw(open).headers['x-voot-rule']).toBe('public')
    const signed = await send(apache!.url, '/admin/page', { headers: { ...spoof, ...bearer(emulator.issueToken('alice')) } })
    await expectStatus(signed, 200)
    expect(appSaw(signed).headers['x-voot-user']).toBe('alice')
    // One group service: the service is empty, and a client's own copy never reaches the app.
    expect(appSaw(signed).headers['x-voot-service'] ?? '').toBe('')
    expect(appSaw(open).headers['x-voot-service'] ?? '').toBe('')
  })

  it('gives a CGI script inside Apache the user, never a client-sent one, also behind a RewriteRule', async (ctx) => {
    needBinary(ctx, APACHE)
    const spoof = { 'x-voot-user': 'mallory', 'x-voot-rule': 'admin' }
    const direct = await send(apache!.url, '/cgi-bin/app.sh', { headers: { ...spoof, ...bearer(emulator.issueToken('alice')) } })
    await expectStatus(direct, 200)
    expect(cgiSaw(direct)).toMatchObject({ user: 'alice', rule: 'signed-in', remote_user: 'alice' })
    // An internal redirect (a front controller's RewriteRule) keeps the answer of the request it came from.
    const pretty = await send(apache!.url, '/pretty/some/page', { headers: { ...spoof, ...bearer(emulator.issueToken('alice')) } })
    await expectStatus(pretty, 200)
    expect(cgiSaw(pretty)).toMatchObject({ user: 'alice', rule: 'signed-in', uri: '/pretty/some/page' })
    // Public: the client's header is removed, not passed on.
    const open = await send(apache!.url, '/public/../cgi-bin/app.sh', { headers: spoof })
    expect(open.status).toBe(403)
    const anonymous = await send(apache!.url, '/cgi-bin/app.sh', { headers: { ...spoof, accept: 'application/json' } })
    await expectStatus(anonymous, 401)
    expect(anonymous.body).not.toContain('mallory')
  })

  it.for([
    ['/admin/../public/x', 'a dot-dot segment'],
    ['/public/../admin/x', 'a dot-dot segment into a guarded path'],
    ['/public/%2e%2e/admin/x', 'an encoded dot-dot'],
    ['/public/%2E%2e%2fadmin', 'an encoded dot-dot and slash'],
    ['//admin/x', 'an empty segment'],
    ['/public//admin', 'an empty segment further on'],
    ['/public%2Fadmin', 'an encoded slash'],
    ['/public/%5c..%5cadmin', 'encoded backslashes'],
    ['/public/x%00', 'an encoded NUL'],
    ['/public/%252e%252e/admin', 'double encoding'],
    ['/public/%zz', 'invalid encoding'],
    ['/public;/admin', 'a path parameter'],
  ] as const)('refuses %s (%s) before the app sees it', async ([path], ctx) => {
    needBinary(ctx, APACHE)
    const before = app.seen.length
    const answer = await send(apache!.url, path, { headers: bearer(emulator.issueToken('alice')) })
    // Apache itself refuses some of them (400, 404) before asking the gate; none reaches the app.
    expect([400, 403, 404]).toContain(answer.status)
    expect(app.seen.length).toBe(before)
  })

  it('judges the host of the virtual host (its ServerName), not a Host header the client chose', async (ctx) => {
    needBinary(ctx, APACHE)
    // A rule for another host, open to anyone: a client naming that host must not get it (strictHosts off, so that
    // the host judged decides, not a refusal of unknown hosts).
    const rules = [
      { id: 'other-host', host: 'evil.example.org', allow: 'anyone' as const },
      { id: 'everything', path: '/**', allow: 'signed-in' as const },
    ]
    const ownGate = await startTestGate(testGateConfig(emulator, { fastcgi: { listen: '127.0.0.1:0' }, rules, strictHosts: false }))
    const ownApache = await startFor(ownGate, app.port)
    try {
      const before = app.seen.length
      const named = await send(ownApache.url, '/x', { headers: { host: 'evil.example.org', accept: 'application/json' } })
      expect(named.status).toBe(401)
      expect(app.seen.length).toBe(before)
      const signed = await send(ownApache.url, '/x', { headers: { host: 'evil.example.org', ...bearer(emulator.issueToken('bob')) } })
      await expectStatus(signed, 200)
      expect(appSaw(signed).headers['x-voot-rule']).toBe('everything')
    } finally {
      await ownApache.stop()
      await ownGate.close()
    }
  })

  it('passes the sign-in endpoints the scheme Apache served, not one a client claims', async (ctx) => {
    needBinary(ctx, APACHE)
    const answer = await send(apache!.url, '/_gate/signin?rd=%2F', {
      headers: { accept: 'text/html', 'x-forwarded-proto': 'https', 'x-forwarded-host': 'evil.example.org' },
    })
    await expectStatus(answer, 302)
    expect(new URL(answer.headers.location as string).searchParams.get('redirect_uri')).toBe(`${apache!.url}/_gate/callback`)
  })

  it('does not serve the gate’s other endpoints, nor the 503 page, to the public', async (ctx) => {
    needBinary(ctx, APACHE)
    for (const path of ['/_gate/auth-request', '/_gate/metrics', '/_gate/forward-auth', '/_gate/readyz']) {
      const answer = await send(apache!.url, path, { headers: bearer(emulator.issueToken('alice')) })
      expect(answer.status, path).toBe(404)
    }
    // The 503 page is the ErrorDocument of a gate Apache cannot reach, not a page of its own.
    for (const method of ['GET', 'POST']) {
      const answer = await send(apache!.url, '/_gate_unavailable', { method })
      expect(answer.status, method).toBe(403)
      expect(answer.body, method).not.toContain('Retry-After')
    }
    // Nor the forbidden page, which is the ErrorDocument of the gate's 403s only.
    const page = await send(apache!.url, '/_gate_forbidden', { headers: { ...bearer(emulator.issueToken('bob')), accept: 'text/html' } })
    expect(page.status).toBe(403)
    expect(page.body).not.toContain('You do not have access')
  })
})

describe('Apache httpd: one check, one log line', () => {
  it("writes one decision-log line and one count for a refused browser's request and its forbidden page, with Apache's UNIQUE_ID", async (ctx) => {
    needBinary(ctx, APACHE)
    const lines: string[] = []
    const output = { stdout: { write: (text: string) => lines.push(text) }, stderr: { write: () => true } }
    const logged = await startGateServer(testGateConfig(emulator, { fastcgi: { listen: '127.0.0.1:0' }, log: { decisions: 'stdout' } }), {
      logger: { warn: () => {} },
      output,
      port: 0,
      fastcgiPort: 0,
    })
    const ownApache = await startFor(logged, app.port)
    try {
      // A browser with a token (bob, not an admin): the 403, then Apache's ErrorDocument asks the gate's page.
      const answer = await send(ownApache.url, '/admin/reports', {
        headers: { ...bearer(emulator.issueToken('bob')), accept: 'text/html', 'x-request-id': 'chosen-by-the-client' },
      })
      await expectStatus(answer, 403)
      expect(answer.body).toContain('You do not have access to this page')
      const decisions = lines.map((line) => JSON.parse(line) as { protocol: string; outcome: string; requestId: string | null })
      expect(decisions.map(({ protocol, outcome }) => [protocol, outcome])).toEqual([['fastcgi', 'deny']])
      // mod_unique_id's id of the request, not the client's.
      expect(decisions[0]?.requestId).toMatch(/^[A-Za-z0-9@_-]{19,}$/)
      expect(decisions[0]?.requestId).not.toBe('chosen-by-the-client')
      const metrics = (await send(logged.url, '/_gate/metrics')).body
      expect(metrics).toContain('voot_gate_checks_total{endpoint="fastcgi",status="403"} 1\n')
      expect(metrics).not.toContain('endpoint="forward-auth"')
    } finally {
      await ownApache.stop()
      await logged.close()
    }
  })
})
