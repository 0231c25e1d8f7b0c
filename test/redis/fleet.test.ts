/**
 * Resolvers standing for the instances of one app, sharing one real redis-server through
 * the tier, against the emulator: answers shared across instances, one upstream call for
 * concurrent cold lookups on three instances, invalidation and 401 revocation reaching every
 * instance, and Redis faults never turning into allowed, denied or 503 by themselves.
 */
import { createClient } from 'redis'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { createMembershipResolver, group, type MembershipResolver } from '../../src/index.js'
import type { SharedCache } from '../../src/shared-cache.js'
import { createRedisCache } from '../../redis/index.js'
import { ADHOC_GROUP_ID, ORG_ID, SCHOOL_GROUP_ID, startEmulator, type Emulator } from '../../testing/index.js'
import { startRedisServer, type RedisServer } from '../../demo/redis-server.js'
import { eventually, outcome, subscribed as heard } from '../support/shared-tier-checks.js'

const SECRET = 'k3Jx9-Qw2v7Rz0pLm4Nc8Ty1Ub6Hs5Ga2Fe'
const newClient = (url: string) => createClient({ url, disableOfflineQueue: true, socket: { reconnectStrategy: () => 20 } })
type Client = ReturnType<typeof newClient>

interface Instance {
  readonly resolver: MembershipResolver
  readonly tier: SharedCache
  readonly client: Client
}

let redis: RedisServer
let emulator: Emulator
const instances: Instance[] = []

/** `timeout`: the tier's deadline; far above a loaded machine's stalls unless a test is about faults. */
async function startInstance(timeout: number): Promise<Instance> {
  const client = newClient(redis.url)
  client.on('error', () => {})
  await client.connect()
  const tier = createRedisCache({ client, secret: SECRET, timeout, breaker: { failureThreshold: 1000 } })
  const resolver = createMembershipResolver({ baseUrl: emulator.baseUrl, sharedCache: tier })
  const instance = { resolver, tier, client }
  instances.push(instance)
  return instance
}

async function fleet(size: number, timeout = 2_000): Promise<Instance[]> {
  const started = await Promise.all(Array.from({ length: size }, () => startInstance(timeout)))
  await subscribed(started)
  return started
}

/** Resolves once every instance hears invalidations from the others (the subscriptions open in the background). */
async function subscribed(fleet: readonly Instance[]): Promise<void> {
  for (const listener of fleet.slice(1)) await heard(fleet[0]!.tier, listener.tier)
}

beforeAll(async () => {
  redis = await startRedisServer()
})

afterEach(async () => {
  redis.thaw()
  if (!(await isUp())) await redis.start()
  for (const { resolver, tier, client } of instances.splice(0)) {
    await resolver.close()
    await tier.close()
    client.destroy()
  }
  await emulator?.close()
  const cleaner = newClient(redis.url)
  await cleaner.connect()
  await cleaner.flushAll()
  cleaner.destroy()
})

afterAll(async () => {
  await redis.stop()
})

async function isUp(): Promise<boolean> {
  const probe = newClient(redis.url)
  probe.on('error', () => {})
  try {
    await probe.connect()
    probe.destroy()
    return true
  } catch {
    return false
  }
}

