/**
 * One digest of the token per request, warm or cold: counted, not timed. Every call into
 * `node:crypto` or SipHash that is given the token (the cache key's digest, the shared
 * tier's keyed hash) is counted, through the guard core and through every adapter on a real
 * server, with and without a shared tier on a real redis-server.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest'
import { request } from 'undici'
import { createClient } from 'redis'

const seen = vi.hoisted(() => ({ tokens: new Set<string>(), digests: 0, groupId: '', groupDigests: 0 }))

/** Counts a digest when `input` is (or ends with) a token under test, unless the emulator (which keeps its tokens hashed) made it. */
function countIfToken(input: unknown): void {
  if (typeof input !== 'string' && !Buffer.isBuffer(input)) return
  if (new Error().stack?.includes('/testing/') === true) return
  const text = input.toString()
  for (const token of seen.tokens) if (text.endsWith(token)) seen.digests++
}

vi.mock('node:crypto', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:crypto')>()
  return {
    ...actual,
    hash: (...args: Parameters<typeof actual.hash>) => {
      countIfToken(args[1])
      return actual.hash(...args)
    },
    createHash: (...args: Parameters<typeof actual.createHash>) => {
      const hasher = actual.createHash(...args)
      const update = hasher.update.bind(hasher) as (data: unknown, encoding?: unknown) => typeof hasher
      return Object.assign(hasher, {
        update: (data: unknown, encoding?: unknown) => {
          countIfToken(data)
          return update(data, encoding)
        },
      })
    },
    createHmac: (...args: Parameters<typeof actual.createHmac>) => {
      const hmac = actual.createHmac(...args)
      const update = hmac.update.bind(hmac) as (data: unknown, encoding?: unknown) => typeof hmac
      return Object.assign(hmac, {
        update: (data: unknown, encoding?: unknown) => {
          countIfToken(data)
          // The shared tier's name of a membership: an HMAC over the token id and the group id.
          if (data === seen.groupId) seen.groupDigests++
          return update(data, encoding)
        },
      })
    },
  }
})

// The digest of a short token is SipHash, in JavaScript (read in place in a header, or of a
// whole token): counted the same way, on what it reads.
vi.mock('../../src/resolver/store/siphash.js', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../../src/resolver/store/siphash.js')>()
  return {
    ...actual,
    createSipHash128Words: (key: Uint8Array, tag: Int32Array) => {
      const sip = actual.createSipHash128Words(key, tag)
      return (input: string, from: number, to: number) => {
        countIfToken(input.slice(from, to))
        return sip(input, from, to)
      }
    },
  }
})

const { createGuardCore } = await import('../../src/adapter-kit.js')
const { group, createMembershipResolver } = await import('../../src/index.js')
const { createRedisCache } = await import('../../redis/index.js')
const { startRedisServer } = await import('../../demo/redis-server.js')
const { startEmulator, ORG_ID } = await import('../../testing/index.js')
const { FRAMEWORKS, startApp } = await import('../support/apps.js')

type Emulator = Awaited<ReturnType<typeof startEmulator>>
type RedisServer = Awaited<ReturnType<typeof startRedisServer>>

let emulator: Emulator
let redis: RedisServer

beforeAll(async () => {
  emulator = await startEmulator()
  redis = await startRedisServer()
})
afterAll(async () => {
  await emulator.close()
  await redis.stop()
})
beforeEach(() => {
  seen.tokens.clear()
})

/** A token of `user` seen for the first time, counted from now on. */
function newToken(user: string): string {
  const token = emulator.issueToken(user)
  seen.tokens.add(token)
  return token
}

/** How many digests of the token `run` made. */
async function digestsOf(run: () => unknown): Promise<number> {
  const before = seen.digests
  await run()
  return seen.digests - before
}

describe('the guard core: one digest per decision', () => {
  it.each([
    ['in process', false],
    ['with a shared tier', true],
  ])('%s: cold and warm, allowed and denied', async (_label, withTier) => {
    const client = withTier ? await createClient({ url: redis.url }).connect() : undefined
    const sharedCache =
      client === undefined ? undefined : createRedisCache({ client, secret: 'a secret of at least thirty-two characters' })
    const core = createGuardCore({ baseUrl: emulator.baseUrl, ...(sharedCache === undefined ? {} : { sharedCache }) })
    const allowed = group(ORG_ID, 'admin')
    const denied = group(ORG_ID, 'owner')
    try {
      const token = newToken('alice')
      const credentials = { authorization: `Bearer ${token}` }
      // Cold: a miss, `me/groups`, then the membership (the owner requirement needs it). With
      // a tier, a cold decision also computes the tier's token id, once; a warm one does not.
      const cold = withTier ? 2 : 1
      expect(await digestsOf(() => core.authorizeNow(credentials, allowed))).toBe(cold)
      seen.groupId = ORG_ID
      const groupDigests = seen.groupDigests
      expect(await digestsOf(() => (core.authorizeNow(credentials, denied) as Promise<unknown>).catch(() => undefined))).toBe(cold)
      // The tier names the membership's entry and lock (read, lock, write) from one HMAC of the group id.
      expect(seen.groupDigests - groupDigests).toBe(withTier ? 1 : 0)
      // Warm: decided from the cache.
      const warm = await digestsOf(() => {
        expect(core.authorizeNow(credentials, allowed)).not.toBeInstanceOf(Promise)
      })
      expect(warm).toBe(1)
      expect(await digestsOf(() => (core.authorizeNow(credentials, denied) as Promise<unknown>).catch(() => undefined))).toBe(1)
      // A cold decision for another token counts the same.
      const other = { authorization: `Bearer ${newToken('bob')}` }
      expect(await digestsOf(() => Promise.resolve(core.authorizeNow(other, allowed)).catch(() => undefined))).toBe(cold)
      expect(await digestsOf(() => core.resolver.check(token, allowed))).toBe(1)
    } finally {
      await core.resolver.close()
      if (client !== undefined) await client.quit()
    }
  })
})

describe.each(FRAMEWORKS)('%s adapter: one digest per request for the guard', (framework) => {
  let app: Awaited<ReturnType<typeof startApp>>
  beforeAll(async () => {
    app = await startApp(framework, { baseUrl: emulator.baseUrl, cache: { ttl: 60_000 } })
  })
  afterAll(async () => {
    await app.close()
  })

  async function get(path: string, token: string): Promise<number> {
    const response = await request(`${app.url}${path}`, { headers: { authorization: `Bearer ${token}` } })
    await response.body.dump()
    return response.statusCode
  }

  it('denied (the handler does not run): one digest cold, one warm', async () => {
    const token = newToken('alice')
    let status = 0
    expect(await digestsOf(async () => (status = await get('/strict', token)))).toBe(1)
    expect(status).toBe(403)
    expect(await digestsOf(async () => (status = await get('/strict', token)))).toBe(1)
    expect(status).toBe(403)
  })

  it("allowed: one digest for the guard, one for the handler's own req.voot.groups(), cold and warm", async () => {
    const token = newToken('alice')
    let status = 0
    expect(await digestsOf(async () => (status = await get('/admin', token)))).toBe(2)
    expect(status).toBe(200)
    expect(await digestsOf(async () => (status = await get('/admin', token)))).toBe(2)
    expect(status).toBe(200)
  })
})
