/**
 * OpenID Connect Back-Channel Logout at the gate, with the emulator as the provider and two
 * gates (then a third) sharing a real redis-server: a Logout Token the emulator sends when
 * a user's sessions end makes that user's session cookie a 401 on every gate within a
 * second, and on a gate started afterwards; a forged, replayed or wrong-audience token is a
 * 400 that ends nothing. The sessions come from real sign-ins at the emulator (their ID
 * tokens' `sid`). With `oauth.endSession`, sign-out goes on to the emulator's end-session
 * endpoint (RP-Initiated Logout 1.0) and back.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { decodeJwt, generateKeyPair, SignJWT } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startRedisServer, type RedisServer } from '../../demo/redis-server.js'
import { defaultData, startEmulator, type Emulator } from '../../testing/index.js'
import type { GateConfig, GateServer } from '../../gate/index.js'
import { GATE_CLIENT, gatePort, startTestGate, testGateConfig } from './support/gate-harness.js'
import { needBinary, NGINX, startEchoApp, startNginx } from './support/proxies.js'
import { send } from './support/raw-request.js'

let emulator: Emulator
let redis: RedisServer
let capture: Server
let config: GateConfig
/** The Logout Tokens the emulator sent, by the client they were for. */
const captured: { client: string; token: string }[] = []
const gates: GateServer[] = []

beforeAll(async () => {
  capture = createServer((req, res) => {
    let body = ''
    req.setEncoding('utf8')
    req.on('data', (chunk: string) => (body += chunk))
    req.on('end', () => {
      const token = new URLSearchParams(body).get('logout_token')
      if (token !== null) captured.push({ client: (req.url ?? '/').slice(1), token })
      res.writeHead(200, { 'cache-control': 'no-store' }).end()
    })
  })
  await new Promise<void>((resolve) => capture.listen(0, '127.0.0.1', resolve))
  const receiver = `http://127.0.0.1:${(capture.address() as AddressInfo).port}`
  emulator = await startEmulator({
    data: {
      ...defaultData,
      clients: [
        ...defaultData.clients,
        { ...GATE_CLIENT, backchannelLogoutUri: `${receiver}/voot-gate`, postLogoutRedirectUris: ['http://127.0.0.1/*'] },
        {
          clientId: 'other-app',
          clientSecret: 'other-app-secret',
          redirectUris: ['http://127.0.0.1/cb'],
          backchannelLogoutUri: `${receiver}/other-app`,
        },
      ],
    },
  })
  redis = await startRedisServer()
  const base = testGateConfig(emulator)
  config = {
    ...base,
    oauth: { ...(base.oauth as NonNullable<GateConfig['oauth']>), backchannelLogout: true },
    redis: { url: redis.url, secret: 'backchannel-test-secret-0123456789abcdef', prefix: 'bcl-test:' },
  }
}, 30_000)

afterAll(async () => {
  for (const gate of gates) await gate.close()
  await redis?.stop()
  await emulator?.close()
  await new Promise<void>((resolve) => capture?.close(() => resolve()))
})

async function startGate(): Promise<GateServer> {
  const gate = await startTestGate(config)
  gates.push(gate)
  await gate.gate.ready
  return gate
}