describe('a fleet sharing one Redis', () => {
  it('answers from what another instance fetched, without asking the group service again', async () => {
    emulator = await startEmulator()
    const [a, b, c] = await fleet(3)
    const token = emulator.issueToken('bob')
    expect(await outcome(a!.resolver.check(token, group(ORG_ID)))).toBe('allowed')
    const calls = emulator.count()
    expect(await outcome(b!.resolver.check(token, group(ORG_ID)))).toBe('allowed')
    expect(await outcome(c!.resolver.check(token, group(ORG_ID)))).toBe('allowed')
    expect(await c!.resolver.groups(token)).toEqual(await a!.resolver.groups(token))
    expect(emulator.count()).toBe(calls)
    expect(b!.tier.stats().hits).toBeGreaterThan(0)
  })

  it('costs one upstream call for concurrent cold lookups of one token on three instances', async () => {
    emulator = await startEmulator({ latency: 150 })
    const [a, b, c] = await fleet(3)
    const token = emulator.issueToken('alice')
    emulator.resetLog()
    const answers = await Promise.all([a, b, c].map((instance) => instance!.resolver.groups(token)))
    expect(emulator.count()).toBe(1)
    expect(answers[1]).toEqual(answers[0])
    expect(answers[2]).toEqual(answers[0])
  })

  it('carries invalidate(token) to every instance', async () => {
    emulator = await startEmulator()
    const [a, b] = await fleet(2)
    const token = emulator.issueToken('bob')
    expect(await outcome(a!.resolver.check(token, group(ORG_ID)))).toBe('allowed')
    expect(await outcome(b!.resolver.check(token, group(ORG_ID)))).toBe('allowed')
    // bob leaves the organisation; the app learns of it and invalidates on instance a.
    const bob = emulator.data.users.find((user) => user.id === 'bob')!
    bob.memberships = bob.memberships.filter((membership) => membership.groupId !== ORG_ID)
    await a!.resolver.invalidate(token)
    await eventually(async () => (await outcome(b!.resolver.check(token, group(ORG_ID)))) === 'denied')
    expect(await outcome(a!.resolver.check(token, group(ORG_ID)))).toBe('denied')
  })

  it('carries a 401 from the group service to every instance, which then refuse the token without asking', async () => {
    emulator = await startEmulator()
    const [a, b, c] = await fleet(3)
    const token = emulator.issueToken('alice')
    for (const instance of [a, b, c]) expect(await outcome(instance!.resolver.check(token, group(ORG_ID)))).toBe('allowed')
    emulator.revokeToken(token)
    // A lookup no instance has cached reaches the group service, which answers 401.
    expect(await outcome(a!.resolver.membership(token, SCHOOL_GROUP_ID) as never)).toBe('invalid')
    const calls = emulator.count()
    await eventually(async () => (await outcome(b!.resolver.check(token, group(ORG_ID)))) === 'invalid')
    await eventually(async () => (await outcome(c!.resolver.check(token, group(ADHOC_GROUP_ID)))) === 'invalid')
    expect(emulator.count()).toBe(calls)
  })
})

describe('Redis faults never decide', () => {
  it.each(['frozen', 'stopped'] as const)(
    'Redis %s: every request is still allowed or denied from the group service, never 503',
    async (fault) => {
      emulator = await startEmulator()
      const [a, b] = await fleet(2, 50)
      const bob = emulator.issueToken('bob')
      const alice = emulator.issueToken('alice')
      expect(await outcome(a!.resolver.check(bob, group(ORG_ID)))).toBe('allowed')
      if (fault === 'frozen') redis.freeze()
      else await redis.stop()
      expect(await outcome(b!.resolver.check(bob, group(ORG_ID)))).toBe('allowed')
      expect(await outcome(b!.resolver.check(bob, group(ADHOC_GROUP_ID, 'owner')))).toBe('denied')
      expect(await outcome(a!.resolver.check(alice, group(ADHOC_GROUP_ID, 'owner')))).toBe('allowed')
      expect(await outcome(a!.resolver.check(alice, group(SCHOOL_GROUP_ID)))).toBe('denied')
      expect(b!.tier.health()).toBe('unreachable')
      expect(b!.tier.stats().errors).toBeGreaterThan(0)
      redis.thaw()
      if (fault === 'stopped') await redis.start()
    },
  )

  it('Redis restarted: the fleet shares answers again', async () => {
    emulator = await startEmulator()
    const [a, b] = await fleet(2, 50)
    await redis.stop()
    await redis.start()
    // A fresh token each round: an answer a fetched while its client was reconnecting is in its L1 only.
    await eventually(async () => {
      const token = emulator.issueToken('bob')
      await a!.resolver.groups(token)
      const calls = emulator.count()
      await b!.resolver.groups(token)
      return emulator.count() === calls
    })
  })
})
