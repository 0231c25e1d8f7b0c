/**
 * `npm run bench:fleet`: the fleet figure of the shared cache tier (issue 12). Four instance
 * processes (test/support/fleet-instance.ts) behind a round-robin load generator, one shared
 * emulator, one redis-server, a rotating population of tokens; the same load with and
 * without the tier, in one run:
 *
 * - upstream calls per distinct token (goal: at most 1.1 with the tier, about 4 without);
 * - requests per second and p99 of an L1 hit, an L2 hit and an upstream call;
 * - Redis up, frozen (SIGSTOP) and stopped: throughput, p99 and 503s;
 * - bytes per token in Redis (`MEMORY USAGE`).
 *
 * `--cluster` runs the same on a Redis Cluster of three masters (node-redis cluster clients),
 * with a master killed during one load and restarted after it; `--sentinel` behind Sentinel
 * (a master, a replica, three sentinels; node-redis sentinel clients), with the master
 * killed during one load (a failover) and restarted after it as a replica.
 *
 * @module
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { fileURLToPath } from 'node:url'
import { createClient } from 'redis'
import { Agent, request } from 'undici'
import { createRedisCache } from '../redis/index.js'
import { ORG_ID, startEmulator, type Emulator } from '../testing/index.js'
import { startRedisServer } from '../demo/redis-server.js'
import { startRedisCluster, startRedisSentinel } from '../test/support/redis-topology.js'
import { formatMs, formatRatio, percentileOfSorted, sortedCopy } from './stats.js'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const SECRET = 'bench-secret-0123456789-abcdefghijklmnop'
const INSTANCES = 4
const TOKENS = Number(process.env.FLEET_TOKENS ?? 200)
const ROUNDS = 4
const CONCURRENCY = 16
const UPSTREAM_LATENCY = 20
const dispatcher = new Agent({ connections: CONCURRENCY * 2 })
const CHECK = `/check?group=${encodeURIComponent(ORG_ID)}`

/** A Redis deployment under test: how instances find it, and the faults run on it. */
interface Deployment {
  readonly name: string
  /** REDIS_URL, REDIS_CLUSTER or REDIS_SENTINEL for test/support/fleet-instance.ts. */
  readonly env: Record<string, string>
  /** Each fault: begun before a load, ended after it (Redis up again). */
  readonly faults: readonly { readonly name: string; begin(): Promise<void>; end(): Promise<void> }[]
  /** The URL of a plain server holding every key, for `MEMORY USAGE` (single node only). */
  readonly singleUrl?: string
  stop(): Promise<void>
}

async function startDeployment(kind: string): Promise<Deployment> {
  if (kind === 'cluster') {
    const cluster = await startRedisCluster()
    const [, victim] = cluster.masters
    if (victim === undefined) throw new Error('the cluster has fewer than two masters')
    return {
      name: 'Redis Cluster, three masters',
      env: { REDIS_CLUSTER: cluster.rootNodes.map(({ url }) => url).join(',') },
      faults: [
        {
          name: 'a master killed',
          begin: () => victim.kill(),
          end: async () => {
            await victim.start()
            await cluster.healthy()
          },
        },
      ],
      stop: () => cluster.stop(),
    }
  }
  if (kind === 'sentinel') {
    const sentinel = await startRedisSentinel()
    let victim = await sentinel.master()
    return {
      name: 'Sentinel: a master, a replica, three sentinels',
      env: { REDIS_SENTINEL: `${sentinel.name}@${sentinel.sentinelRootNodes.map(({ host, port }) => `${host}:${port}`).join(',')}` },
      faults: [
        {
          name: 'the master killed (failover)',
          begin: async () => {
            victim = await sentinel.master()
            await victim.kill()
          },
          end: () => victim.start(),
        },
      ],
      stop: () => sentinel.stop(),
    }
  }
  const server = await startRedisServer()
  return {
    name: 'one redis-server',
    env: { REDIS_URL: server.url },
    singleUrl: server.url,
    faults: [
      {
        name: 'frozen',
        begin: () => {
          server.freeze()
          return Promise.resolve()
        },
        end: () => {
          server.thaw()
          return Promise.resolve()
        },
      },
      {
        name: 'stopped',
        begin: () => server.stop(),
        end: () => server.start(),
      },
    ],
    stop: () => server.stop(),
  }
}

