/**
 * The shared tier behind Redis Sentinel (Debian's redis-server: a master, a replica, three
 * sentinels, started once for the file): instances on node-redis sentinel clients share
 * answers, single flight and invalidations; a failover mid-traffic (the master killed)
 * changes no answer and makes no 503, and the fleet shares again on the promoted replica;
 * neither server holds a token or a group id.
 */
import { createHash } from 'node:crypto'
import { createSentinel } from 'redis'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { createMembershipResolver, group, type MembershipResolver } from '../../src/index.js'
import type { SharedCache } from '../../src/shared-cache.js'
import { createRedisCache } from '../../redis/index.js'
import { ADHOC_GROUP_ID, ORG_ID, SCHOOL_GROUP_ID, startEmulator, type Emulator } from '../../testing/index.js'
import { everyKeyOn, startRedisSentinel, type RedisSentinelFixture } from '../support/redis-topology.js'
import { eventually, outcome, subscribed } from '../support/shared-tier-checks.js'

const SECRET = 'k3Jx9-Qw2v7Rz0pLm4Nc8Ty1Ub6Hs5Ga2Fe'

let sentinel: RedisSentinelFixture
let emulator: Emulator
const cleanups: (() => Promise<unknown> | unknown)[] = []

interface Instance {
  readonly resolver: MembershipResolver
  readonly tier: SharedCache
}

async function instance(timeout = 2_000): Promise<Instance> {
  const client = createSentinel({
    name: sentinel.name,
    sentinelRootNodes: [...sentinel.sentinelRootNodes],
    nodeClientOptions: { disableOfflineQueue: true, socket: { reconnectStrategy: () => 50, connectTimeout: 500 } },
  })
  client.on('error', () => {})
  await client.connect()
  cleanups.push(() => client.destroy())
  const tier = createRedisCache({ client, secret: SECRET, timeout, breaker: { failureThreshold: 1_000 } })
  const resolver = createMembershipResolver({ baseUrl: emulator.baseUrl, sharedCache: tier })
  cleanups.push(() => resolver.close())
  return { resolver, tier }
}

beforeAll(async () => {
  sentinel = await startRedisSentinel()
}, 60_000)

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
  await emulator?.close()
})

afterAll(async () => {
  await sentinel?.stop()
})

