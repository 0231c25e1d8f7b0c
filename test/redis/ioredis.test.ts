/**
 * ioredis through the few lines docs/redis.md shows (examples/redis/ioredis-client.ts):
 * a tier on ioredis and a tier on node-redis share entries, locks and invalidations on a
 * real redis-server. An ioredis client passed as it is gets a clear error.
 */
import { readFileSync } from 'node:fs'
import { Redis } from 'ioredis'
import { createClient } from 'redis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { fromIoredis } from '../../examples/redis/ioredis-client.js'
import { InvalidOptionError } from '../../src/errors.js'
import type { SharedCacheSignal } from '../../src/shared-cache.js'
import { createRedisCache } from '../../redis/index.js'
import { startRedisServer, type RedisServer } from '../../demo/redis-server.js'

const SECRET = 'k3Jx9-Qw2v7Rz0pLm4Nc8Ty1Ub6Hs5Ga2Fe'
let server: RedisServer

beforeAll(async () => {
  server = await startRedisServer()
})
afterAll(async () => {
  await server.stop()
})

describe('docs/redis.md', () => {
  const docs = readFileSync(new URL('../../docs/redis.md', import.meta.url), 'utf8')
  const blocks = [...docs.matchAll(/```ts\n\/\/ (examples\/[^\s]+)[^\n]*\n([\s\S]*?)```/g)]

  it('shows the ioredis adapter, every line from the tested example, in order', () => {
    expect(blocks.map((block) => block[1])).toContain('examples/redis/ioredis-client.ts')
    for (const [, file, body] of blocks) {
      const source = readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8')
        .split('\n')
        .map((line) => line.trim())
      let at = 0
      for (const line of (body ?? '')
        .split('\n')
        .map((l) => l.trim())
        .filter((l) => l !== '' && l !== '// …')) {
        const found = source.indexOf(line, at)
        expect(found, `docs line not found in order in ${file}: ${line}`).toBeGreaterThanOrEqual(0)
        at = found + 1
      }
    }
  })
})

describe('ioredis', () => {
  it('refuses an ioredis client passed as it is, naming the adapter', () => {
    const raw = new Redis(server.port, '127.0.0.1', { lazyConnect: true })
    expect(() => createRedisCache({ client: raw as never, secret: SECRET })).toThrow(InvalidOptionError)
    expect(() => createRedisCache({ client: raw as never, secret: SECRET })).toThrow(/docs\/redis\.md/)
    raw.disconnect()
  })

  it('shares entries, locks and invalidations with a node-redis instance', async () => {
    const io = new Redis(server.port, '127.0.0.1', { enableOfflineQueue: false })
    io.on('error', () => {})
    await new Promise((resolve) => io.once('ready', resolve))
    const node = createClient({ url: server.url })
    node.on('error', () => {})
    await node.connect()
    const viaIo = createRedisCache({ client: fromIoredis(io), secret: SECRET, timeout: 2_000 })
    const viaNode = createRedisCache({ client: node, secret: SECRET, timeout: 2_000 })
    try {
      const tokenId = viaIo.tokenId('token')
      const key = { tokenId, kind: 'membership', groupId: 'fc:org:example.org' } as const
      const lock = await viaIo.acquire(key)
      expect(lock.owned).toBe(true)
      expect((await viaNode.acquire(key)).owned).toBe(false)
      await viaIo.set(key, { basic: 'admin' }, 60_000)
      expect((await viaNode.waitFor(key))?.value).toEqual({ basic: 'admin' })
      if (lock.owned) await lock.release()
      await viaNode.set({ tokenId, kind: 'groups' }, ['g'], 60_000)
      expect((await viaIo.get({ tokenId, kind: 'groups' }))?.value).toEqual(['g'])

      const heard: SharedCacheSignal[] = []
      viaIo.subscribe((signal) => heard.push(signal))
      while (!heard.some((signal) => signal.type === 'invalidate' && signal.tokenId === tokenId)) {
        await viaNode.invalidate(tokenId)
        await new Promise((resolve) => setTimeout(resolve, 10))
      }
      expect(await viaIo.get(key)).toBeUndefined()
      expect(viaIo.stats().errors + viaNode.stats().errors).toBe(0)
    } finally {
      await viaIo.close()
      await viaNode.close()
      io.disconnect()
      node.destroy()
    }
  })
})
