/**
 * Two instances of one Express app over two group services (a Feide emulator and a
 * SURFconext one), sharing one real redis-server through the shared tier: the first
 * instance hands the tier to createServiceResolvers once, the second in each service's
 * options. A cold lookup on one instance is a Redis hit on the other for the same service;
 * the two services' answers are apart in Redis, even for one token string and one group id;
 * and one service's outage (503, or its address closed) refuses only its own users, on both
 * instances.
 */
import { randomBytes } from 'node:crypto'
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import express from 'express'
import { createClient } from 'redis'
import { request } from 'undici'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { createGuard } from '../../adapters/express/index.js'
import { createRedisCache } from '../../redis/index.js'
import { anyOf, createServiceResolvers, group, type MembershipResolverOptions, type ServiceResolvers } from '../../src/index.js'
import type { SharedCache } from '../../src/shared-cache.js'
import { startRedisServer, type RedisServer } from '../../demo/redis-server.js'
import { ORG_ID, PROJECT_BOARD_GROUP_ID, startEmulator, type Emulator } from '../../testing/index.js'
import type { TestServer } from '../support/loopback-http.js'
import { startRecordingProxy } from '../support/recording-proxy.js'
import { subscribed } from '../support/shared-tier-checks.js'

const SECRET = 'k3Jx9-Qw2v7Rz0pLm4Nc8Ty1Ub6Hs5Ga2Fe'
const PREFIX = 'two:'
const newClient = (url: string) => createClient({ url, disableOfflineQueue: true, socket: { reconnectStrategy: () => 20 } })
type Client = ReturnType<typeof newClient>
type Service = 'feide' | 'surf'

const cleanups: Array<() => Promise<void>> = []
let redis: RedisServer
let feide: Emulator
let surf: Emulator
const proxies = {} as Record<Service, TestServer>
/** The tokens each service received (as presented, before any alias). */
const received: Record<Service, string[]> = { feide: [], surf: [] }
/** One token string that each service knows as a user of its own: `shared` → that service's token. */
const aliases: Record<Service, Map<string, string>> = { feide: new Map(), surf: new Map() }

interface Instance {
  readonly url: string
  readonly services: ServiceResolvers
  readonly tier: SharedCache
}
const instances: Instance[] = []

/** One instance of the app: `once` hands the tier to createServiceResolvers once, else to each service. */
async function startInstance(once: boolean): Promise<Instance> {
  const client: Client = newClient(redis.url)
  client.on('error', () => {})
  await client.connect()
  cleanups.push(async () => {
    client.destroy()
  })
  const tier = createRedisCache({ client, secret: SECRET, prefix: PREFIX, timeout: 2_000, breaker: { failureThreshold: 1000 } })
  const each = (options: MembershipResolverOptions): MembershipResolverOptions => (once ? options : { ...options, sharedCache: tier })
  const services = createServiceResolvers({
    services: {
      feide: each({ baseUrl: `${proxies.feide.url}/groups`, timeout: 2_000, retries: 0 }),
      surf: each({ baseUrl: proxies.surf.url, timeout: 2_000, retries: 0 }),
    },
    groupPrefixes: { 'fc:': 'feide', 'urn:collab:': 'surf' },
    ...(once ? { sharedCache: tier } : {}),
  })
  cleanups.push(() => services.close())
  const guard = createGuard({
    services,
    getToken: (req) => {
      const header = req.get('authorization')
      if (header === undefined) return undefined
      return { token: header.replace(/^Bearer /, ''), service: req.hostname.startsWith('surf.') ? 'surf' : 'feide' }
    },
  })
  const app = express()
  app.get('/board', guard.require(anyOf(group(ORG_ID, 'admin'), group(PROJECT_BOARD_GROUP_ID, 'admin'))), (_req, res) => {
    res.json({ ok: true })
  })
  const server = await new Promise<Server>((resolve) => {
    const listening = app.listen(0, '127.0.0.1', () => resolve(listening))
  })
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  )
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, services, tier }
}

beforeAll(async () => {
  redis = await startRedisServer()
  feide = await startEmulator()
  surf = await startEmulator({ dialect: 'openconext' })
  cleanups.push(
    () => feide.close(),
    () => surf.close(),
  )
  for (const [service, emulator] of [
    ['feide', feide],
    ['surf', surf],
  ] as const) {
    proxies[service] = await startRecordingProxy(
      emulator,
      { received: received[service], alias: (token) => aliases[service].get(token) },
      cleanups,
    )
  }
  instances.push(await startInstance(true), await startInstance(false))
  await subscribed(instances[0]!.tier, instances[1]!.tier)
})

afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup()
  await redis.stop()
})

beforeEach(() => {
  received.feide.length = 0
  received.surf.length = 0
})

