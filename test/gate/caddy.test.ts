/**
 * Caddy (Debian's) in front of a plain node:http app, asking the gate with forward_auth,
 * with examples/gate/Caddyfile as docs/gate.md shows it.
 */
import { existsSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ORG_ID, type Emulator } from '../../testing/index.js'
import type { GateServer } from '../../gate/index.js'
import { gatePort, startGateEmulator, startTestGate, testGateConfig } from './support/gate-harness.js'
import { CADDY, needBinary, startCaddy, startEchoApp, type RunningProxy } from './support/proxies.js'
import { ATTACK_PATHS } from './support/attack-paths.js'
import { appSaw, send, sendRaw } from './support/raw-request.js'

let emulator: Emulator
let gate: GateServer
let app: Awaited<ReturnType<typeof startEchoApp>>
let caddy: RunningProxy | undefined

beforeAll(async () => {
  emulator = await startGateEmulator()
  gate = await startTestGate(testGateConfig(emulator))
  app = await startEchoApp()
  if (existsSync(CADDY)) caddy = await startCaddy({ gatePort: gatePort(gate), appPort: app.port })
}, 30_000)

afterAll(async () => {
  await caddy?.stop()
  await gate?.close()
  await app?.close()
  await emulator?.close()
})

const bearer = (token: string) => ({ authorization: `Bearer ${token}` })

describe('Caddy forward_auth in front of a plain app', () => {
  it('lets a member through with the gate headers, and the app sees who', async (ctx) => {
    needBinary(ctx, CADDY)
    const answer = await send(caddy!.url, '/admin/reports?year=2026', { headers: bearer(emulator.issueToken('alice')) })
    expect(answer.status).toBe(200)
    const saw = appSaw(answer)
    expect(saw.url).toBe('/admin/reports?year=2026')
    expect(saw.headers['x-voot-user']).toBe('alice')
    expect(saw.headers['x-voot-rule']).toBe('admin')
  })

  it('answers 403 with the contract body to a non-member, and the app sees nothing', async (ctx) => {
    needBinary(ctx, CADDY)
    const before = app.seen.length
    const answer = await send(caddy!.url, '/admin/reports', { headers: bearer(emulator.issueToken('bob')) })
    expect(answer.status).toBe(403)
    expect(JSON.parse(answer.body)).toMatchObject({ error: 'forbidden' })
    expect(app.seen.length).toBe(before)
  })

  it('answers 401 with the Bearer challenge to an API client, and 302 to sign in to a browser', async (ctx) => {
    needBinary(ctx, CADDY)
    const api = await send(caddy!.url, '/admin/reports', { headers: { accept: 'application/json' } })
    expect(api.status).toBe(401)
    expect(api.headers['www-authenticate']).toBe('Bearer realm="voot-gate"')
    const browser = await send(caddy!.url, '/wiki?x=1', { headers: { accept: 'text/html' } })
    expect(browser.status).toBe(302)
    expect(browser.headers.location).toBe(`${caddy!.url}/_gate/signin?rd=${encodeURIComponent(`${caddy!.url}/wiki?x=1`)}`)
  })

  it('answers 503 with Retry-After while the group service is down', async (ctx) => {
    needBinary(ctx, CADDY)
    const reset = emulator.faults.add({ kind: 'reset' })
    try {
      const answer = await send(caddy!.url, '/admin/reports', { headers: bearer(emulator.issueToken('alice')) })
      expect(answer.status).toBe(503)
      expect(answer.headers['retry-after']).toBe('5')
      expect(JSON.parse(answer.body)).toMatchObject({ error: 'temporarily_unavailable' })
    } finally {
      emulator.faults.remove(reset)
    }
  })

  it('a client-sent identity header never reaches the app', async (ctx) => {
    needBinary(ctx, CADDY)
    const spoof = { 'x-voot-user': 'mallory', 'x-voot-rule': 'admin', 'x-voot-service': 'surf' }
    const open = await send(caddy!.url, '/public/page', { headers: spoof })
    expect(open.status).toBe(200)
    expect(appSaw(open).headers['x-voot-user'] ?? '').toBe('')
    expect(appSaw(open).headers['x-voot-rule']).toBe('public')
    const signed = await send(caddy!.url, '/admin/page', { headers: { ...spoof, ...bearer(emulator.issueToken('alice')) } })
    expect(signed.status).toBe(200)
    expect(appSaw(signed).headers['x-voot-user']).toBe('alice')
    // One group service: the service is empty, and a client's own copy never reaches the app.
    expect(appSaw(signed).headers['x-voot-service'] ?? '').toBe('')
    expect(appSaw(open).headers['x-voot-service'] ?? '').toBe('')
  })

  it('ignores client-sent X-Forwarded-* headers: Caddy sets its own', async (ctx) => {
    needBinary(ctx, CADDY)
    const answer = await send(caddy!.url, '/admin/reports', {
      headers: {
        'x-forwarded-uri': '/public/x',
        'x-forwarded-method': 'GET',
        'x-forwarded-host': 'elsewhere.example',
        ...bearer(emulator.issueToken('bob')),
      },
    })
    expect(answer.status).toBe(403)
  })

  it.for([
    '/admin/../public/x',
    '/public/../admin/x',
    '/public/%2e%2e/admin/x',
    '/public/%2E%2e%2fadmin',
    '//admin/x',
    '/public//admin',
    '/public%2Fadmin',
    '/public/%5c..%5cadmin',
    '/public/%252e%252e/admin',
    '/public;/admin',
  ])('refuses %s before the app sees it', async (path, ctx) => {
    needBinary(ctx, CADDY)
    const before = app.seen.length
    const answer = await send(caddy!.url, path, { headers: bearer(emulator.issueToken('alice')) })
    expect([400, 403]).toContain(answer.status)
    expect(app.seen.length).toBe(before)
  })

  it.for(ATTACK_PATHS)('refuses %s (%s) with 403 from the gate, before the app sees it', async ([path], ctx) => {
    needBinary(ctx, CADDY)
    const before = app.seen.length
    const answer = await send(caddy!.url, path, { headers: bearer(emulator.issueToken('bob')) })
    expect(answer.status).toBe(403)
    expect(app.seen.length).toBe(before)
  })

  it('does not serve the gate’s check endpoints to the public', async (ctx) => {
    needBinary(ctx, CADDY)
    for (const path of ['/_gate/forward-auth', '/_gate/metrics', '/_gate/auth-request']) {
      const answer = await send(caddy!.url, path, { headers: bearer(emulator.issueToken('alice')) })
      expect(answer.status, path).toBe(404)
    }
  })
})

