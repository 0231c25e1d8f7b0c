/**
 * HAProxy (Debian's 2.6, built with Lua) in front of a plain node:http app, asking the gate
 * about every request through examples/gate/voot-gate.lua with examples/gate/haproxy.cfg, as
 * docs/gate.md shows them: bearer requests, a browser sent to sign in and the sign-in paths
 * on the app's host, the statuses of DESIGN section 6 as the client sees them (including 503
 * with Retry-After while the group service, or the gate itself, is down or hangs), the host
 * HAProxy routed by, and hostile requests.
 */
import { existsSync } from 'node:fs'
import { createServer, type Socket } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Emulator } from '../../testing/index.js'
import type { GateServer } from '../../gate/index.js'
import { gatePort, startGateEmulator, startTestGate, testGateConfig } from './support/gate-harness.js'
import { exchange, HAPROXY, startHaproxy } from './support/haproxy.js'
import { needBinary, startEchoApp, type RunningProxy } from './support/proxies.js'
import { appSaw, send } from './support/raw-request.js'

let emulator: Emulator
let gate: GateServer
let app: Awaited<ReturnType<typeof startEchoApp>>
let haproxy: RunningProxy | undefined

beforeAll(async () => {
  emulator = await startGateEmulator()
  gate = await startTestGate(testGateConfig(emulator))
  app = await startEchoApp()
  if (existsSync(HAPROXY)) haproxy = await startHaproxy({ gatePort: gatePort(gate), appPort: app.port })
}, 30_000)

/**
 * An HAProxy of one test's own, stopped by the test, and again after all (a test that times
 * out never reaches its `finally`, and a HAProxy left running outlives the test process).
 */
const started: RunningProxy[] = []
async function ownHaproxy(...args: Parameters<typeof startHaproxy>): Promise<RunningProxy> {
  const running = await startHaproxy(...args)
  started.push(running)
  return running
}

afterAll(async () => {
  for (const running of started) await running.stop()
  await haproxy?.stop()
  await gate?.close()
  await app?.close()
  await emulator?.close()
})

const bearer = (token: string) => ({ authorization: `Bearer ${token}` })