async function visit(instance: Instance, service: Service, token: string): Promise<number> {
  const answer = await request(`${instance.url}/board`, { headers: { host: `${service}.app.test`, authorization: `Bearer ${token}` } })
  await answer.body.dump()
  return answer.statusCode
}

/** Every key of the tier in Redis. */
async function keys(): Promise<string[]> {
  const client = newClient(redis.url)
  await client.connect()
  try {
    return await client.keys(`${PREFIX}*`)
  } finally {
    client.destroy()
  }
}

/** The token ids (the hash tags) that keys of the tier name. */
const tokenIdsOf = (names: readonly string[]): Set<string> =>
  new Set(names.filter((name) => name.includes('{')).map((name) => name.slice(name.indexOf('{'), name.indexOf('}') + 1)))

const sharedHits = (instance: Instance, service: Service): number => instance.services.resolver(service).stats().sharedHits

describe('two services, two instances, one Redis', () => {
  it('answers a cold lookup of one instance from Redis on the other, for the same service', async () => {
    const [first, second] = instances as [Instance, Instance]
    const feideAdmin = feide.issueToken('alice')
    const surfAdmin = surf.issueToken('alice')
    expect(await visit(first, 'feide', feideAdmin)).toBe(200)
    expect(await visit(first, 'surf', surfAdmin)).toBe(200)
    expect(received).toEqual({ feide: [feideAdmin], surf: [surfAdmin] })
    const hits = { feide: sharedHits(second, 'feide'), surf: sharedHits(second, 'surf') }
    expect(await visit(second, 'feide', feideAdmin)).toBe(200)
    expect(await visit(second, 'surf', surfAdmin)).toBe(200)
    // No further call: the second instance read each service's answer from Redis.
    expect(received).toEqual({ feide: [feideAdmin], surf: [surfAdmin] })
    expect(sharedHits(second, 'feide')).toBe(hits.feide + 1)
    expect(sharedHits(second, 'surf')).toBe(hits.surf + 1)
  })

  it("keeps the services' answers apart in Redis, for one token string and one group id", async () => {
    const [first, second] = instances as [Instance, Instance]
    const before = tokenIdsOf(await keys())
    // One token string: Feide knows it as erin (no groups), SURFconext as alice (an admin of the board).
    const shared = randomBytes(24).toString('base64url')
    aliases.feide.set(shared, feide.issueToken('erin'))
    aliases.surf.set(shared, surf.issueToken('alice'))
    expect(await visit(first, 'feide', shared)).toBe(403)
    expect(received.surf).toEqual([])
    // SURFconext's answer for the same string is its own: asked for, not read from Feide's entries.
    expect(await visit(second, 'surf', shared)).toBe(200)
    expect(received.surf).toContain(shared)
    const calls = { feide: received.feide.length, surf: received.surf.length }
    // And the other way round, on the other instances: each reads its own service's entries from Redis.
    expect(await visit(second, 'feide', shared)).toBe(403)
    expect(await visit(first, 'surf', shared)).toBe(200)
    expect({ feide: received.feide.length, surf: received.surf.length }).toEqual(calls)
    // One group id, looked up in each service for the same token string: each its own answer.
    expect(await first.services.resolver('feide').membership(shared, PROJECT_BOARD_GROUP_ID)).toBeNull()
    expect(await second.services.resolver('surf').membership(shared, PROJECT_BOARD_GROUP_ID)).toMatchObject({ basic: 'admin' })
    expect(await second.services.resolver('feide').membership(shared, PROJECT_BOARD_GROUP_ID)).toBeNull()
    expect(await first.services.resolver('surf').membership(shared, PROJECT_BOARD_GROUP_ID)).toMatchObject({ basic: 'admin' })
    // In Redis: the token string's keys are under two token ids, one per service, and no key
    // holds the token.
    const after = await keys()
    const added = [...tokenIdsOf(after)].filter((id) => !before.has(id))
    expect(added).toHaveLength(2)
    expect(after.some((name) => name.includes(shared))).toBe(false)
  })

  it("with one service answering 503, serves the other's users on both instances and gives its own 503", async () => {
    const fault = surf.faults.add({ kind: 'status', status: 503 })
    try {
      for (const instance of instances) {
        expect(await visit(instance, 'feide', feide.issueToken('alice'))).toBe(200)
        expect(await visit(instance, 'surf', surf.issueToken('alice'))).toBe(503)
      }
    } finally {
      surf.faults.remove(fault)
    }
    for (const instance of instances) expect(await visit(instance, 'surf', surf.issueToken('alice'))).toBe(200)
  })

  it("with one service's address closed, serves the other's users on both instances and gives its own 503", async () => {
    await proxies.surf.close()
    for (const instance of instances) {
      expect(await visit(instance, 'feide', feide.issueToken('alice'))).toBe(200)
      expect(await visit(instance, 'surf', surf.issueToken('alice'))).toBe(503)
    }
    expect(received.surf).toEqual([])
  })
})