describe('Caddy: the host the gate judges is the host Caddy routed by', () => {
  const hostRules = [
    { id: 'app-admin', host: 'app.example.org', path: '/admin/**', require: { group: ORG_ID, role: 'admin' } },
    { id: 'signed-in', host: '*.example.org', allow: 'signed-in' as const },
  ]
  let hostGate: GateServer
  let hosted: RunningProxy | undefined

  beforeAll(async () => {
    hostGate = await startTestGate(testGateConfig(emulator, { rules: hostRules }))
    if (existsSync(CADDY)) hosted = await startCaddy({ gatePort: gatePort(hostGate), appPort: app.port }, { siteHost: 'app.example.org' })
  }, 30_000)

  afterAll(async () => {
    await hosted?.stop()
    await hostGate?.close()
  })

  const as = (user: string) => `Authorization: Bearer ${emulator.issueToken(user)}`

  it('refuses an absolute-form request line whose Host names a looser host (403, app-admin)', async (ctx) => {
    needBinary(ctx, CADDY)
    const port = hosted!.port
    const before = app.seen.length
    const bob = await sendRaw(port, `GET http://app.example.org:${port}/admin/x HTTP/1.1\nHost: other.example.org:${port}\n${as('bob')}`)
    expect(bob.status).toBe(403)
    expect(app.seen.length).toBe(before)
    const alice = await sendRaw(
      port,
      `GET http://app.example.org:${port}/admin/x HTTP/1.1\nHost: other.example.org:${port}\n${as('alice')}`,
    )
    expect(alice.status).toBe(200)
    expect(appSaw(alice).headers['x-voot-rule']).toBe('app-admin')
    // Another Host alone reaches no site of this Caddy, and never the app.
    const other = await sendRaw(port, `GET /admin/x HTTP/1.1\nHost: other.example.org:${port}\n${as('bob')}`)
    expect(app.seen.length).toBe(before + 1)
  })
})
