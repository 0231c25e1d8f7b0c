/**
 * nginx (Debian's, with auth_request) in front of a plain node:http app, asking the gate
 * about every request, with examples/gate/nginx.conf as docs/gate.md shows it: bearer
 * requests, the statuses of DESIGN section 6 as the client sees them (including 503 with
 * Retry-After while the group service is down), and hostile requests.
 */
import { existsSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ORG_ID, type Emulator } from '../../testing/index.js'
import type { GateServer } from '../../gate/index.js'
import { gatePort, startGateEmulator, startTestGate, testGateConfig } from './support/gate-harness.js'
import { needBinary, NGINX, startEchoApp, startNginx, type RunningProxy } from './support/proxies.js'
import { ATTACK_PATHS } from './support/attack-paths.js'
import { appSaw, send, sendRaw } from './support/raw-request.js'

let emulator: Emulator
let gate: GateServer
let app: Awaited<ReturnType<typeof startEchoApp>>
let nginx: RunningProxy | undefined

beforeAll(async () => {
  emulator = await startGateEmulator()
  gate = await startTestGate(testGateConfig(emulator))
  app = await startEchoApp()
  if (existsSync(NGINX)) nginx = await startNginx({ gatePort: gatePort(gate), appPort: app.port })
}, 30_000)

afterAll(async () => {
  await nginx?.stop()
  await gate?.close()
  await app?.close()
  await emulator?.close()
})

const bearer = (token: string) => ({ authorization: `Bearer ${token}` })

