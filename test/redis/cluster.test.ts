/**
 * The shared tier on a real Redis Cluster of three masters (Debian's redis-server, started
 * once for the file): instances on node-redis cluster clients share answers, single flight
 * and invalidations; `invalidate()` empties every master; a token's keys share one slot;
 * a master killed mid-traffic changes no answer and makes no 503; no node holds a token or a
 * group id. ioredis's Cluster, through docs/redis.md's adapter, shares all of it.
 */
import { createHash } from 'node:crypto'
import { Cluster } from 'ioredis'
import { createCluster } from 'redis'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { fromIoredisCluster } from '../../examples/redis/ioredis-cluster-client.js'
import { InvalidOptionError } from '../../src/errors.js'
import { createMembershipResolver, group, type MembershipResolver } from '../../src/index.js'
import type { SharedCache, SharedCacheSignal } from '../../src/shared-cache.js'
import { createRedisCache, type RedisCacheOptions } from '../../redis/index.js'
import { ADHOC_GROUP_ID, ORG_ID, SCHOOL_GROUP_ID, startEmulator, type Emulator } from '../../testing/index.js'
import { everyKeyOn, moveSlot, redisCli, startRedisCluster, type RedisClusterFixture } from '../support/redis-topology.js'
import { eventually, outcome, subscribed } from '../support/shared-tier-checks.js'

const SECRET = 'k3Jx9-Qw2v7Rz0pLm4Nc8Ty1Ub6Hs5Ga2Fe'

let cluster: RedisClusterFixture
let emulator: Emulator
const cleanups: (() => Promise<unknown> | unknown)[] = []

function newClusterClient() {
  const client = createCluster({
    rootNodes: [...cluster.rootNodes],
    defaults: { disableOfflineQueue: true, socket: { reconnectStrategy: () => 50, connectTimeout: 500 } },
  })
  client.on('error', () => {})
  return client
}

interface Instance {
  readonly resolver: MembershipResolver
  readonly tier: SharedCache
}

/** `timeout`: the tier's deadline; far above a loaded machine's stalls unless the test is about faults. */
async function instance(timeout = 2_000, client?: RedisCacheOptions['client']): Promise<Instance> {
  let own = client
  if (own === undefined) {
    const made = newClusterClient()
    await made.connect()
    cleanups.push(() => made.destroy())
    own = made
  }
  const tier = createRedisCache({ client: own, secret: SECRET, timeout, breaker: { failureThreshold: 1_000 } })
  const resolver = createMembershipResolver({ baseUrl: emulator.baseUrl, sharedCache: tier })
  cleanups.push(() => resolver.close())
  return { resolver, tier }
}

async function keysPerMaster(): Promise<number[]> {
  return Promise.all(cluster.masters.map(async (node) => (await everyKeyOn(node.url)).filter(({ key }) => key.startsWith('vg:')).length))
}

/** Resolves once the answers' writes (which the resolver does not wait for) have landed: no lock left, `count` keys. */
async function written(count: number): Promise<void> {
  await eventually(async () => {
    const keys = await Promise.all(cluster.masters.map((node) => everyKeyOn(node.url)))
    return (
      keys.flat().filter(({ key }) => key.startsWith('vg:') && !key.includes('}:l:')).length >= count &&
      !keys.flat().some(({ key }) => key.includes('}:l:'))
    )
  })
}

beforeAll(async () => {
  cluster = await startRedisCluster()
}, 60_000)

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
  await emulator?.close()
  for (const node of cluster.masters) if (!node.running) await node.start()
  await cluster.healthy()
  await Promise.all(cluster.masters.map((node) => redisCli(node.port, 'FLUSHALL')))
})

afterAll(async () => {
  await cluster?.stop()
})