async function startInstance(deployment: Deployment, emulator: Emulator, withTier: boolean): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/support/fleet-instance.ts'], {
    cwd: ROOT,
    env: {
      ...process.env,
      ...deployment.env,
      // FLEET_REDIS_TIMEOUT: the tier's deadline, when the default 50 ms is too short for a busy machine.
      ...(process.env.FLEET_REDIS_TIMEOUT === undefined ? {} : { REDIS_TIMEOUT: process.env.FLEET_REDIS_TIMEOUT }),
      BASE_URL: emulator.baseUrl,
      VOOT_CACHE_SECRET: SECRET,
      NO_TIER: withTier ? '0' : '1',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  let output = ''
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (output += chunk))
  while (!/listening (\S+)\n/.test(output)) {
    if (child.exitCode !== null) throw new Error(`instance exited: ${output}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  return { url: /listening (\S+)\n/.exec(output)?.[1] ?? '', child }
}

async function stopAll(children: readonly ChildProcess[]): Promise<void> {
  await Promise.all(
    children.map(async (child) => {
      const exited = once(child, 'exit')
      child.kill('SIGTERM')
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 3_000))])
      if (child.exitCode === null) child.kill('SIGKILL')
    }),
  )
}

/** One request; its time in ms and HTTP-level outcome. */
async function timed(url: string, token: string): Promise<{ ms: number; outcome: string }> {
  const started = performance.now()
  const response = await request(`${url}${CHECK}`, { dispatcher, headers: { authorization: `Bearer ${token}` } })
  const { outcome } = (await response.body.json()) as { outcome: string }
  return { ms: performance.now() - started, outcome }
}

interface LoadResult {
  readonly rps: number
  readonly p99: number
  readonly outcomes: Record<string, number>
}

/** `requests` (instance, token) pairs, CONCURRENCY at a time. */
async function load(requests: readonly (readonly [string, string])[]): Promise<LoadResult> {
  const times: number[] = []
  const outcomes: Record<string, number> = {}
  let next = 0
  const started = performance.now()
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < requests.length) {
        const pair = requests[next++]
        if (pair === undefined) break
        const [url, token] = pair
        const { ms, outcome } = await timed(url, token)
        times.push(ms)
        outcomes[outcome] = (outcomes[outcome] ?? 0) + 1
      }
    }),
  )
  const seconds = (performance.now() - started) / 1000
  return { rps: requests.length / seconds, p99: percentileOfSorted(sortedCopy(times), 99), outcomes }
}

/** Every token asked ROUNDS times on each instance: round-robin over the instances, each round shifted by one. */
function rotation(urls: readonly string[], tokens: readonly string[]): (readonly [string, string])[] {
  const requests: (readonly [string, string])[] = []
  for (let round = 0; round < ROUNDS * urls.length; round++) {
    tokens.forEach((token, i) => requests.push([urls[(i + round) % urls.length] ?? '', token]))
  }
  return requests
}

async function fleetRun(deployment: Deployment, emulator: Emulator, withTier: boolean): Promise<Record<string, string>> {
  const started = await Promise.all(Array.from({ length: INSTANCES }, () => startInstance(deployment, emulator, withTier)))
  const urls = started.map(({ url }) => url)
  try {
    const tokens = Array.from({ length: TOKENS }, (_, i) => emulator.issueToken(i % 2 === 0 ? 'alice' : 'bob'))
    emulator.resetLog()
    const result = await load(rotation(urls, tokens))
    const perToken = emulator.count() / TOKENS
    const row: Record<string, string> = {
      'upstream calls per token': formatRatio(perToken),
      'requests/s': result.rps.toFixed(0),
      'p99 ms': formatMs(result.p99),
      outcomes: JSON.stringify(result.outcomes),
    }
    if (!withTier) return row
    const stats = await Promise.all(urls.map(async (url) => (await request(`${url}/stats`, { dispatcher })).body.json()))
    row['tier stats, summed'] = JSON.stringify(
      stats.reduce<Record<string, number>>((sum, one) => {
        for (const [name, value] of Object.entries(one as Record<string, number>)) sum[name] = (sum[name] ?? 0) + value
        return sum
      }, {}),
    )
    // One request class at a time, sequentially, on instance 0: L1 hit, L2 hit, upstream.
    const [first, second] = urls as [string, string]
    const classes = { l1: [] as number[], l2: [] as number[], upstream: [] as number[] }
    for (let i = 0; i < 200; i++) {
      const token = emulator.issueToken('bob')
      classes.upstream.push((await timed(first, token)).ms)
      classes.l1.push((await timed(first, token)).ms)
      classes.l2.push((await timed(second, token)).ms)
    }
    const p = (name: keyof typeof classes, at: number): number => percentileOfSorted(sortedCopy(classes[name]), at)
    row['p50 l1/l2/upstream ms'] = `${formatMs(p('l1', 50))} / ${formatMs(p('l2', 50))} / ${formatMs(p('upstream', 50))}`
    row['p99 l1/l2/upstream ms'] = `${formatMs(p('l1', 99))} / ${formatMs(p('l2', 99))} / ${formatMs(p('upstream', 99))}`
    // Redis up, then each fault of the deployment: the same load, fresh tokens.
    for (const fault of [undefined, ...deployment.faults]) {
      await fault?.begin()
      const faultTokens = Array.from({ length: TOKENS / 2 }, () => emulator.issueToken('bob'))
      const faulted = await load(rotation(urls, faultTokens))
      await fault?.end()
      row[`redis ${fault?.name ?? 'up'}: requests/s, p99 ms, outcomes`] =
        `${faulted.rps.toFixed(0)}, ${formatMs(faulted.p99)}, ${JSON.stringify(faulted.outcomes)}`
    }
    return row
  } finally {
    await stopAll(started.map(({ child }) => child))
  }
}

async function bytesPerToken(url: string): Promise<number> {
  const client = createClient({ url })
  await client.connect()
  const tier = createRedisCache({ client, secret: SECRET })
  const groups = [{ id: ORG_ID, displayName: 'Example University', type: 'fc:org', membership: { basic: 'member' } }]
  for (let i = 0; i < 100; i++) {
    const tokenId = tier.tokenId(`token-${i}`)
    await tier.set({ tokenId, kind: 'groups' }, groups, 60_000)
    await tier.set({ tokenId, kind: 'membership', groupId: ORG_ID }, { basic: 'member' }, 60_000)
  }
  let bytes = 0
  for await (const keys of client.scanIterator({ MATCH: 'vg:*', COUNT: 500 })) {
    for (const key of keys) bytes += (await client.memoryUsage(key)) ?? 0
  }
  await tier.close()
  await client.flushAll()
  client.destroy()
  return bytes / 100
}

const kind = process.argv.includes('--cluster') ? 'cluster' : process.argv.includes('--sentinel') ? 'sentinel' : 'single'
const deployment = await startDeployment(kind)
const emulator = await startEmulator({ latency: UPSTREAM_LATENCY })
try {
  const without = await fleetRun(deployment, emulator, false)
  const withTier = await fleetRun(deployment, emulator, true)
  const deadline = process.env.FLEET_REDIS_TIMEOUT ?? '50'
  console.log(
    `Fleet on ${deployment.name} (the tier's deadline ${deadline} ms): ${INSTANCES} instance processes, ${TOKENS} tokens each asked ${ROUNDS}x per instance, round-robin, ${CONCURRENCY} at a time, upstream latency ${UPSTREAM_LATENCY} ms`,
  )
  console.log('without the tier:', without)
  console.log('with the tier:   ', withTier)
  if (deployment.singleUrl !== undefined) {
    console.log(
      `bytes per token in Redis (me/groups of one group + one membership, MEMORY USAGE): ${(await bytesPerToken(deployment.singleUrl)).toFixed(0)}`,
    )
  }
} finally {
  await emulator.close()
  await deployment.stop()
  await dispatcher.close()
}
