/**
 * Figure 1 with a shared tier: the same warm decision when the resolver has a Redis tier.
 * The answer is in the in-process cache, so Redis is not asked, and the in-process cache
 * is keyed by the same in-process digest as without a tier: the tier's HMAC-SHA256 token
 * id is computed on the cold path only. This row shows that a tier costs a warm decision
 * nothing.
 *
 * @module
 */
import { createClient } from 'redis'
import { createGuardCore } from '../../src/adapter-kit.js'
import { createMembershipResolver, group } from '../../src/index.js'
import { createRedisCache } from '../../redis/index.js'
import { startRedisServer } from '../../demo/redis-server.js'
import { ORG_ID, startEmulator } from '../../testing/index.js'

/**
 * Runs `bench` on `authorizeNow` of a guard core with a shared tier on a local
 * `redis-server`; `undefined` when there is no `redis-server` to start.
 */
export async function measureWithSharedTier<F>(bench: (name: string, run: (n: number) => void) => F): Promise<F | undefined> {
  const redis = await startRedisServer().catch(() => undefined)
  if (redis === undefined) return undefined
  const emulator = await startEmulator()
  const client = createClient({ url: redis.url })
  await client.connect()
  const sharedCache = createRedisCache({ client, secret: 'bench-secret-bench-secret-bench-secret-0123456789' })
  const resolver = createMembershipResolver({ baseUrl: emulator.baseUrl, cache: { ttl: 3_600_000 }, sharedCache })
  try {
    const core = createGuardCore({ resolver, realm: 'bench' })
    const credentials = { authorization: `Bearer ${emulator.issueToken('alice')}` }
    const requirement = group(ORG_ID, 'admin')
    if (!(await core.authorize(credentials, requirement)).decision.allowed) throw new Error('hot path (shared tier): not allowed')
    await emulator.close()
    let allowed = 0
    const figure = bench('guard core authorizeNow (sync) with a shared tier, warm in process', (n) => {
      for (let i = 0; i < n; i++) allowed += core.authorizeNow(credentials, requirement) instanceof Promise ? 0 : 1
    })
    if (allowed === 0) throw new Error('hot path (shared tier): the warm path was not taken')
    return figure
  } finally {
    await resolver.close()
    await client.close()
    await redis.stop()
  }
}