describe('a fleet behind Redis Sentinel (node-redis createSentinel)', () => {
  it('shares answers and single flight, carries invalidations, and leaves no token or group id on either server', async () => {
    emulator = await startEmulator({ latency: 100 })
    const [a, b] = [await instance(), await instance()]
    await subscribed(a.tier, b.tier)
    const tokens = Array.from({ length: 4 }, (_, i) => emulator.issueToken(i % 2 === 0 ? 'alice' : 'bob'))
    emulator.resetLog()
    await Promise.all(tokens.flatMap((token) => [a.resolver.groups(token), b.resolver.groups(token)]))
    expect(emulator.count()).toBe(tokens.length)
    for (const token of tokens) {
      for (const id of [ORG_ID, SCHOOL_GROUP_ID, ADHOC_GROUP_ID]) await a.resolver.membership(token, id)
    }
    const calls = emulator.count()
    for (const token of tokens) expect(await outcome(b.resolver.check(token, group(SCHOOL_GROUP_ID)))).toBe('denied')
    expect(emulator.count()).toBe(calls)

    const bob = emulator.data.users.find((user) => user.id === 'bob')!
    const token = tokens[1]!
    expect(await outcome(b.resolver.check(token, group(ORG_ID)))).toBe('allowed')
    const memberships = bob.memberships
    bob.memberships = memberships.filter((membership) => membership.groupId !== ORG_ID)
    await a.resolver.invalidate(token)
    await eventually(async () => (await outcome(b.resolver.check(token, group(ORG_ID)))) === 'denied')
    bob.memberships = memberships

    // Words of five letters or more: a shorter one turns up in random base64 by chance.
    const forbidden = [ORG_ID, SCHOOL_GROUP_ID, ADHOC_GROUP_ID, 'example.org', 'Example University', 'alice', 'admin', 'member', 'owner']
    for (const each of tokens)
      forbidden.push(each, createHash('sha256').update(each).digest('hex'), createHash('sha256').update(each).digest('base64url'))
    // The replica holds what the master holds: read both.
    await eventually(
      async () => (await everyKeyOn(sentinel.servers[1]!.url)).length === (await everyKeyOn(sentinel.servers[0]!.url)).length,
    )
    let seen = 0
    for (const server of sentinel.servers) {
      for (const { key, value } of await everyKeyOn(server.url)) {
        seen++
        for (const secret of forbidden) {
          expect(key).not.toContain(secret)
          expect(value).not.toContain(secret)
        }
      }
    }
    expect(seen).toBeGreaterThan(tokens.length * 4)
    expect(a.tier.stats().errors + b.tier.stats().errors).toBe(0)
  })

  it('a failover mid-traffic (the master killed): every answer stays right, never a 503; the fleet shares again on the new master', async () => {
    emulator = await startEmulator()
    const [a, b] = [await instance(100), await instance(100)]
    const oldMaster = await sentinel.master()
    const asked: Promise<[string, string]>[] = []
    let running = true
    const traffic = (async () => {
      for (let round = 0; running; round++) {
        const token = emulator.issueToken(round % 2 === 0 ? 'alice' : 'bob')
        const [first, second] = round % 2 === 0 ? [a, b] : [b, a]
        const expected = round % 2 === 0 ? 'allowed' : 'denied'
        asked.push(Promise.all([outcome(first.resolver.check(token, group(ADHOC_GROUP_ID, 'owner'))), Promise.resolve(expected)]))
        asked.push(Promise.all([outcome(second.resolver.check(token, group(ADHOC_GROUP_ID, 'owner'))), Promise.resolve(expected)]))
        asked.push(Promise.all([outcome(second.resolver.check(token, group(ORG_ID))), Promise.resolve('allowed')]))
        await new Promise((resolve) => setTimeout(resolve, 5))
      }
    })()
    await subscribed(a.tier, b.tier)
    const dropsAll: string[] = []
    b.tier.subscribe((signal) => {
      if (signal.type === 'invalidate' && signal.tokenId === undefined) dropsAll.push('b')
    })
    await new Promise((resolve) => setTimeout(resolve, 300))
    await oldMaster.kill()
    await eventually(async () => (await sentinel.master()) !== oldMaster)
    // The old master comes back as a replica of the new one.
    await oldMaster.start()
    await new Promise((resolve) => setTimeout(resolve, 500))
    running = false
    await traffic
    const results = await Promise.all(asked)
    // Invalidations sent while its subscription moved to the new master were missed: b dropped its whole L1.
    await eventually(() => dropsAll.length > 0)
    expect(results.length).toBeGreaterThan(100)
    for (const [got, expected] of results) expect(got).toBe(expected)
    expect(a.tier.stats().errors + b.tier.stats().errors).toBeGreaterThan(0)
    await eventually(async () => {
      const token = emulator.issueToken('bob')
      await a.resolver.groups(token)
      const calls = emulator.count()
      await b.resolver.groups(token)
      return emulator.count() === calls
    })
    await subscribed(a.tier, b.tier)
  }, 30_000)

  it("subscribes through the app's own sentinel client, and leaves it as it was when closed", async () => {
    const client = createSentinel({ name: sentinel.name, sentinelRootNodes: [...sentinel.sentinelRootNodes] })
    client.on('error', () => {})
    await client.connect()
    cleanups.push(() => client.destroy())
    const before = { error: client.listenerCount('error'), topology: client.listenerCount('topology-change') }
    const [a, b] = [
      createRedisCache({ client, secret: SECRET, timeout: 2_000 }),
      createRedisCache({ client, secret: SECRET, timeout: 2_000 }),
    ]
    await subscribed(a, b)
    await a.close()
    await b.close()
    expect({ error: client.listenerCount('error'), topology: client.listenerCount('topology-change') }).toEqual(before)
    // No listener of the tiers is left on the channel: an invalidation reaches nobody.
    const channels = (await client.sendCommand(false, ['PUBSUB', 'NUMSUB', 'vg:invalidate'])) as [string, number]
    expect(Number(channels[1])).toBe(0)
  })
})