describe('a fleet on a Redis Cluster (node-redis createCluster)', () => {
  it('answers on one instance from what the other fetched, and keeps each token in one slot', async () => {
    emulator = await startEmulator()
    const [a, b] = [await instance(), await instance()]
    const tokens = Array.from({ length: 12 }, (_, i) => emulator.issueToken(i % 2 === 0 ? 'alice' : 'bob'))
    for (const token of tokens) {
      expect(await outcome(a.resolver.check(token, group(ORG_ID)))).toBe('allowed')
      await a.resolver.membership(token, SCHOOL_GROUP_ID)
    }
    const calls = emulator.count()
    for (const token of tokens) {
      expect(await outcome(b.resolver.check(token, group(ORG_ID)))).toBe('allowed')
      expect(await b.resolver.membership(token, SCHOOL_GROUP_ID)).toEqual(await a.resolver.membership(token, SCHOOL_GROUP_ID))
    }
    expect(emulator.count()).toBe(calls)
    expect(b.tier.stats().hits).toBeGreaterThan(0)
    expect(a.tier.stats().errors + b.tier.stats().errors).toBe(0)

    // Twelve tokens land on more than one master, and each token's keys on one slot.
    const perMaster = await keysPerMaster()
    expect(perMaster.filter((count) => count > 0).length).toBeGreaterThan(1)
    const slots = new Map<string, Set<string>>()
    for (const node of cluster.masters) {
      for (const { key } of await everyKeyOn(node.url)) {
        const tag = /\{([^}]+)\}/.exec(key)![1]!
        const slot = await redisCli(node.port, 'CLUSTER', 'KEYSLOT', key)
        slots.set(tag, (slots.get(tag) ?? new Set()).add(`${node.port} ${slot}`))
      }
    }
    expect(slots.size).toBe(tokens.length)
    for (const places of slots.values()) expect(places.size).toBe(1)
  })

  it('follows MOVED when the slots of cached tokens move to another master', async () => {
    emulator = await startEmulator()
    const [a, b] = [await instance(), await instance()]
    const tokens = Array.from({ length: 12 }, () => emulator.issueToken('alice'))
    for (const token of tokens) await a.resolver.groups(token)
    await written(tokens.length)
    const [from, to] = [cluster.masters[0]!, cluster.masters[1]!]
    const moved = new Set<number>()
    for (const { key } of await everyKeyOn(from.url)) moved.add(Number(await redisCli(from.port, 'CLUSTER', 'KEYSLOT', key)))
    expect(moved.size).toBeGreaterThan(0)
    for (const slot of moved) await moveSlot(cluster, slot, from, to)
    expect(await everyKeyOn(from.url)).toEqual([])
    const calls = emulator.count()
    for (const token of tokens) await b.resolver.groups(token)
    expect(emulator.count()).toBe(calls)
    expect(b.tier.stats().errors).toBe(0)
  })

  it('costs one upstream call per path for concurrent cold lookups on both instances', async () => {
    emulator = await startEmulator({ latency: 150 })
    const [a, b] = [await instance(), await instance()]
    const token = emulator.issueToken('alice')
    emulator.resetLog()
    const answers = await Promise.all(
      [a, b].flatMap(({ resolver }) => [
        resolver.groups(token),
        resolver.membership(token, ADHOC_GROUP_ID),
        resolver.groups(token, { showAll: true }),
      ]),
    )
    expect(emulator.count()).toBe(3)
    expect(answers.slice(3)).toEqual(answers.slice(0, 3))
  })

  it('carries invalidate(token) to the other instance, and invalidate() empties every master and reaches every instance', async () => {
    emulator = await startEmulator()
    const [a, b] = [await instance(), await instance()]
    await subscribed(a.tier, b.tier)
    const token = emulator.issueToken('bob')
    expect(await outcome(b.resolver.check(token, group(ORG_ID)))).toBe('allowed')
    const bob = emulator.data.users.find((user) => user.id === 'bob')!
    const memberships = bob.memberships
    bob.memberships = memberships.filter((membership) => membership.groupId !== ORG_ID)
    await a.resolver.invalidate(token)
    await eventually(async () => (await outcome(b.resolver.check(token, group(ORG_ID)))) === 'denied')
    bob.memberships = memberships

    const tokens = Array.from({ length: 12 }, () => emulator.issueToken('alice'))
    for (const each of tokens) await b.resolver.groups(each)
    // bob's me/groups, fetched again after the invalidation, and the twelve tokens'.
    await written(tokens.length + 1)
    expect((await keysPerMaster()).filter((count) => count > 0).length).toBeGreaterThan(1)
    const heard: SharedCacheSignal[] = []
    b.tier.subscribe((signal) => heard.push(signal))
    await a.tier.invalidate()
    expect(await keysPerMaster()).toEqual([0, 0, 0])
    await eventually(() => heard.some((signal) => signal.type === 'invalidate' && signal.tokenId === undefined))
    expect(a.tier.stats().errors).toBe(0)
  })

  it('a master killed mid-traffic: every answer stays right, never a 503; sharing resumes once it is back', async () => {
    emulator = await startEmulator()
    const [a, b] = [await instance(100), await instance(100)]
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
    await subscribed(b.tier, a.tier)
    // The victim: a master that one of the instances' subscriptions is on.
    const clients = await Promise.all(cluster.masters.map((node) => redisCli(node.port, 'CLIENT', 'LIST')))
    const victim = cluster.masters[clients.findIndex((list) => /\bsub=1\b/.test(list))]!
    const dropsAll: string[] = []
    for (const [name, { tier }] of [
      ['a', a],
      ['b', b],
    ] as const) {
      tier.subscribe((signal) => {
        if (signal.type === 'invalidate' && signal.tokenId === undefined) dropsAll.push(name)
      })
    }
    await new Promise((resolve) => setTimeout(resolve, 300))
    await victim.kill()
    await new Promise((resolve) => setTimeout(resolve, 2_500))
    await victim.start()
    await cluster.healthy()
    running = false
    await traffic
    const results = await Promise.all(asked)
    // Invalidations sent while a subscription was cut were missed: that instance dropped its whole L1.
    await eventually(() => dropsAll.length > 0)
    expect(results.length).toBeGreaterThan(100)
    for (const [got, expected] of results) expect(got).toBe(expected)
    expect(a.tier.stats().errors + b.tier.stats().errors).toBeGreaterThan(0)
    // Back: a token fetched on a is served to b from Redis again.
    await eventually(async () => {
      const token = emulator.issueToken('bob')
      await a.resolver.groups(token)
      const calls = emulator.count()
      await b.resolver.groups(token)
      return emulator.count() === calls
    })
  }, 30_000)

  it('leaves no token, token hash or group id in any key or value on any node', async () => {
    emulator = await startEmulator()
    const [a, b] = [await instance(), await instance()]
    const tokens = Array.from({ length: 6 }, (_, i) => emulator.issueToken(i % 2 === 0 ? 'alice' : 'bob'))
    for (const token of tokens) {
      await a.resolver.groups(token)
      await b.resolver.groups(token, { showAll: true })
      for (const id of [ORG_ID, SCHOOL_GROUP_ID, ADHOC_GROUP_ID]) await a.resolver.membership(token, id)
    }
    const revoked = tokens[0]!
    emulator.revokeToken(revoked)
    await b.resolver.invalidate(revoked)
    expect(await outcome(b.resolver.check(revoked, group(ORG_ID)))).toBe('invalid')
    // Words of five letters or more: a shorter one turns up in random base64 by chance.
    const forbidden = [ORG_ID, SCHOOL_GROUP_ID, ADHOC_GROUP_ID, 'example.org', 'Example University', 'alice', 'admin', 'member', 'owner']
    for (const token of tokens) {
      forbidden.push(token, Buffer.from(token).toString('base64'), createHash('sha256').update(token).digest('hex'))
      forbidden.push(createHash('sha256').update(token).digest('base64url'))
    }
    let seen = 0
    for (const node of cluster.masters) {
      for (const { key, value } of await everyKeyOn(node.url)) {
        seen++
        for (const secret of forbidden) {
          expect(key).not.toContain(secret)
          expect(value).not.toContain(secret)
        }
      }
    }
    expect(seen).toBeGreaterThan(tokens.length * 4)
  })
})

