/**
 * `voot-guard/redis`: the shared cache tier on Redis (or Valkey), for apps that run as
 * several instances. Pass it as the `sharedCache` option of `createMembershipResolver` or of
 * an adapter's `createGuard`; every instance then shares answers, single-flight and
 * invalidations. See docs/redis.md. The `SharedCache` types it implements come from
 * `voot-guard`.
 *
 * @example
 * ```ts
 * import { createClient } from 'redis'
 * import { createRedisCache } from 'voot-guard/redis'
 *
 * const client = await createClient({ url: process.env.REDIS_URL }).on('error', console.error).connect()
 * const sharedCache = createRedisCache({ client, secret: process.env.VOOT_CACHE_SECRET!, prefix: 'vg:' })
 * ```
 *
 * @module
 */
export { createRedisCache } from './cache.js'
export type { RedisClientLike, RedisNodeLike, RedisSubscriberLike } from './client.js'
export type { NodeRedisClusterLike, NodeRedisSentinelLike, NodeRedisSubscriberLike } from './connection.js'
export type { RedisCacheOptions } from './options.js'
export { createSessionEnds, type RedisSessionEnds, type SessionEnd, type SessionEndsOptions } from './session-ends.js'
