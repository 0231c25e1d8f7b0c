/**
 * A fleet of two gates with `redis` (a real redis-server): an answer one instance fetched is
 * served by the other without asking the group service again, and a sign-out on one ends the
 * session and drops the token's answers on both; the same with two group services, each's answers apart.
 * Redis's contents hold no token.
 */
import { createClient } from 'redis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startRedisServer, type RedisServer } from '../../demo/redis-server.js'
import { ORG_ID, PROJECT_BOARD_GROUP_ID, startEmulator, type Emulator } from '../../testing/index.js'
import { createGate, GateConfigError, type GateConfig, type GateServer } from '../../gate/index.js'
import { createSessionCookies } from '../../gate/session/session.js'
import { everyKeyOn } from '../support/redis-topology.js'
import { COOKIE_SECRETS, GATE_CLIENT, startGateEmulator, startTestGate, testGateConfig } from './support/gate-harness.js'
import { send } from './support/raw-request.js'

let emulator: Emulator
let redis: RedisServer
let one: GateServer
let two: GateServer

beforeAll(async () => {
  emulator = await startGateEmulator()
  redis = await startRedisServer()
  const config = testGateConfig(emulator, {
    redis: { url: redis.url, secret: 'fleet-test-shared-secret-0123456789abcdef', prefix: 'gate-test:' },
  })
  one = await startTestGate(config)
  two = await startTestGate(config)
  await Promise.all([one.gate.ready, two.gate.ready])
}, 30_000)

afterAll(async () => {
  await one?.close()
  await two?.close()
  await redis?.stop()
  await emulator?.close()
})

function check(gate: GateServer, cookie: string) {
  return send(gate.url, '/_gate/auth-request', {
    headers: { 'x-original-url': 'http://127.0.0.1/admin/x', 'x-original-method': 'GET', cookie },
  })
}

describe('two gates sharing Redis', () => {
  it('share answers, and a sign-out on one drops them on both', async () => {
    const token = emulator.issueToken('alice')
    const cookies = createSessionCookies({ name: undefined, secrets: COOKIE_SECRETS, maxAge: 3_600_000 }, Date.now)
    const setCookie = cookies.writeSession(
      { accessToken: token, expiresAt: Date.now() + 3_600_000, refreshToken: undefined, sub: 'alice', issuedAt: Date.now() },
      { scheme: 'http', host: '127.0.0.1' },
    ) as string
    const cookie = setCookie.split(';')[0] as string

    emulator.resetLog()
    expect((await check(one, cookie)).status).toBe(200)
    const asked = emulator.count()
    expect(asked).toBeGreaterThan(0)
    // The other instance reads the answer from Redis.
    expect((await check(two, cookie)).status).toBe(200)
    expect(emulator.count()).toBe(asked)
    const stored = await everyKeyOn(redis.url)
    expect(stored.length).toBeGreaterThan(0)
    expect(JSON.stringify(stored)).not.toContain(token)

    // Another session with the same access token: not signed out, but its answers are the token's.
    const again = (
      cookies.writeSession(
        { accessToken: token, expiresAt: Date.now() + 3_600_000, refreshToken: undefined, sub: 'alice', issuedAt: Date.now() },
        { scheme: 'http', host: '127.0.0.1' },
      ) as string
    ).split(';')[0] as string
    const out = await send(one.url, '/_gate/signout', { method: 'POST', headers: { cookie, origin: one.url } })
    expect(out.status).toBe(303)
    // Within a second, the other instance has ended the session and dropped the token's
    // answers too: the session is a 401, and the token's other session asks again.
    await new Promise((resolve) => setTimeout(resolve, 1_000))
    expect((await check(two, cookie)).status).toBe(401)
    expect((await check(two, again)).status).toBe(200)
    expect(emulator.count()).toBeGreaterThan(asked)
  })

  it('a configuration refused after Redis was asked for leaves no connection open', async () => {
    const config = testGateConfig(emulator, {
      redis: { url: redis.url, secret: 'fleet-test-shared-secret-0123456789abcdef', prefix: 'gate-test:' },
      rules: [{ id: 'boss', path: '/**', require: { group: 'fc:org:example.org', role: 'boss' } }],
    })
    const probe = createClient({ url: redis.url })
    await probe.connect()
    const clients = async (): Promise<number> =>
      String(await probe.sendCommand(['CLIENT', 'LIST']))
        .trim()
        .split('\n').length
    try {
      const before = await clients()
      expect(() => createGate(config, { logger: { warn: () => {} } })).toThrow(GateConfigError)
      // Long enough for a connection the gate had started to be established, were it left open.
      await new Promise((resolve) => setTimeout(resolve, 300))
      expect(await clients()).toBe(before)
    } finally {
      await probe.quit()
    }
  })
})