describe('nginx auth_request in front of a plain app', () => {
  it('lets a member through with the gate headers, and the app sees who', async (ctx) => {
    needBinary(ctx, NGINX)
    const answer = await send(nginx!.url, '/admin/reports?year=2026', { headers: bearer(emulator.issueToken('alice')) })
    expect(answer.status).toBe(200)
    const saw = appSaw(answer)
    expect(saw.url).toBe('/admin/reports?year=2026')
    expect(saw.headers['x-voot-user']).toBe('alice')
    expect(saw.headers['x-voot-rule']).toBe('admin')
  })

  it('answers 403 to a signed-in non-member (never 401) and the app sees nothing', async (ctx) => {
    needBinary(ctx, NGINX)
    const before = app.seen.length
    const answer = await send(nginx!.url, '/admin/reports', { headers: bearer(emulator.issueToken('bob')) })
    expect(answer.status).toBe(403)
    expect(app.seen.length).toBe(before)
  })

  it('answers 401 with the Bearer challenge to an API client without a token', async (ctx) => {
    needBinary(ctx, NGINX)
    const answer = await send(nginx!.url, '/admin/reports', { headers: { accept: 'application/json' } })
    expect(answer.status).toBe(401)
    expect(answer.headers['www-authenticate']).toBe('Bearer realm="voot-gate"')
    expect(answer.headers.location).toBeUndefined()
  })

  it('answers 401 invalid_token for a revoked token', async (ctx) => {
    needBinary(ctx, NGINX)
    const token = emulator.issueToken('alice')
    emulator.revokeToken(token)
    const answer = await send(nginx!.url, '/admin/reports', { headers: bearer(token) })
    expect(answer.status).toBe(401)
    expect(answer.headers['www-authenticate']).toBe('Bearer realm="voot-gate", error="invalid_token"')
  })

  it('sends a browser without a session to sign in, back to where it was going', async (ctx) => {
    needBinary(ctx, NGINX)
    const answer = await send(nginx!.url, '/wiki/page?x=1', { headers: { accept: 'text/html,application/xhtml+xml' } })
    expect(answer.status).toBe(302)
    const back = `${nginx!.url}/wiki/page?x=1`
    expect(answer.headers.location).toBe(`${nginx!.url}/_gate/signin?rd=${encodeURIComponent(back)}`)
  })

  it('answers 503 with Retry-After while the group service is down, never 500, 401 or 403', async (ctx) => {
    needBinary(ctx, NGINX)
    // A gate of its own: a 429 backs off every cold lookup of its resolver for the time given.
    const ownGate = await startTestGate(testGateConfig(emulator))
    const ownNginx = await startNginx({ gatePort: gatePort(ownGate), appPort: app.port })
    try {
      const reset = emulator.faults.add({ kind: 'reset' })
      const down = await send(ownNginx.url, '/anything', { headers: bearer(emulator.issueToken('carol')) })
      emulator.faults.remove(reset)
      expect(down.status).toBe(503)
      expect(down.headers['retry-after']).toBe('5')
      // The gate's Retry-After (here the time left of a 429's) is what the client gets.
      const limited = emulator.faults.add({ kind: 'status', status: 429, headers: { 'retry-after': '30' } }, { times: 1 })
      const answer = await send(ownNginx.url, '/admin/reports', { headers: bearer(emulator.issueToken('alice')) })
      emulator.faults.remove(limited)
      expect(answer.status).toBe(503)
      expect(Number(answer.headers['retry-after'])).toBeGreaterThan(25)
    } finally {
      await ownNginx.stop()
      await ownGate.close()
    }
  })

  it('answers 503 with Retry-After when the gate itself cannot be reached', async (ctx) => {
    needBinary(ctx, NGINX)
    const other = await startNginx({ gatePort: 1, appPort: app.port })
    try {
      const answer = await send(other.url, '/admin/reports', { headers: bearer(emulator.issueToken('alice')) })
      expect(answer.status).toBe(503)
      expect(answer.headers['retry-after']).toBe('5')
    } finally {
      await other.stop()
    }
  })

  it('lets anyone through a public rule, and a client-sent identity header never reaches the app', async (ctx) => {
    needBinary(ctx, NGINX)
    const spoof = { 'x-voot-user': 'mallory', 'x-voot-rule': 'admin', 'x-voot-service': 'surf' }
    const open = await send(nginx!.url, '/public/page', { headers: spoof })
    expect(open.status).toBe(200)
    expect(appSaw(open).headers['x-voot-user']).toBeUndefined()
    expect(appSaw(open).headers['x-voot-rule']).toBe('public')
    const signed = await send(nginx!.url, '/admin/page', { headers: { ...spoof, ...bearer(emulator.issueToken('alice')) } })
    expect(signed.status).toBe(200)
    expect(appSaw(signed).headers['x-voot-user']).toBe('alice')
    // One group service: the service is empty, and a client's own copy never reaches the app.
    expect(appSaw(signed).headers['x-voot-service'] ?? '').toBe('')
    expect(appSaw(open).headers['x-voot-service'] ?? '').toBe('')
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
    needBinary(ctx, NGINX)
    const before = app.seen.length
    const answer = await send(nginx!.url, path, { headers: bearer(emulator.issueToken('alice')) })
    // nginx itself refuses some of them (400) before asking the gate; none reaches the app.
    expect([400, 403]).toContain(answer.status)
    expect(app.seen.length).toBe(before)
  })

  it.for(ATTACK_PATHS)('refuses %s (%s) with 403 from the gate, before the app sees it', async ([path], ctx) => {
    needBinary(ctx, NGINX)
    const before = app.seen.length
    const answer = await send(nginx!.url, path, { headers: bearer(emulator.issueToken('bob')) })
    expect(answer.status).toBe(403)
    expect(app.seen.length).toBe(before)
  })

  it('ignores a client-sent X-Original-URL: nginx sets its own', async (ctx) => {
    needBinary(ctx, NGINX)
    const answer = await send(nginx!.url, '/admin/reports', {
      headers: { 'x-original-url': `${nginx!.url}/public/x`, 'x-original-method': 'GET', ...bearer(emulator.issueToken('bob')) },
    })
    expect(answer.status).toBe(403)
  })

  it('does not serve the gate’s check endpoints to the public', async (ctx) => {
    needBinary(ctx, NGINX)
    for (const path of ['/_gate/auth-request', '/_gate/metrics', '/_gate/forward-auth', '/_gate_auth']) {
      const answer = await send(nginx!.url, path, { headers: bearer(emulator.issueToken('alice')) })
      expect(answer.status, path).toBe(404)
    }
  })
})

