/**
 * `npm start -- --redis`: the demo's guard on a shared cache tier, on a redis-server the
 * demo starts (and stops) or on one given by URL; and what it says when there is none.
 */
import { createConnection } from 'node:net'
import { createServer } from 'node:net'
import { once } from 'node:events'
import { createClient } from 'redis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startDemo, type Demo } from '../../demo/start.js'
import { startRedisServer, type RedisServer } from '../../demo/redis-server.js'
import { InvalidOptionError } from '../../src/errors.js'

/** Every key and value under the tier's default prefix. */
async function dump(url: string): Promise<{ keys: string[]; text: string }> {
  const client = createClient({ url })
  await client.connect()
  try {
    const keys: string[] = []
    for await (const batch of client.scanIterator({ MATCH: 'vg:*' })) keys.push(...batch)
    const values = await Promise.all(
      keys.map(async (key) => ((await client.type(key)) === 'string' ? ((await client.get(key)) ?? '') : '')),
    )
    return { keys, text: [...keys, ...values].join('\n') }
  } finally {
    client.destroy()
  }
}

/** Whether something accepts connections on the port of `url`. */
async function answers(url: string): Promise<boolean> {
  const socket = createConnection(Number(new URL(url).port), '127.0.0.1')
  try {
    await once(socket, 'connect')
    return true
  } catch {
    return false
  } finally {
    socket.destroy()
  }
}

/** Requests every curl line of the guide and checks the status it promises. */
async function replayGuide(demo: Demo): Promise<void> {
  for (const line of demo.curlLines) {
    const response = await fetch(line.url, { headers: { ...line.headers } })
    await response.arrayBuffer()
    expect(response.status, line.description).toBe(line.expectedStatus)
  }
}

describe('with a redis-server of its own (true)', () => {
  let demo: Demo
  let guide = ''
  beforeAll(async () => {
    demo = await startDemo({ port: 0, emulatorPort: 0, redis: true, print: (text) => (guide += text) })
  })
  afterAll(async () => {
    await demo.close()
  })

  it('serves every line of the guide, and the answers land in Redis without a token in sight', async () => {
    expect(demo.redisUrl).toMatch(/^redis:\/\/127\.0\.0\.1:\d+$/)
    expect(guide).toContain(`redis      ${demo.redisUrl}`)
    expect(guide).toContain('gone when it stops')
    expect(guide).toContain('--scan --pattern')
    await replayGuide(demo)
    const { keys, text } = await dump(demo.redisUrl ?? '')
    expect(keys.length).toBeGreaterThan(0)
    for (const token of [...Object.values(demo.tokens), demo.faultToken]) expect(text).not.toContain(token)
    expect(text).not.toContain('fc:org:example.org')
  })

  it('stops its redis-server with the demo', async () => {
    const url = demo.redisUrl ?? ''
    expect(await answers(url)).toBe(true)
    await demo.close()
    expect(await answers(url)).toBe(false)
  })
})

describe('with the URL of a running Redis', () => {
  let redis: RedisServer
  beforeAll(async () => {
    redis = await startRedisServer()
  })
  afterAll(async () => {
    await redis.stop()
  })

  it('uses it, and leaves it running when the demo stops', async () => {
    let guide = ''
    const demo = await startDemo({ port: 0, emulatorPort: 0, redis: redis.url, print: (text) => (guide += text) })
    try {
      expect(demo.redisUrl).toBe(redis.url)
      expect(guide).toContain(`redis      ${redis.url}   (the shared cache tier)`)
      await replayGuide(demo)
      expect((await dump(redis.url)).keys.length).toBeGreaterThan(0)
    } finally {
      await demo.close()
    }
    expect(await answers(redis.url)).toBe(true)
  })
})

describe('without a Redis', () => {
  it('says that redis-server is missing and how to get one', async () => {
    const path = process.env.PATH
    process.env.PATH = '/nonexistent'
    try {
      const starting = startDemo({ port: 0, emulatorPort: 0, redis: true, print: () => {} })
      await expect(starting).rejects.toThrow(InvalidOptionError)
      await expect(starting).rejects.toThrow(/redis-server.*apt install redis-server.*REDIS_URL/)
    } finally {
      process.env.PATH = path
    }
  })

  it('refuses a URL where no Redis answers, naming the option', async () => {
    // A port that was free a moment ago: nothing listens there.
    const server = createServer().listen(0, '127.0.0.1')
    await once(server, 'listening')
    const { port } = server.address() as { port: number }
    await new Promise((resolve) => server.close(resolve))
    await expect(startDemo({ port: 0, emulatorPort: 0, redis: `redis://127.0.0.1:${port}`, print: () => {} })).rejects.toThrow(
      /options\.redis.*no Redis answered/,
    )
  })

  it('refuses a redis option that is neither true nor a URL', async () => {
    await expect(startDemo({ redis: 6379 as never, print: () => {} })).rejects.toThrow(InvalidOptionError)
  })
})
