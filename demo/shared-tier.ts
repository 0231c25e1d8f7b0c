/**
 * The demo's shared cache tier (`npm start -- --redis`): `createRedisCache()` from
 * `voot-guard/redis` on a node-redis client, against a Redis the demo starts for itself
 * (a throwaway `redis-server` from the PATH) or one given by URL (`REDIS_URL`).
 *
 * @module
 */
import { randomBytes } from 'node:crypto'
import { createClient } from 'redis'
import { InvalidOptionError } from 'voot-guard'
import type { SharedCache } from 'voot-guard/adapter-kit'
import { createRedisCache } from 'voot-guard/redis'
import { startRedisServer, type RedisServer } from './redis-server.js'

/**
 * The shared tier of a running demo.
 */
export interface DemoSharedTier {
  /** Where Redis is, such as `redis://127.0.0.1:35211`. */
  readonly url: string
  /** Whether the demo started this redis-server (and stops it on close). */
  readonly started: boolean
  /** The tier to hand to a guard's `sharedCache` option. */
  readonly sharedCache: SharedCache
  /** Closes the tier and the client, and stops the redis-server the demo started. */
  close(): Promise<void>
}

/**
 * Starts the tier: on a redis-server of its own when `redis` is `true`, else on the Redis
 * at the URL `redis`.
 *
 * @throws {@link InvalidOptionError} (`redis`) when there is no redis-server to start, or the
 *   Redis at the URL does not answer.
 */
export async function startDemoSharedTier(redis: true | string): Promise<DemoSharedTier> {
  let server: RedisServer | undefined
  if (redis === true) {
    try {
      server = await startRedisServer()
    } catch (error) {
      const missing = (error as NodeJS.ErrnoException).code === 'ENOENT'
      throw new InvalidOptionError(
        'redis',
        missing
          ? 'needs a redis-server on the PATH to start (Debian and Ubuntu: apt install redis-server), or the URL of a running Redis: REDIS_URL=redis://host:6379 npm start -- --redis'
          : `could not start a redis-server: ${error instanceof Error ? error.message : String(error)}`,
      )
    }
  }
  const url = server?.url ?? (redis as string)
  // No offline queue: while Redis is away, commands fail at once and the tier reads them
  // as misses, instead of piling up behind a reconnect.
  const client = createClient({ url, disableOfflineQueue: true })
  // The tier reports Redis's failures itself (as misses); without a listener node-redis
  // would throw its connection errors at the process.
  client.on('error', () => {})
  try {
    // node-redis keeps retrying a connection that is refused: give up after a few seconds.
    await Promise.race([
      client.connect(),
      new Promise((_, reject) => setTimeout(() => reject(new Error('no answer within 3 s')), 3_000).unref()),
    ])
  } catch (error) {
    client.destroy()
    await server?.stop()
    throw new InvalidOptionError('redis', `no Redis answered at ${url}: ${error instanceof Error ? error.message : String(error)}`)
  }
  // One demo process, so a secret of its own; instances of a real fleet share theirs.
  const sharedCache = createRedisCache({ client, secret: randomBytes(32) })
  let closing: Promise<void> | undefined
  return {
    url,
    started: server !== undefined,
    sharedCache,
    close() {
      closing ??= (async () => {
        await sharedCache.close()
        client.destroy()
        await server?.stop()
      })()
      return closing
    },
  }
}