describe('HAProxy with the voot-gate Lua action in front of a plain app', () => {
  it('lets a member through with the gate headers, and the app sees who', async (ctx) => {
    needBinary(ctx, HAPROXY)
    const answer = await send(haproxy!.url, '/admin/reports?year=2026', { headers: bearer(emulator.issueToken('alice')) })
    expect(answer.status).toBe(200)
    const saw = appSaw(answer)
    expect(saw.url).toBe('/admin/reports?year=2026')
    expect(saw.headers['x-voot-user']).toBe('alice')
    expect(saw.headers['x-voot-rule']).toBe('admin')
    // The app gets the client's credentials as sent; the gate's own answer headers do not leak.
    expect(saw.headers.authorization).toMatch(/^Bearer /)
  })

  it('answers 403 with the gate’s body to a non-member (never 401), and the app sees nothing', async (ctx) => {
    needBinary(ctx, HAPROXY)
    const before = app.seen.length
    const answer = await send(haproxy!.url, '/admin/reports', { headers: bearer(emulator.issueToken('bob')) })
    expect(answer.status).toBe(403)
    expect(answer.headers['content-type']).toMatch(/^application\/json/)
    expect(JSON.parse(answer.body)).toMatchObject({ error: 'forbidden' })
    expect(app.seen.length).toBe(before)
  })

  it('answers 401 with the Bearer challenge to an API client without a token', async (ctx) => {
    needBinary(ctx, HAPROXY)
    const answer = await send(haproxy!.url, '/admin/reports', { headers: { accept: 'application/json' } })
    expect(answer.status).toBe(401)
    expect(answer.headers['www-authenticate']).toBe('Bearer realm="voot-gate"')
    expect(answer.headers.location).toBeUndefined()
  })

  it('answers 401 invalid_token for a revoked token, never sending the token back', async (ctx) => {
    needBinary(ctx, HAPROXY)
    const token = emulator.issueToken('alice')
    emulator.revokeToken(token)
    const answer = await send(haproxy!.url, '/admin/reports', { headers: bearer(token) })
    expect(answer.status).toBe(401)
    expect(answer.headers['www-authenticate']).toBe('Bearer realm="voot-gate", error="invalid_token"')
    expect(JSON.stringify(answer)).not.toContain(token)
  })

  it('sends a browser without a session to sign in, back to where it was going', async (ctx) => {
    needBinary(ctx, HAPROXY)
    const answer = await send(haproxy!.url, '/wiki/page?x=1', { headers: { accept: 'text/html,application/xhtml+xml' } })
    expect(answer.status).toBe(302)
    const back = `${haproxy!.url}/wiki/page?x=1`
    expect(answer.headers.location).toBe(`${haproxy!.url}/_gate/signin?rd=${encodeURIComponent(back)}`)
    expect(answer.headers['cache-control']).toBe('no-store')
  })

  it('serves sign-in, callback and sign-out from the gate on the app’s host', async (ctx) => {
    needBinary(ctx, HAPROXY)
    const before = app.seen.length
    const back = `${haproxy!.url}/wiki/page`
    // A client's own X-Forwarded-* are replaced: the gate believes HAProxy's (a trusted peer).
    const signin = await send(haproxy!.url, `/_gate/signin?rd=${encodeURIComponent(back)}`, {
      headers: { accept: 'text/html', 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'https' },
    })
    expect(signin.status).toBe(302)
    const authorize = new URL(signin.headers.location as string)
    expect(`${authorize.origin}${authorize.pathname}`).toBe(`${emulator.authUrl}/oauth/authorization`)
    // The callback the gate registers is on the host the browser used (X-Forwarded-Host).
    expect(authorize.searchParams.get('redirect_uri')).toBe(`${haproxy!.url}/_gate/callback`)
    expect(String(signin.headers['set-cookie'])).toContain('voot-gate-signin=')
    // A callback without the sign-in's state: the gate's 400, not the app.
    const callback = await send(haproxy!.url, '/_gate/callback?code=x&state=y')
    expect(callback.status).toBe(400)
    // Sign-out is the gate's (a POST from another origin is refused there).
    const signout = await send(haproxy!.url, '/_gate/signout', { method: 'POST', headers: { origin: 'https://evil.example' } })
    expect(signout.status).toBe(403)
    expect(app.seen.length).toBe(before)
  })

  it('answers 503 with Retry-After while the group service is down, never 401, 403 or the app', async (ctx) => {
    needBinary(ctx, HAPROXY)
    // A gate of its own: a 429 backs off every cold lookup of its resolver for the time given.
    const ownGate = await startTestGate(testGateConfig(emulator))
    const ownProxy = await ownHaproxy({ gatePort: gatePort(ownGate), appPort: app.port })
    const before = app.seen.length
    try {
      const reset = emulator.faults.add({ kind: 'reset' })
      const down = await send(ownProxy.url, '/anything', { headers: bearer(emulator.issueToken('carol')) })
      emulator.faults.remove(reset)
      expect(down.status).toBe(503)
      expect(down.headers['retry-after']).toBe('5')
      // The gate's Retry-After (here the time left of a 429's) is what the client gets.
      const limited = emulator.faults.add({ kind: 'status', status: 429, headers: { 'retry-after': '30' } }, { times: 1 })
      const answer = await send(ownProxy.url, '/admin/reports', { headers: bearer(emulator.issueToken('alice')) })
      emulator.faults.remove(limited)
      expect(answer.status).toBe(503)
      expect(Number(answer.headers['retry-after'])).toBeGreaterThan(25)
      expect(app.seen.length).toBe(before)
    } finally {
      await ownProxy.stop()
      await ownGate.close()
    }
  })

  it('answers 503 with Retry-After when the gate itself cannot be reached', async (ctx) => {
    needBinary(ctx, HAPROXY)
    const other = await ownHaproxy({ gatePort: 1, appPort: app.port })
    const before = app.seen.length
    try {
      const answer = await send(other.url, '/admin/reports', { headers: bearer(emulator.issueToken('alice')) })
      expect(answer.status).toBe(503)
      expect(answer.headers['retry-after']).toBe('5')
      expect(app.seen.length).toBe(before)
    } finally {
      await other.stop()
    }
  })

  it('answers 503 with Retry-After, in bounded time, when the gate accepts and never answers', async (ctx) => {
    needBinary(ctx, HAPROXY)
    const sockets = new Set<Socket>()
    const silent = createServer((socket) => {
      sockets.add(socket)
      socket.on('error', () => {})
    })
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve))
    const port = (silent.address() as { port: number }).port
    // 300 ms a try; HAProxy 2.6's httpclient tries 4 times.
    const other = await ownHaproxy({ gatePort: port, appPort: app.port }, { tryTimeout: 300 })
    const before = app.seen.length
    try {
      const started = Date.now()
      const answer = await send(other.url, '/admin/reports', { headers: bearer(emulator.issueToken('alice')) })
      expect(answer.status).toBe(503)
      expect(answer.headers['retry-after']).toBe('5')
      expect(Date.now() - started).toBeLessThan(4_000)
      expect(app.seen.length).toBe(before)
    } finally {
      await other.stop()
      for (const socket of sockets) socket.destroy()
      await new Promise((resolve) => silent.close(resolve))
    }
  })

  it('answers 503 when the per-try timeout is no number, rather than wait without end', async (ctx) => {
    needBinary(ctx, HAPROXY)
    const other = await ownHaproxy({ gatePort: gatePort(gate), appPort: app.port }, { tryTimeout: '6s' })
    const before = app.seen.length
    try {
      const answer = await send(other.url, '/public/page')
      expect(answer.status).toBe(503)
      expect(answer.headers['retry-after']).toBe('5')
      expect(app.seen.length).toBe(before)
    } finally {
      await other.stop()
    }
  })

  it('answers 503 when the action fails, never letting the request through (the config’s last word)', async (ctx) => {
    needBinary(ctx, HAPROXY)
    // A script whose action raises an error before it decides anything: HAProxy logs it and
    // goes on with the next rule, which must be the config's refusal.
    const broken = 'core.register_action("voot-gate", { "http-req" }, function(txn, gate, timeout) error("broken") end, 2)\n'
    const other = await ownHaproxy({ gatePort: gatePort(gate), appPort: app.port }, { script: broken })
    const before = app.seen.length
    try {
      const answer = await send(other.url, '/public/page', { headers: bearer(emulator.issueToken('alice')) })
      expect(answer.status).toBe(503)
      expect(answer.headers['retry-after']).toBe('5')
      expect(app.seen.length).toBe(before)
    } finally {
      await other.stop()
    }
  })

  it('asks about the request’s own method: a POST is judged as a POST', async (ctx) => {
    needBinary(ctx, HAPROXY)
    const before = app.seen.length
    // courses allows GET and HEAD to course members (bob); a POST falls to the signed-in rule.
    const student = bearer(emulator.issueToken('bob'))
    const get = await send(haproxy!.url, '/courses/INF1000', { headers: student })
    expect(appSaw(get).headers['x-voot-rule']).toBe('courses')
    const post = await send(haproxy!.url, '/courses/INF1000', { method: 'POST', headers: student })
    expect(post.status).toBe(200)
    expect(appSaw(post).method).toBe('POST')
    expect(appSaw(post).headers['x-voot-rule']).toBe('signed-in')
    const head = await send(haproxy!.url, '/admin/x', { method: 'HEAD', headers: bearer(emulator.issueToken('bob')) })
    expect(head.status).toBe(403)
    expect(head.body).toBe('')
    expect(app.seen.length).toBe(before + 2)
  })

  it('lets anyone through a public rule, and a client-sent identity header never reaches the app', async (ctx) => {
    needBinary(ctx, HAPROXY)
    const spoof = { 'x-voot-user': 'mallory', 'x-voot-rule': 'admin', 'x-voot-service': 'surf' }
    const open = await send(haproxy!.url, '/public/page', { headers: spoof })
    expect(open.status).toBe(200)
    expect(appSaw(open).headers['x-voot-user']).toBeUndefined()
    expect(appSaw(open).headers['x-voot-rule']).toBe('public')
    const signed = await send(haproxy!.url, '/admin/page', { headers: { ...spoof, ...bearer(emulator.issueToken('alice')) } })
    expect(signed.status).toBe(200)
    expect(appSaw(signed).headers['x-voot-user']).toBe('alice')
    // One group service: the service is empty, and a client's own copy never reaches the app.
    expect(appSaw(signed).headers['x-voot-service'] ?? '').toBe('')
    expect(appSaw(open).headers['x-voot-service'] ?? '').toBe('')
    expect(appSaw(signed).headers['x-voot-rule']).toBe('admin')
    // Several of them, in another case: all removed.
    const many = await send(haproxy!.url, '/public/page', { headers: { 'X-VOOT-USER': ['mallory', 'eve'] } })
    expect(appSaw(many).headers['x-voot-user']).toBeUndefined()
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
  ] as const)('refuses %s (%s) with 403 before the app sees it', async ([path], ctx) => {
    needBinary(ctx, HAPROXY)
    const before = app.seen.length
    const answer = await send(haproxy!.url, path, { headers: bearer(emulator.issueToken('alice')) })
    // HAProxy passes them all on as sent (its path fetch is raw): the gate refuses each.
    expect(answer.status).toBe(403)
    expect(app.seen.length).toBe(before)
  })

  it('ignores a client-sent X-Original-URL: the action sets its own', async (ctx) => {
    needBinary(ctx, HAPROXY)
    const answer = await send(haproxy!.url, '/admin/reports', {
      headers: { 'x-original-url': `${haproxy!.url}/public/x`, 'x-original-method': 'GET', ...bearer(emulator.issueToken('bob')) },
    })
    expect(answer.status).toBe(403)
  })

  it('judges the host HAProxy routed by: another host, two Host headers or a mismatched URI never reach the app', async (ctx) => {
    needBinary(ctx, HAPROXY)
    const before = app.seen.length
    const token = emulator.issueToken('alice')
    const other = await send(haproxy!.url, '/public/page', { headers: { host: 'wiki.example.org' } })
    expect(other.status).toBe(404)
    // HAProxy's ACLs match any occurrence of a header, but HAProxy 2.6 itself refuses two
    // different Host headers (and keeps one of two equal ones); no Host names no app.
    const self = `127.0.0.1:${haproxy!.port}`
    for (const head of [
      `GET /public/page HTTP/1.1\r\nHost: ${self}\r\nHost: wiki.example.org\r\n\r\n`,
      `GET /public/page HTTP/1.1\r\nHost: wiki.example.org\r\nHost: ${self}\r\n\r\n`,
    ]) {
      expect(await exchange(haproxy!.port, head), head).toMatch(/^HTTP\/1\.1 400 /)
    }
    expect(await exchange(haproxy!.port, 'GET /public/page HTTP/1.0\r\n\r\n')).toMatch(/^HTTP\/1\.1 404 /)
    // An absolute URI naming another host than Host: HAProxy refuses it itself.
    const absolute = await send(haproxy!.url, 'http://wiki.example.org/public/page', { headers: { host: `127.0.0.1:${haproxy!.port}` } })
    expect(absolute.status).toBe(400)
    expect(app.seen.length).toBe(before)
    // The same host in another case and with the port: the app's, judged as such.
    const upper = await send(haproxy!.url, '/admin/x', { headers: { host: `127.0.0.1:${haproxy!.port}`, ...bearer(token) } })
    expect(upper.status).toBe(200)
    expect(appSaw(upper).headers['x-voot-rule']).toBe('admin')
  })

  it('does not serve the gate’s check endpoints to the public', async (ctx) => {
    needBinary(ctx, HAPROXY)
    for (const path of ['/_gate/auth-request', '/_gate/metrics', '/_gate/forward-auth', '/_gate/healthz', '/_gate/signin/']) {
      const answer = await send(haproxy!.url, path, { headers: bearer(emulator.issueToken('alice')) })
      expect(answer.status, path).toBe(404)
    }
  })
})
