/**
 * Resolvers standing for the instances of one app, sharing one real redis-server, against
 * the emulator, while someone who can write Redis but lacks the secret tampers with it: an
 * answer kept alive past its writer's expiry, answers captured before a 401 and restored
 * after it. Neither may change a decision. And a warm decision with a tier computes no
 * fleet-wide token id (an HMAC): only the cold path does.
 */
import { createClient } from 'redis'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { createMembershipResolver, group, type MembershipResolver } from '../../src/index.js'
import type { SharedCache } from '../../src/shared-cache.js'
import { createRedisCache } from '../../redis/index.js'
import { ORG_ID, SCHOOL_GROUP_ID, startEmulator, type Emulator } from '../../testing/index.js'
import { startRedisServer, type RedisServer } from '../../demo/redis-server.js'
import { eventually, outcome, subscribed } from '../support/shared-tier-checks.js'
import { work } from '../resolver/store/lru-work.js'

const SECRET = 'k3Jx9-Qw2v7Rz0pLm4Nc8Ty1Ub6Hs5Ga2Fe'
const newClient = (url: string) => createClient({ url, disableOfflineQueue: true })
type Client = ReturnType<typeof newClient>

interface Instance {
  readonly resolver: MembershipResolver
  readonly tier: SharedCache
  readonly client: Client
  /** Calls of the tier's `tokenId` (the HMAC) made by the resolver. */
  readonly tokenIds: { count: number }
}

let redis: RedisServer
let emulator: Emulator
let admin: Client
const instances: Instance[] = []

async function startInstance(ttl: number): Promise<Instance> {
  const client = newClient(redis.url)
  client.on('error', () => {})
  await client.connect()
  const tier = createRedisCache({ client, secret: SECRET, timeout: 2_000, breaker: { failureThreshold: 1000 } })
  const tokenIds = { count: 0 }
  const counted: SharedCache = {
    ...tier,
    tokenId(token) {
      tokenIds.count++
      return tier.tokenId(token)
    },
  }
  const resolver = createMembershipResolver({ baseUrl: emulator.baseUrl, sharedCache: counted, cache: { ttl } })
  const instance = { resolver, tier, client, tokenIds }
  instances.push(instance)
  return instance
}

async function fleet(size: number, ttl = 60_000): Promise<Instance[]> {
  const started = await Promise.all(Array.from({ length: size }, () => startInstance(ttl)))
  for (const listener of started.slice(1)) await subscribed(started[0]!.tier, listener.tier)
  return started
}

/** The Redis keys of the entries of every token, by kind tag (`g`, `x`, `v`, `m:`...). */
async function keysTagged(tag: string): Promise<string[]> {
  const found: string[] = []
  for await (const keys of admin.scanIterator({ MATCH: `vg:{*}:${tag}*`, COUNT: 100 })) found.push(...keys)
  return found
}

beforeAll(async () => {
  redis = await startRedisServer()
  admin = newClient(redis.url)
  admin.on('error', () => {})
  await admin.connect()
})

afterEach(async () => {
  for (const { resolver, client } of instances.splice(0)) {
    await resolver.close()
    client.destroy()
  }
  await emulator?.close()
  await admin.flushAll()
})

afterAll(async () => {
  admin.destroy()
  await redis.stop()
})

