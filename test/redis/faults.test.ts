/**
 * The shared tier when Redis fails: stopped, frozen (SIGSTOP), restarted. Every operation
 * still settles (a miss), never rejects, and does not wait on Redis past its deadline; the
 * breaker stops asking a failing Redis and lets it back after the cool-down.
 */
import { createClient } from 'redis'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { SharedCache, SharedCacheSignal } from '../../src/shared-cache.js'
import { createRedisCache, type RedisCacheOptions, type RedisClientLike } from '../../redis/index.js'
import { startRedisServer, type RedisServer } from '../../demo/redis-server.js'

type Client = ReturnType<typeof createClient>

const SECRET = 'k3Jx9-Qw2v7Rz0pLm4Nc8Ty1Ub6Hs5Ga2Fe'
const HUNG = Symbol('hung')
/** Far above the 50 ms deadline: only an operation that waits on Redis itself takes this long. */
const HANG_BOUND = 2_000

let redis: RedisServer
let client: Client
let tier: SharedCache | undefined

beforeEach(async () => {
  redis = await startRedisServer()
  client = createClient({ url: redis.url, disableOfflineQueue: true, socket: { reconnectStrategy: () => 20 } })
  client.on('error', () => {})
  await client.connect()
})

afterEach(async () => {
  await tier?.close()
  tier = undefined
  redis.thaw()
  client.destroy()
  await redis.stop()
})

/** The client, counting the commands the tier hands it. */
function counting(): { client: RedisClientLike; sent: () => number } {
  let sent = 0
  return {
    client: {
      get isReady() {
        return client.isReady
      },
      sendCommand: (args) => {
        sent++
        return client.sendCommand(args)
      },
      duplicate: () => client.duplicate(),
    },
    sent: () => sent,
  }
}

function makeTier(options: Partial<RedisCacheOptions> = {}): { tier: SharedCache; signals: SharedCacheSignal[] } {
  tier = createRedisCache({ client, secret: SECRET, ...options })
  const signals: SharedCacheSignal[] = []
  tier.subscribe((signal) => signals.push(signal))
  return { tier, signals }
}

/** Every operation of the tier once, each raced against {@link HANG_BOUND}. */
async function everyOperation(tier: SharedCache): Promise<unknown[]> {
  const key = { tokenId: tier.tokenId('token'), kind: 'groups' } as const
  const bounded = (operation: Promise<unknown>): Promise<unknown> =>
    Promise.race([operation, new Promise((resolve) => setTimeout(resolve, HANG_BOUND, HUNG))])
  return [
    await bounded(tier.get(key)),
    await bounded(tier.set(key, ['answer'], 60_000)),
    await bounded(tier.acquire(key).then((lock) => lock.owned)),
    await bounded(tier.waitFor(key)),
    await bounded(tier.invalidate(key.tokenId)),
    await bounded(tier.invalidate()),
  ]
}

async function until(predicate: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await predicate())) await new Promise((resolve) => setTimeout(resolve, 10))
}

describe('Redis stopped', () => {
  it('makes every operation a miss at once, counted and reported, without a rejection', async () => {
    const { tier, signals } = makeTier({ breaker: { failureThreshold: 1000 } })
    await redis.stop()
    await until(() => !client.isReady)
    expect(await everyOperation(tier)).toEqual([undefined, undefined, true, undefined, undefined, undefined])
    expect(tier.health()).toBe('unreachable')
    expect(tier.stats().errors).toBeGreaterThanOrEqual(5)
    expect(signals).toContainEqual({ type: 'error', operation: 'get', code: 'not_ready' })
  })
})

