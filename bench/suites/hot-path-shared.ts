/**
 * Figure 1 with a shared tier: the same warm decision when the resolver has a Redis tier,
 * against the same decision without one. The answer is in the in-process cache, so Redis is
 * not asked, and the in-process cache is keyed by the same in-process digest as without a
 * tier: the tier's HMAC-SHA256 token id is computed on the cold path only.
 *
 * The two are measured alike, so that the ratio shows the tier and nothing else: each in a
 * compiled child process of its own, pinned like figure 1's, each with a `redis-server`
 * running and a client connected (only the resolver's `sharedCache` option differs), in
 * alternating pairs; the ratio is the median of the pairs' ratios. Measured otherwise, the
 * ratio charged the tier with what differs between processes: a second resolver and guard
 * core made in the process that measured the first one run the same code measurably slower
 * (V8 optimizes a function created once more tightly than one created again), and a child
 * with a `redis-server` beside it against figure 1's process without one.
 *
 * @module
 */
import { fileURLToPath } from 'node:url'
import { createClient } from 'redis'
import { createGuardCore } from '../../src/adapter-kit.js'
import { createMembershipResolver, group } from '../../src/index.js'
import { createRedisCache } from '../../redis/index.js'
import { startRedisServer } from '../../demo/redis-server.js'
import { ORG_ID, startEmulator } from '../../testing/index.js'
import { startChild } from '../child.js'
import { SERVER_CPU } from '../cpus.js'
import { serveParent } from '../servers/ipc.js'
import { median } from '../stats.js'
import type { HotPathFigure } from './hot-path-figure.js'

const CHILD_FLAG = '--hot-path-shared-child'
const NAMES = {
  bare: 'guard core authorizeNow (sync), no shared tier, in a process with redis-server beside it',
  tier: 'guard core authorizeNow (sync) with a shared tier, warm in process',
} as const
type Mode = keyof typeof NAMES
/** Pairs of processes (bare, then tier): a child's median moves with what else its vCPU ran (its `redis-server`), so five. */
const PAIRS = 5
/** At least this many batches per child, whatever the profile asks for figure 1. */
const MIN_BATCHES = 9

/** What {@link measureWithSharedTier} found. */
export interface SharedTierFigures {
  readonly bare: HotPathFigure
  readonly tier: HotPathFigure
  /** Median over the pairs of tier / bare. */
  readonly ratio: number
  readonly pairs: number
}

async function measureIn(mode: Mode, options: { operations: number; batches: number }): Promise<HotPathFigure | undefined> {
  const child = await startChild<HotPathFigure | null>('./suites/hot-path-shared.js', {
    args: [String(options.operations), String(Math.max(options.batches, MIN_BATCHES)), mode, CHILD_FLAG],
    cpu: SERVER_CPU,
  })
  const figure = child.ready
  await child.stop()
  return figure ?? undefined
}

/**
 * Runs `authorizeNow` of a guard core with and without a shared tier on a local
 * `redis-server`, in alternating child processes; `undefined` when there is no
 * `redis-server` to start.
 */
export async function measureWithSharedTier(options: { operations: number; batches: number }): Promise<SharedTierFigures | undefined> {
  const pairs: { bare: HotPathFigure; tier: HotPathFigure }[] = []
  for (let pair = 0; pair < PAIRS; pair++) {
    const bare = await measureIn('bare', options)
    const tier = await measureIn('tier', options)
    if (bare === undefined || tier === undefined) return undefined
    pairs.push({ bare, tier })
  }
  const middle = (mode: Mode): HotPathFigure => ({
    name: NAMES[mode],
    ns: median(pairs.map((pair) => pair[mode].ns)),
    bestNs: Math.min(...pairs.map((pair) => pair[mode].bestNs)),
  })
  return { bare: middle('bare'), tier: middle('tier'), ratio: median(pairs.map((pair) => pair.tier.ns / pair.bare.ns)), pairs: PAIRS }
}

/** The child's side: measures and announces the figure (or `null` without a redis-server). */
async function measureHere(operations: number, batches: number, mode: Mode): Promise<HotPathFigure | null> {
  const redis = await startRedisServer().catch(() => undefined)
  if (redis === undefined) return null
  const emulator = await startEmulator()
  const client = createClient({ url: redis.url })
  await client.connect()
  const sharedCache =
    mode === 'tier' ? createRedisCache({ client, secret: 'bench-secret-bench-secret-bench-secret-0123456789' }) : undefined
  const resolver = createMembershipResolver({
    baseUrl: emulator.baseUrl,
    cache: { ttl: 3_600_000 },
    ...(sharedCache === undefined ? {} : { sharedCache }),
  })
  try {
    const core = createGuardCore({ resolver, realm: 'bench' })
    const credentials = { authorization: `Bearer ${emulator.issueToken('alice')}` }
    const requirement = group(ORG_ID, 'admin')
    if (!(await core.authorizeNow(credentials, requirement)).decision.allowed) throw new Error(`hot path (${mode}): not allowed`)
    await emulator.close()
    let allowed = 0
    const run = (n: number): void => {
      for (let i = 0; i < n; i++) allowed += core.authorizeNow(credentials, requirement) instanceof Promise ? 0 : 1
    }
    // The same warm-up, batches and median as figure 1's other rows.
    run(Math.min(operations, 20_000))
    const perOp: number[] = []
    for (let b = 0; b < batches; b++) {
      const start = process.hrtime.bigint()
      run(operations)
      perOp.push(Number(process.hrtime.bigint() - start) / operations)
    }
    if (allowed === 0) throw new Error(`hot path (${mode}): the warm path was not taken`)
    if (resolver.stats().upstreamCalls !== 1) throw new Error(`hot path (${mode}): the warm path called the group service`)
    return { name: NAMES[mode], ns: median(perOp), bestNs: Math.min(...perOp) }
  } finally {
    await resolver.close()
    await client.close()
    await redis.stop()
  }
}

if (process.argv.includes(CHILD_FLAG) && process.argv[1] === fileURLToPath(import.meta.url)) {
  const mode = process.argv[4] === 'tier' ? 'tier' : 'bare'
  serveParent({}, await measureHere(Number(process.argv[2]), Number(process.argv[3]), mode))
}