describe('a Redis writer without the secret', () => {
  it('cannot keep a removed member in by lengthening the lifetime of a cached answer', async () => {
    emulator = await startEmulator()
    const [a, b] = await fleet(2, 300)
    const token = emulator.issueToken('bob')
    expect(await outcome(a!.resolver.check(token, group(ORG_ID)))).toBe('allowed')
    for (const key of await keysTagged('')) await admin.pExpire(key, 3_600_000)
    // bob leaves the organisation upstream; nobody calls invalidate.
    const bob = emulator.data.users.find((user) => user.id === 'bob')!
    bob.memberships = bob.memberships.filter((membership) => membership.groupId !== ORG_ID)
    await new Promise((resolve) => setTimeout(resolve, 350))
    expect(await outcome(b!.resolver.check(token, group(ORG_ID)))).toBe('denied')
  })

  it('cannot revive a revoked token by deleting its marker and restoring answers captured before the 401', async () => {
    emulator = await startEmulator()
    const [a, b, c] = await fleet(3)
    const token = emulator.issueToken('alice')
    expect(await outcome(a!.resolver.check(token, group(ORG_ID)))).toBe('allowed')
    expect(await outcome(b!.resolver.check(token, group(ORG_ID)))).toBe('allowed')
    const captured = await Promise.all((await keysTagged('g')).map(async (key) => [key, (await admin.get(key))!] as const))
    expect(captured).toHaveLength(1)
    emulator.revokeToken(token)
    // A lookup no instance has cached reaches the group service, which answers 401.
    expect(await outcome(a!.resolver.membership(token, SCHOOL_GROUP_ID) as never)).toBe('invalid')
    await eventually(async () => (await keysTagged('x')).length === 1)
    // The marker is deleted and the captured answer restored with a long lifetime.
    for (const key of await keysTagged('x')) await admin.del(key)
    for (const [key, value] of captured) await admin.set(key, value, { PX: 3_600_000 })
    // c never saw the 401: its cold lookup reads Redis, refuses the restored answer, asks the group service.
    expect(await outcome(c!.resolver.check(token, group(ORG_ID)))).toBe('invalid')
    expect(c!.tier.stats().unreadable).toBeGreaterThan(0)
  })
})

describe('the warm path with a tier', () => {
  it('computes no token id (HMAC) for a warm decision; a cold decision computes it once', async () => {
    emulator = await startEmulator()
    const [a, b] = await fleet(2)
    const token = emulator.issueToken('bob')
    // Two cold lookups: me/groups, then me/groups/{id} (absence from the list is not denial).
    expect(await outcome(a!.resolver.check(token, group(SCHOOL_GROUP_ID)))).toBe('denied')
    expect(emulator.count()).toBe(2)
    const cold = a!.tokenIds.count
    expect(cold).toBe(1)
    expect(await outcome(a!.resolver.check(token, group(ORG_ID)))).toBe('allowed')
    for (let i = 0; i < 100; i++) {
      const decided = a!.resolver.checkNow!(token, group(ORG_ID))
      expect(decided instanceof Promise ? 'cold' : decided.allowed).toBe(true)
    }
    expect(a!.tokenIds.count).toBe(cold)
    // And a peer's invalidation, which names the token id, still finds the entries keyed by the in-process digest.
    expect(await outcome(b!.resolver.check(token, group(ORG_ID)))).toBe('allowed')
    await b!.resolver.invalidate(token)
    await eventually(async () => {
      const decided = a!.resolver.checkNow!(token, group(ORG_ID))
      if (!(decided instanceof Promise)) return false
      await decided
      return true
    })
  })
})

describe('invalidation while a lookup runs', () => {
  it("another instance's invalidation reaches a cold lookup under way: its answer is not kept", async () => {
    emulator = await startEmulator({ latency: 300 })
    const [a, b] = await fleet(2)
    const token = emulator.issueToken('bob')
    const decision = a!.resolver.check(token, group(ORG_ID))
    // The lookup has read the tier and waits for the group service.
    await eventually(() => emulator.count() > 0)
    await b!.resolver.invalidate(token)
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(await outcome(decision)).toBe('allowed')
    const again = a!.resolver.checkNow!(token, group(ORG_ID))
    expect(again).toBeInstanceOf(Promise)
    await again
  })
})

describe('invalidation messages', () => {
  it("cost an instance nothing for a token it does not hold, and that token's entries for one it holds", async () => {
    emulator = await startEmulator()
    const [a] = await fleet(1)
    const tokens = ['alice', 'bob', 'carol'].map((user) => emulator.issueToken(user))
    for (const token of tokens) await a!.resolver.check(token, group(ORG_ID))
    await a!.resolver.membership(tokens[1]!, SCHOOL_GROUP_ID)
    const held = a!.resolver.stats().size
    // The tier tells this instance's listeners at once, before Redis is asked.
    const pending: Promise<void>[] = []
    const unknown = work(() => pending.push(a!.tier.invalidate(a!.tier.tokenId('nobody'))))
    expect(unknown).toEqual({ visited: 0, deleted: 0 })
    const known = work(() => pending.push(a!.tier.invalidate(a!.tier.tokenId(tokens[1]!))))
    expect(known.visited).toBe(0)
    expect(known.deleted).toBeLessThanOrEqual(5)
    await Promise.all(pending)
    expect(a!.resolver.stats().size).toBe(held - 2)
  })
})
