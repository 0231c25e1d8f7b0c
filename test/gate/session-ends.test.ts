/**
 * Sessions that end everywhere: gates sharing one real redis-server. A sign-out on one gate
 * makes the same cookie a 401 on every gate within a second, and on a gate started
 * afterwards; Redis holds no session id; a Redis outage opens nothing on the gate that knows
 * of the end, and an end it could not share reaches the others once Redis is back.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startRedisServer, type RedisServer } from '../../demo/redis-server.js'
import type { Emulator } from '../../testing/index.js'
import type { GateConfig, GateServer } from '../../gate/index.js'
import { createSessionCookies } from '../../gate/session/session.js'
import { everyKeyOn } from '../support/redis-topology.js'
import { COOKIE_SECRETS, startGateEmulator, startTestGate, testGateConfig } from './support/gate-harness.js'
import { send } from './support/raw-request.js'

let emulator: Emulator
let redis: RedisServer
let config: GateConfig
const gates: GateServer[] = []

beforeAll(async () => {
  emulator = await startGateEmulator()
  redis = await startRedisServer()
  config = testGateConfig(emulator, {
    redis: { url: redis.url, secret: 'session-ends-test-secret-0123456789abcdef', prefix: 'ends-test:' },
  })
}, 30_000)

afterAll(async () => {
  for (const gate of gates) await gate.close()
  await redis?.stop()
  await emulator?.close()
})

async function startGate(): Promise<GateServer> {
  const gate = await startTestGate(config)
  gates.push(gate)
  await gate.gate.ready
  return gate
}

const cookies = createSessionCookies({ name: undefined, secrets: COOKIE_SECRETS, maxAge: 3_600_000 }, Date.now)
const origin = { scheme: 'http', host: '127.0.0.1' } as const

/** A signed-in session's cookie for `user`, and its session id. */
function sessionOf(user: string): { cookie: string; sid: string } {
  const token = emulator.issueToken(user)
  const setCookie = cookies.writeSession(
    { accessToken: token, expiresAt: Date.now() + 3_600_000, refreshToken: undefined, sub: user, issuedAt: Date.now() },
    origin,
  ) as string
  const cookie = setCookie.split(';')[0] as string
  return { cookie, sid: cookies.readSession(cookie, origin)?.sid as string }
}

async function status(gate: GateServer, cookie: string): Promise<number> {
  const answer = await send(gate.url, '/_gate/auth-request', {
    headers: { 'x-original-url': 'http://127.0.0.1/anything', 'x-original-method': 'GET', cookie },
  })
  return answer.status
}

/** The status `gate` answers once it answers `wanted`, or at `deadline` ms from now. */
async function statusWithin(gate: GateServer, cookie: string, wanted: number, deadline: number): Promise<number> {
  const until = Date.now() + deadline
  for (;;) {
    const seen = await status(gate, cookie)
    if (seen === wanted || Date.now() >= until) return seen
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}

function signOut(gate: GateServer, cookie: string) {
  return send(gate.url, '/_gate/signout', { method: 'POST', headers: { cookie, origin: gate.url } })
}

describe('sessions that end everywhere (gates sharing Redis)', () => {
  it('a sign-out on one gate is a 401 on every gate within a second, and on a gate started afterwards', async () => {
    const one = await startGate()
    const two = await startGate()
    const { cookie, sid } = sessionOf('alice')
    const other = sessionOf('bob')
    expect(await status(one, cookie)).toBe(200)
    expect(await status(two, cookie)).toBe(200)

    expect((await signOut(one, cookie)).status).toBe(303)
    expect(await status(one, cookie)).toBe(401)
    expect(await statusWithin(two, cookie, 401, 1_000)).toBe(401)
    // Another session of the fleet is not ended with it.
    expect(await status(two, other.cookie)).toBe(200)

    const three = await startGate()
    expect(await statusWithin(three, cookie, 401, 1_000)).toBe(401)
    expect(await status(three, other.cookie)).toBe(200)

    // Redis holds the end as a keyed hash: never the session id.
    const stored = JSON.stringify(await everyKeyOn(redis.url))
    expect(stored).toContain('ends-test:session-ends')
    expect(stored).not.toContain(sid)
  })

  it('an outage of Redis opens no ended session, and an end made meanwhile reaches the others once it is back', async () => {
    const [one, two] = gates as [GateServer, GateServer]
    const before = sessionOf('carol')
    expect((await signOut(one, before.cookie)).status).toBe(303)
    expect(await statusWithin(two, before.cookie, 401, 1_000)).toBe(401)
    const during = sessionOf('dave')
    expect(await status(two, during.cookie)).toBe(200)

    await redis.stop()
    // Each gate still refuses what it knew of.
    expect(await status(one, before.cookie)).toBe(401)
    expect(await status(two, before.cookie)).toBe(401)
    // A sign-out while Redis is away ends the session where it was made...
    expect((await signOut(two, during.cookie)).status).toBe(303)
    expect(await status(two, during.cookie)).toBe(401)

    await redis.start()
    // ...and on the others once Redis is back (the gate writes what it could not; the
    // others read the ends when their subscription is back).
    expect(await statusWithin(one, during.cookie, 401, 15_000)).toBe(401)
    expect(await status(one, before.cookie)).toBe(401)
  }, 30_000)
})

describe('a reload keeps what it knows of ended sessions', () => {
  it('a session signed out on a gate without Redis stays a 401 after a reload', async () => {
    const alone = testGateConfig(emulator)
    const gate = await startTestGate(alone)
    gates.push(gate)
    const { cookie } = sessionOf('erin')
    expect(await status(gate, cookie)).toBe(200)
    expect((await signOut(gate, cookie)).status).toBe(303)
    expect(await status(gate, cookie)).toBe(401)
    await gate.reload(alone)
    expect(await status(gate, cookie)).toBe(401)
    // The reload itself ends nothing else.
    expect(await status(gate, sessionOf('frank').cookie)).toBe(200)
  })
})