describe('nginx: the host the gate judges is the host nginx routed by', () => {
  // Host-scoped rules, as in the attack: app.example.org/admin needs an admin; any other
  // subdomain of example.org lets anyone signed in through. strictHosts is on (rules name hosts).
  const hostRules = [
    { id: 'health', path: '/healthz', allow: 'anyone' as const },
    { id: 'app-admin', host: 'app.example.org', path: '/admin/**', require: { group: ORG_ID, role: 'admin' } },
    { id: 'signed-in', host: '*.example.org', allow: 'signed-in' as const },
  ]
  let hostGate: GateServer
  let fenced: RunningProxy | undefined
  let single: RunningProxy | undefined
  let ingress: RunningProxy | undefined

  beforeAll(async () => {
    hostGate = await startTestGate(testGateConfig(emulator, { rules: hostRules }))
    if (!existsSync(NGINX)) return
    const addresses = { gatePort: gatePort(hostGate), appPort: app.port }
    fenced = await startNginx(addresses, { defaultServer: true })
    single = await startNginx(addresses)
    // What ingress-nginx generates: X-Original-URL from $http_host, the routed host after the endpoint.
    ingress = await startNginx(addresses, {
      defaultServer: true,
      edit: (server) =>
        server
          .replace('X-Original-URL $scheme://$host$gate_port$request_uri', 'X-Original-URL $scheme://$http_host$request_uri')
          .replace('proxy_pass http://voot_gate/_gate/auth-request;', 'proxy_pass http://voot_gate/_gate/auth-request/$host;'),
    })
  }, 30_000)

  afterAll(async () => {
    await fenced?.stop()
    await single?.stop()
    await ingress?.stop()
    await hostGate?.close()
  })

  const as = (user: string) => `Authorization: Bearer ${emulator.issueToken(user)}`

  it('refuses an absolute-form request line whose Host names a looser host (403, app-admin)', async (ctx) => {
    needBinary(ctx, NGINX)
    for (const proxy of [fenced!, single!, ingress!]) {
      const before = app.seen.length
      const answer = await sendRaw(proxy.port, `GET http://app.example.org/admin/x HTTP/1.1\nHost: other.example.org\n${as('bob')}`)
      expect(answer.status, proxy.config).toBe(403)
      expect(app.seen.length).toBe(before)
    }
    // The gate judged app.example.org: an admin passes the same request under app-admin.
    const admin = await sendRaw(fenced!.port, `GET http://app.example.org/admin/x HTTP/1.1\nHost: other.example.org\n${as('alice')}`)
    expect(admin.status).toBe(200)
    expect(appSaw(admin).headers['x-voot-rule']).toBe('app-admin')
  })

  it('judges HTTP/1.0 without Host by the server block nginx chose', async (ctx) => {
    needBinary(ctx, NGINX)
    // Behind a default_server, no Host reaches the 404 server; the absolute form reaches the app's.
    expect((await sendRaw(fenced!.port, `GET /admin/x HTTP/1.0\n${as('alice')}`)).status).toBe(404)
    expect((await sendRaw(fenced!.port, `GET http://app.example.org/admin/x HTTP/1.0\n${as('bob')}`)).status).toBe(403)
    // The app's server alone: $host is its server_name.
    expect((await sendRaw(single!.port, `GET /admin/x HTTP/1.0\n${as('bob')}`)).status).toBe(403)
    const alice = await sendRaw(single!.port, `GET /admin/x HTTP/1.0\n${as('alice')}`)
    expect(alice.status).toBe(200)
    expect(appSaw(alice).headers['x-voot-rule']).toBe('app-admin')
    // ingress-nginx's form: X-Original-URL has no host at all, the routed one is used.
    expect((await sendRaw(ingress!.port, `GET http://app.example.org/admin/x HTTP/1.0\n${as('bob')}`)).status).toBe(403)
  })

  it('refuses a host no rule names (strictHosts) where nginx has no default_server', async (ctx) => {
    needBinary(ctx, NGINX)
    const before = app.seen.length
    const answer = await sendRaw(single!.port, `GET /x HTTP/1.1\nHost: evil.example.com\n${as('alice')}`)
    expect(answer.status).toBe(403)
    // A rule without host would match it: strictHosts refuses the host before any rule.
    expect((await sendRaw(single!.port, 'GET /healthz HTTP/1.1\nHost: evil.example.com')).status).toBe(403)
    expect(app.seen.length).toBe(before)
    expect((await sendRaw(single!.port, 'GET /healthz HTTP/1.1\nHost: app.example.org')).status).toBe(200)
    const named = await sendRaw(single!.port, `GET /x HTTP/1.1\nHost: wiki.example.org\n${as('bob')}`)
    expect(named.status).toBe(200)
    expect(appSaw(named).headers['x-voot-rule']).toBe('signed-in')
  })
})