describe("ioredis's Cluster through docs/redis.md's adapter", () => {
  it('refuses a Cluster passed as it is, naming the adapter', () => {
    const raw = new Cluster([...cluster.rootNodes.map(({ url }) => ({ host: '127.0.0.1', port: Number(new URL(url).port) }))], {
      lazyConnect: true,
    })
    expect(() => createRedisCache({ client: raw as never, secret: SECRET })).toThrow(InvalidOptionError)
    expect(() => createRedisCache({ client: raw as never, secret: SECRET })).toThrow(/fromIoredisCluster/)
    raw.disconnect()
  })

  it('shares entries, locks and invalidations with a node-redis cluster instance, and its invalidate() empties every master', async () => {
    emulator = await startEmulator({ latency: 100 })
    const io = new Cluster(
      cluster.rootNodes.map(({ url }) => ({ host: '127.0.0.1', port: Number(new URL(url).port) })),
      { enableOfflineQueue: false },
    )
    io.on('error', () => {})
    await new Promise((resolve) => io.once('ready', resolve))
    cleanups.push(() => io.disconnect())
    // ioredis opens each node's connection on its first command; without an offline queue a
    // command sent before is refused (a miss, so an upstream call): let them open first.
    await Promise.all(io.nodes('master').map((node) => node.ping()))
    await eventually(() => io.nodes('master').every((node) => node.status === 'ready'))
    const viaIo = await instance(2_000, fromIoredisCluster(io))
    const viaNode = await instance()
    await subscribed(viaIo.tier, viaNode.tier)
    await subscribed(viaNode.tier, viaIo.tier)
    const tokens = Array.from({ length: 8 }, () => emulator.issueToken('alice'))
    emulator.resetLog()
    await Promise.all(tokens.flatMap((token) => [viaIo.resolver.groups(token), viaNode.resolver.groups(token)]))
    expect(viaIo.tier.stats().errors + viaNode.tier.stats().errors).toBe(0)
    expect(emulator.count()).toBe(tokens.length)
    await written(tokens.length)
    const heard: SharedCacheSignal[] = []
    viaNode.tier.subscribe((signal) => heard.push(signal))
    await viaIo.tier.invalidate()
    expect(await keysPerMaster()).toEqual([0, 0, 0])
    await eventually(() => heard.some((signal) => signal.type === 'invalidate' && signal.tokenId === undefined))
    expect(viaIo.tier.stats().errors + viaNode.tier.stats().errors).toBe(0)
  })
})