describe('Redis frozen (SIGSTOP)', () => {
  it('answers every operation within the deadline as a miss, and works again after SIGCONT', async () => {
    const { tier, signals } = makeTier({ breaker: { failureThreshold: 1000 } })
    const key = { tokenId: tier.tokenId('token'), kind: 'groups' } as const
    await tier.set(key, ['before'], 60_000)
    redis.freeze()
    expect(await everyOperation(tier)).toEqual([undefined, undefined, true, undefined, undefined, undefined])
    expect(signals).toContainEqual({ type: 'error', operation: 'get', code: 'timeout' })
    expect(signals).toContainEqual({ type: 'error', operation: 'lock', code: 'timeout' })
    redis.thaw()
    // The invalidations sent while frozen run once Redis thaws: write again, then read.
    await until(async () => {
      await tier.set(key, ['after'], 60_000)
      return (await tier.get(key)) !== undefined
    })
    expect(tier.health()).toBe('ok')
  })

  it('holds no more than maxPending calls on a frozen Redis', async () => {
    const counted = counting()
    tier = createRedisCache({ client: counted.client, secret: SECRET, maxPending: 3, breaker: { failureThreshold: 1000 } })
    const signals: SharedCacheSignal[] = []
    tier.subscribe((signal) => signals.push(signal))
    const key = { tokenId: tier.tokenId('token'), kind: 'groups' } as const
    redis.freeze()
    await Promise.all(Array.from({ length: 10 }, () => tier!.get(key)))
    expect(counted.sent()).toBe(3)
    expect(signals.filter((signal) => signal.type === 'error' && signal.code === 'overloaded')).toHaveLength(7)
  })
})

describe('Redis restarted', () => {
  it('recovers, and tells listeners to drop everything (invalidations sent meanwhile were missed)', async () => {
    const { tier, signals } = makeTier()
    const key = { tokenId: tier.tokenId('token'), kind: 'groups' } as const
    // The subscription is open once an invalidation published by another instance arrives.
    const other = createRedisCache({ client, secret: SECRET })
    await until(async () => {
      await other.invalidate(key.tokenId)
      return signals.some((signal) => signal.type === 'invalidate')
    })
    await other.close()
    signals.length = 0
    await redis.stop()
    await redis.start()
    await until(async () => {
      await tier.set(key, ['after'], 60_000)
      return (await tier.get(key)) !== undefined
    })
    await until(() => signals.some((signal) => signal.type === 'invalidate' && signal.tokenId === undefined))
  })
})

describe("invalidate(token) when the token's server is out of reach", () => {
  it('still tells the other instances, through a server that answers', async () => {
    // Every script fails (as when the master holding the token is down); PUBLISH works.
    const failingScripts: RedisClientLike = {
      get isReady() {
        return client.isReady
      },
      sendCommand: (args) =>
        args[0] === 'EVAL' ? Promise.reject(Object.assign(new Error('down'), { code: 'ECONNREFUSED' })) : client.sendCommand(args),
      duplicate: () => client.duplicate(),
    }
    tier = createRedisCache({ client: failingScripts, secret: SECRET })
    const other = createRedisCache({ client, secret: SECRET })
    const heard: SharedCacheSignal[] = []
    other.subscribe((signal) => heard.push(signal))
    const tokenId = tier.tokenId('token')
    await until(async () => {
      await tier!.invalidate(tokenId)
      return heard.some((signal) => signal.type === 'invalidate' && signal.tokenId === tokenId)
    })
    expect(tier.stats().errors).toBeGreaterThan(0)
    await other.close()
  })
})

describe('breaker', () => {
  it('stops asking a failing Redis after failureThreshold failures, and asks again after the cool-down', async () => {
    const counted = counting()
    tier = createRedisCache({ client: counted.client, secret: SECRET, breaker: { failureThreshold: 3, cooldown: 300 } })
    const signals: SharedCacheSignal[] = []
    tier.subscribe((signal) => signals.push(signal))
    const key = { tokenId: tier.tokenId('token'), kind: 'groups' } as const
    await tier.set(key, ['answer'], 60_000)
    const before = counted.sent()
    redis.freeze()
    for (let i = 0; i < 10; i++) expect(await tier.get(key)).toBeUndefined()
    expect(counted.sent() - before).toBe(3)
    expect(signals.filter((signal) => signal.type === 'error' && signal.code === 'breaker_open')).toHaveLength(7)
    expect(tier.health()).toBe('unreachable')
    redis.thaw()
    await until(async () => (await tier!.get(key)) !== undefined)
    expect(tier.health()).toBe('ok')
    expect(tier.stats().hits).toBe(1)
  })
})
