/**
 * The soak test's shared tier: a Redis deployment of its own, a node-redis client, the tier,
 * and a loop of faults during the run.
 *
 * - `SOAK_REDIS=1`: one redis-server, frozen (SIGSTOP) and stopped in turns, then back;
 * - `SOAK_REDIS=cluster`: a Redis Cluster of three masters (a cluster client); one master
 *   killed (SIGKILL) in turn, and restarted;
 * - `SOAK_REDIS=sentinel`: a master, a replica and three sentinels (a sentinel client); the
 *   master killed, the replica promoted, the old master restarted as a replica.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import { createClient, createCluster, createSentinel } from 'redis'
import { createRedisCache } from '../../redis/index.js'
import type { SharedCache } from '../../src/shared-cache.js'
import { startRedisServer } from '../../demo/redis-server.js'
import { startRedisCluster, startRedisSentinel } from '../support/redis-topology.js'

export interface SoakRedis {
  readonly tier: SharedCache
  startFaults(): void
  /** Ends the fault loop with Redis up; resolves the tier's counters and the faults run. */
  stopFaults(): Promise<{ deployment: string; faults: number; stats: ReturnType<SharedCache['stats']> }>
  /** Closes the client and stops the servers (the resolver closes the tier). */
  close(): Promise<void>
}

/** A deployment with its client and its next fault (which returns once Redis is whole again). */
interface Deployment {
  readonly client: Parameters<typeof createRedisCache>[0]['client'] & { destroy(): unknown }
  fault(round: number): Promise<void>
  stop(): Promise<void>
}

const nodeOptions = { disableOfflineQueue: true, socket: { reconnectStrategy: () => 50, connectTimeout: 500 } }

async function startDeployment(kind: string): Promise<Deployment> {
  if (kind === 'cluster') {
    const cluster = await startRedisCluster()
    const client = createCluster({ rootNodes: [...cluster.rootNodes], defaults: nodeOptions })
    client.on('error', () => {})
    await client.connect()
    return {
      client,
      async fault(round) {
        const victim = cluster.masters[round % cluster.masters.length]!
        await victim.kill()
        await sleep(1_500)
        await victim.start()
        await cluster.healthy()
      },
      stop: () => cluster.stop(),
    }
  }
  if (kind === 'sentinel') {
    const sentinel = await startRedisSentinel()
    const client = createSentinel({
      name: sentinel.name,
      sentinelRootNodes: [...sentinel.sentinelRootNodes],
      nodeClientOptions: nodeOptions,
    })
    client.on('error', () => {})
    await client.connect()
    return {
      client,
      async fault() {
        const victim = await sentinel.master()
        await victim.kill()
        while ((await sentinel.master()) === victim) await sleep(100)
        await victim.start()
      },
      stop: () => sentinel.stop(),
    }
  }
  const server = await startRedisServer()
  const client = createClient({ url: server.url, ...nodeOptions })
  client.on('error', () => {})
  await client.connect()
  return {
    client,
    async fault(round) {
      if (round % 2 === 1) {
        server.freeze()
        await sleep(700)
        server.thaw()
      } else {
        await server.stop()
        await sleep(700)
        await server.start()
      }
    },
    stop: () => server.stop(),
  }
}

export async function startSoakRedis(kind: string): Promise<SoakRedis> {
  const deployment = await startDeployment(kind)
  const tier = createRedisCache({
    client: deployment.client,
    secret: 'soak-secret-0123456789-abcdefghijklmnop',
    breaker: { cooldown: 300 },
  })
  let running = false
  let faults = 0
  let loop: Promise<void> = Promise.resolve()
  return {
    tier,
    startFaults() {
      running = true
      loop = (async () => {
        while (running) {
          await sleep(1_500)
          if (!running) break
          faults++
          await deployment.fault(faults)
        }
      })()
    },
    async stopFaults() {
      running = false
      await loop
      return { deployment: kind === '1' ? 'single' : kind, faults, stats: tier.stats() }
    },
    async close() {
      await deployment.client.destroy()
      await deployment.stop()
    },
  }
}
