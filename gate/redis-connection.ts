/**
 * The gate's connection to Redis, when `redis` is configured: one node-redis client for the
 * shared answer tier and the fleet's session ends, connected only once the configuration is
 * accepted.
 *
 * @module
 */
import { createRequire } from 'node:module'
import type { SharedCache } from '../src/adapter-kit.js'
import { createRedisCache, createSessionEnds } from '../redis/index.js'
import type { GateSettings } from './config/types.js'
import type { SessionEndTier } from './session/session-ends.js'

/** The gate's Redis client, and the shared tier and the fleet's session ends on it. */
export interface RedisConnection {
  readonly cache: SharedCache
  /** The fleet's session ends, on the same client and channel. */
  readonly sessionEnds: SessionEndTier
  /** Connects the client: called once the configuration is accepted, so a refused one opens nothing. */
  connect(): Promise<void>
  quit(): Promise<void>
}

/**
 * Makes the client for `redis` (not yet connected) and the tiers on it; `warn` hears of its
 * first error after each connect, not of every retry.
 *
 * @example
 * ```ts
 * const connection = redisConnection(settings.redis, (message) => logger.warn(message))
 * await connection.connect()
 * ```
 */
export function redisConnection(redis: NonNullable<GateSettings['redis']>, warn: (message: string) => void): RedisConnection {
  // node-redis is an optional peer dependency, loaded only when `redis` is configured.
  const { createClient } = createRequire(import.meta.url)('redis') as typeof import('redis')
  const client = createClient({ url: redis.url })
  const tierOptions = { client, secret: redis.secret, ...(redis.prefix === undefined ? {} : { prefix: redis.prefix }) }
  const cache = createRedisCache(tierOptions)
  const sessionEnds = createSessionEnds(tierOptions)
  let reported = false
  client.on('error', (error: unknown) => {
    if (!reported)
      warn(`gate: Redis: ${error instanceof Error ? error.message : 'error'} (answers are asked of the group service meanwhile)`)
    reported = true
  })
  return {
    cache,
    sessionEnds,
    connect: () =>
      client.connect().then(() => {
        reported = false
      }),
    async quit() {
      sessionEnds.close()
      await cache.close()
      if (client.isOpen) await client.quit().catch(() => client.destroy())
    },
  }
}