describe('two gates of two group services sharing Redis', () => {
  it("share each service's answers apart, and a sign-out on one drops them on both", async () => {
    const services = await startEmulator({ services: { feide: { dialect: 'dataporten' }, surf: { dialect: 'openconext' } } })
    const feide = services.service('feide')
    const surf = services.service('surf')
    const config: GateConfig = {
      listen: '127.0.0.1:0',
      services: {
        feide: { service: { baseUrl: feide.baseUrl, allowInsecureHttp: true, timeout: '2s', retries: 0 } },
        surf: {
          service: { baseUrl: surf.baseUrl, allowInsecureHttp: true, timeout: '2s', retries: 0 },
          // A service that signs people in: the gate then serves /_gate/signout.
          oauth: { issuer: surf.authUrl, clientId: GATE_CLIENT.clientId, clientSecret: GATE_CLIENT.clientSecret },
        },
      },
      groupPrefixes: { 'fc:': 'feide', 'urn:collab:': 'surf' },
      cookie: { secrets: COOKIE_SECRETS },
      redis: { url: redis.url, secret: 'fleet-test-shared-secret-0123456789abcdef', prefix: 'gate-services:' },
      rules: [{ id: 'board', path: '/**', require: { anyOf: [ORG_ID, PROJECT_BOARD_GROUP_ID], role: 'admin' } }],
    }
    const first = await startTestGate(config)
    const second = await startTestGate(config)
    try {
      await Promise.all([first.gate.ready, second.gate.ready])
      // The readiness checks asked both services (without a token); from here, only checks.
      feide.resetLog()
      surf.resetLog()
      const token = surf.issueToken('alice')
      const cookies = createSessionCookies({ name: undefined, secrets: COOKIE_SECRETS, maxAge: 3_600_000 }, Date.now)
      const session = { accessToken: token, expiresAt: Date.now() + 3_600_000, refreshToken: undefined, sub: 'alice', issuedAt: Date.now() }
      const cookie = (cookies.writeSession({ ...session, service: 'surf' }, { scheme: 'http', host: '127.0.0.1' }) as string).split(
        ';',
      )[0] as string

      expect((await check(first, cookie)).status).toBe(200)
      const asked = surf.count()
      expect(asked).toBeGreaterThan(0)
      // The other gate reads SURFconext's answer from Redis; Feide never sees the token.
      expect((await check(second, cookie)).status).toBe(200)
      expect(surf.count()).toBe(asked)
      expect(feide.count()).toBe(0)
      expect(JSON.stringify(await everyKeyOn(redis.url))).not.toContain(token)

      const again = (cookies.writeSession({ ...session, service: 'surf' }, { scheme: 'http', host: '127.0.0.1' }) as string).split(
        ';',
      )[0] as string
      const out = await send(first.url, '/_gate/signout', { method: 'POST', headers: { cookie, origin: first.url } })
      expect(out.status).toBe(303)
      await new Promise((resolve) => setTimeout(resolve, 1_000))
      expect((await check(second, cookie)).status).toBe(401)
      expect((await check(second, again)).status).toBe(200)
      expect(surf.count()).toBeGreaterThan(asked)
    } finally {
      await first.close()
      await second.close()
      await services.close()
    }
  })
})