/** Signs `user` in at `gate` through the emulator's consent page, as a browser would; the session cookie. */
async function signIn(gate: GateServer, user: string): Promise<string> {
  const start = await send(gate.url, '/_gate/signin?rd=%2Fx')
  expect(start.status).toBe(302)
  const pending = ((start.headers['set-cookie'] as string[])[0] as string).split(';')[0] as string
  const authorize = new URL(start.headers.location as string)
  const consent = await send(authorize.origin, `${authorize.pathname}${authorize.search}`)
  const requestId = /name="request_id" value="([^"]+)"/.exec(consent.body)?.[1] as string
  const decided = await fetch(`${authorize.origin}${authorize.pathname}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ request_id: requestId, user, decision: 'approve' }),
    redirect: 'manual',
  })
  const back = new URL(decided.headers.get('location') as string)
  const callback = await send(gate.url, `${back.pathname}${back.search}`, { headers: { cookie: pending } })
  expect(callback.status).toBe(302)
  const session = (callback.headers['set-cookie'] as string[]).find((line) => !line.includes('-signin=')) as string
  return session.split(';')[0] as string
}

async function status(gate: GateServer, cookie: string): Promise<number> {
  const answer = await send(gate.url, '/_gate/auth-request', {
    headers: { 'x-original-url': 'http://127.0.0.1/anything', 'x-original-method': 'GET', cookie },
  })
  return answer.status
}

async function statusWithin(gate: GateServer, cookie: string, wanted: number, deadline: number): Promise<number> {
  const until = Date.now() + deadline
  for (;;) {
    const seen = await status(gate, cookie)
    if (seen === wanted || Date.now() >= until) return seen
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}

function postLogout(gate: GateServer, token: string) {
  return fetch(`${gate.url}/_gate/backchannel-logout`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ logout_token: token }),
  })
}

describe('back-channel logout at the gate (the emulator as the provider, gates sharing Redis)', () => {
  it("ends the user's session on every gate within a second and on a gate started later; refused tokens end nothing", async () => {
    const one = await startGate()
    const two = await startGate()
    const alice = await signIn(two, 'alice')
    const bob = await signIn(one, 'bob')
    expect(await status(one, alice)).toBe(200)
    expect(await status(two, alice)).toBe(200)

    captured.length = 0
    const ended = await emulator.oauth.endSessions('alice')
    expect(ended.sessions).toBe(1)
    const token = captured.find((each) => each.client === 'voot-gate')?.token as string
    const claims = decodeJwt(token)
    expect(claims).toMatchObject({ sub: 'alice', aud: GATE_CLIENT.clientId })
    expect(typeof claims['sid']).toBe('string')

    // A forgery of it (same claims, another key) is a 400 and ends nothing.
    const { privateKey } = await generateKeyPair('RS256')
    const forged = await new SignJWT({ ...claims, jti: 'forged' }).setProtectedHeader({ alg: 'RS256', typ: 'logout+jwt' }).sign(privateKey)
    const refused = await postLogout(one, forged)
    expect(refused.status).toBe(400)
    expect(await refused.json()).toMatchObject({ error: 'invalid_request' })
    expect(await status(one, alice)).toBe(200)

    const accepted = await postLogout(one, token)
    expect(accepted.status).toBe(200)
    expect(accepted.headers.get('cache-control')).toBe('no-store')
    expect(await accepted.text()).toBe('')
    expect(await status(one, alice)).toBe(401)
    expect(await statusWithin(two, alice, 401, 1_000)).toBe(401)
    // Another user's session is not ended with it.
    expect(await status(two, bob)).toBe(200)

    // The same token again is a replay.
    expect((await postLogout(one, token)).status).toBe(400)

    // A Logout Token for another client (carol has no session: the emulator names her to every client).
    captured.length = 0
    await emulator.oauth.endSessions('carol')
    const forOther = captured.find((each) => each.client === 'other-app')?.token as string
    expect(decodeJwt(forOther)).toMatchObject({ sub: 'carol', aud: 'other-app' })
    expect((await postLogout(two, forOther)).status).toBe(400)
    expect(await status(two, bob)).toBe(200)

    const three = await startGate()
    expect(await statusWithin(three, alice, 401, 1_000)).toBe(401)
    expect(await status(three, bob)).toBe(200)
  }, 30_000)

  it('answers 400 for a body that is not a form with one logout_token, and 405 for another method', async () => {
    const [one] = gates as [GateServer]
    const notForm = await fetch(`${one.url}/_gate/backchannel-logout`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    })
    expect(notForm.status).toBe(400)
    const none = await fetch(`${one.url}/_gate/backchannel-logout`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'logout_token=',
    })
    expect(none.status).toBe(400)
    expect((await fetch(`${one.url}/_gate/backchannel-logout`)).status).toBe(405)
  })

  it('through nginx (examples/gate/nginx.conf, both gates upstream): a back-channel logout and a sign-out end sessions on both', async (ctx) => {
    needBinary(ctx, NGINX)
    const [one, two] = gates as [GateServer, GateServer]
    const app = await startEchoApp()
    const nginx = await startNginx({ gatePort: gatePort(one), moreGatePorts: [gatePort(two)], appPort: app.port })
    try {
      const page = (cookie: string) => send(nginx.url, '/page', { headers: { cookie, accept: 'text/html' } })
      const alice = await signIn(two, 'alice')
      const bob = await signIn(one, 'bob')
      expect((await page(alice)).status).toBe(200)
      expect((await page(bob)).status).toBe(200)

      captured.length = 0
      await emulator.oauth.endSessions('alice')
      const token = captured.find((each) => each.client === 'voot-gate')?.token as string
      const logout = await fetch(`${nginx.url}/_gate/backchannel-logout`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ logout_token: token }),
      })
      expect(logout.status).toBe(200)
      expect(logout.headers.get('cache-control')).toBe('no-store')
      expect(await statusWithin(one, alice, 401, 1_000)).toBe(401)
      expect(await statusWithin(two, alice, 401, 1_000)).toBe(401)
      // Through nginx, a browser with the ended session is sent to sign in again.
      expect((await page(alice)).status).toBe(302)

      const out = await send(nginx.url, '/_gate/signout', { method: 'POST', headers: { cookie: bob, origin: nginx.url } })
      expect(out.status).toBe(303)
      expect(await statusWithin(one, bob, 401, 1_000)).toBe(401)
      expect(await statusWithin(two, bob, 401, 1_000)).toBe(401)
      expect((await page(bob)).status).toBe(302)
    } finally {
      await nginx.stop()
      await app.close()
    }
  })

  it('with endSession, a sign-out goes on to the provider and comes back to rd', async () => {
    const gate = await startTestGate({ ...config, oauth: { ...(config.oauth as NonNullable<GateConfig['oauth']>), endSession: true } })
    gates.push(gate)
    const alice = await signIn(gate, 'alice')
    const out = await send(gate.url, '/_gate/signout?rd=%2Fbye', { method: 'POST', headers: { cookie: alice, origin: gate.url } })
    expect(out.status).toBe(303)
    const atProvider = new URL(out.headers.location as string)
    expect(`${atProvider.origin}${atProvider.pathname}`).toBe(`${emulator.authUrl}/oauth/logout`)
    expect(atProvider.searchParams.get('client_id')).toBe(GATE_CLIENT.clientId)
    expect(atProvider.searchParams.get('post_logout_redirect_uri')).toBe(`${gate.url}/bye`)
    // Signed out at the gate first: the cookie is cleared and the session ended.
    expect(String(out.headers['set-cookie'])).toContain('Max-Age=0')
    expect(await status(gate, alice)).toBe(401)
    const back = await send(atProvider.origin, `${atProvider.pathname}${atProvider.search}`)
    expect(back.status).toBe(302)
    expect(back.headers.location).toBe(`${gate.url}/bye`)
  })
})
