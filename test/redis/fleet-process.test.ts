/**
 * The fleet as separate processes: two instances (test/support/fleet-instance.ts), each its
 * own Node.js process with its own Redis connections, one redis-server, one emulator. Answers
 * fetched by one are served by the other, concurrent cold lookups cost one upstream call,
 * and an invalidation on one reaches the other.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { fileURLToPath } from 'node:url'
import { request } from 'undici'
import { createClient } from 'redis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ORG_ID, startEmulator, type Emulator } from '../../testing/index.js'
import { startRedisServer, type RedisServer } from '../../demo/redis-server.js'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const SECRET = 'k3Jx9-Qw2v7Rz0pLm4Nc8Ty1Ub6Hs5Ga2Fe'
let redis: RedisServer
let emulator: Emulator
const children: ChildProcess[] = []
const urls: string[] = []

async function startInstance(): Promise<string> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/support/fleet-instance.ts'], {
    cwd: ROOT,
    // A deadline far above a loaded machine's stalls: these tests are about sharing, not faults.
    env: { ...process.env, REDIS_URL: redis.url, BASE_URL: emulator.baseUrl, VOOT_CACHE_SECRET: SECRET, REDIS_TIMEOUT: '2000' },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  children.push(child)
  let output = ''
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (output += chunk))
  while (!/listening (\S+)\n/.test(output)) {
    if (child.exitCode !== null) throw new Error(`instance exited: ${output}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  return /listening (\S+)\n/.exec(output)![1]!
}

async function call(url: string, path: string, token: string): Promise<unknown> {
  const response = await request(`${url}${path}`, {
    method: path === '/invalidate' ? 'POST' : 'GET',
    headers: { authorization: `Bearer ${token}` },
  })
  return response.body.json()
}

/**
 * How many `me/groups` answers the shared tier holds (their keys end in `}:g`). Not the
 * database's size: a cold lookup's fleet-wide lock is a key too, set before the answer is
 * fetched, so a count of every key can grow before the answer is written.
 */
async function groupsEntries(): Promise<number> {
  const client = createClient({ url: redis.url })
  await client.connect()
  try {
    return (await client.keys('*}:g')).length
  } finally {
    client.destroy()
  }
}

async function waitFor(condition: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 5_000
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('timed out waiting for the shared tier')
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

beforeAll(async () => {
  redis = await startRedisServer()
  emulator = await startEmulator({ latency: 150 })
  urls.push(...(await Promise.all([startInstance(), startInstance()])))
}, 60_000)

afterAll(async () => {
  await Promise.all(
    children.map(async (child) => {
      if (child.exitCode !== null) return
      const exited = once(child, 'exit')
      child.kill('SIGTERM')
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 3_000))])
      if (child.exitCode === null) child.kill('SIGKILL')
    }),
  )
  await emulator.close()
  await redis.stop()
})

describe('two instance processes sharing one Redis', () => {
  it('share answers, and concurrent cold lookups cost one upstream call', async () => {
    const [one, two] = urls as [string, string]
    const token = emulator.issueToken('alice')
    emulator.resetLog()
    const [first, second] = await Promise.all([call(one, '/groups', token), call(two, '/groups', token)])
    expect(second).toEqual(first)
    expect(emulator.count()).toBe(1)
    const other = emulator.issueToken('bob')
    const entriesBefore = await groupsEntries()
    expect(await call(one, `/check?group=${encodeURIComponent(ORG_ID)}`, other)).toEqual({ outcome: 'allowed' })
    // The shared tier is written behind the answer: wait for the write, not for luck.
    await waitFor(async () => (await groupsEntries()) > entriesBefore)
    const calls = emulator.count()
    expect(await call(two, `/check?group=${encodeURIComponent(ORG_ID)}`, other)).toEqual({ outcome: 'allowed' })
    expect(emulator.count()).toBe(calls)
  })

  it('carry an invalidation from one process to the other', async () => {
    const [one, two] = urls as [string, string]
    const token = emulator.issueToken('bob')
    const path = `/check?group=${encodeURIComponent(ORG_ID)}`
    expect(await call(one, path, token)).toEqual({ outcome: 'allowed' })
    expect(await call(two, path, token)).toEqual({ outcome: 'allowed' })
    emulator.revokeToken(token)
    await call(one, '/invalidate', token)
    // Once instance two dropped its copy, it asks (Redis has none either) and hears 401.
    while (((await call(two, path, token)) as { outcome: string }).outcome !== 'invalid') {
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
  })
})
