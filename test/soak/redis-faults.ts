/**
 * The soak test's shared tier (SOAK_REDIS=1): a redis-server of its own, a node-redis client,
 * the tier, and a loop that freezes, thaws, stops and restarts the server in turns.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import { createClient } from 'redis'
import { createRedisCache } from '../../redis/index.js'
import type { SharedCache } from '../../src/shared-cache.js'
import { startRedisServer } from '../../demo/redis-server.js'

export interface SoakRedis {
  readonly tier: SharedCache
  startFaults(): void
  /** Ends the fault loop with Redis up; resolves the tier's counters and the faults run. */
  stopFaults(): Promise<{ faults: number; stats: ReturnType<SharedCache['stats']> }>
  /** Closes the client and stops the server (the resolver closes the tier). */
  close(): Promise<void>
}

export async function startSoakRedis(): Promise<SoakRedis> {
  const server = await startRedisServer()
  const client = createClient({ url: server.url, disableOfflineQueue: true, socket: { reconnectStrategy: () => 50 } })
  client.on('error', () => {})
  await client.connect()
  const tier = createRedisCache({ client, secret: 'soak-secret-0123456789-abcdefghijklmnop', breaker: { cooldown: 300 } })
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
          if (faults % 2 === 1) {
            server.freeze()
            await sleep(700)
            server.thaw()
          } else {
            await server.stop()
            await sleep(700)
            await server.start()
          }
        }
      })()
    },
    async stopFaults() {
      running = false
      await loop
      return { faults, stats: tier.stats() }
    },
    async close() {
      client.destroy()
      await server.stop()
    },
  }
}
