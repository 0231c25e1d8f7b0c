/**
 * The options of `createRedisCache()`, validated at creation: an invalid one throws
 * `InvalidOptionError` naming it, never some later request.
 *
 * @module
 */
import { InvalidOptionError } from '../src/index.js'
import { integerOption, objectOption, rejectUnknownKeys } from '../src/internal.js'
import type { RedisClientLike } from './client.js'
import { redisClientOption } from './connection.js'
import type { NodeRedisClusterLike, NodeRedisSentinelLike } from './connection.js'

/**
 * Options of `createRedisCache()`.
 *
 * @example
 * ```ts
 * const options: RedisCacheOptions = { client, secret: process.env.VOOT_CACHE_SECRET!, prefix: 'vg:' }
 * ```
 */
export interface RedisCacheOptions {
  /**
   * A connected node-redis client: plain (`createClient`), cluster (`createCluster`) or
   * sentinel (`createSentinel`), detected; or an adapted one (ioredis, ioredis's `Cluster`:
   * see docs/redis.md). The app owns it.
   */
  client: RedisClientLike | NodeRedisClusterLike | NodeRedisSentinelLike
  /**
   * The secret every instance shares: keys are HMACs of tokens under it and values are
   * encrypted under it. At least 32 bytes (a string of 32 or more characters, or a Buffer),
   * and not a run of a few repeated characters. Changing it makes every entry a miss.
   */
  secret: string | Uint8Array
  /** Prefix of every key and of the pub/sub channel, so apps can share one Redis. Default `'vg:'`. */
  prefix?: string
  /** Deadline of each Redis call, in ms; past it the call is a miss. Integer 1..10000; default `50`. */
  timeout?: number
  /** Lifetime of the fleet-wide lock of a cold lookup, in ms. Integer 10..60000; default `2000`. */
  lockTtl?: number
  /** How long `waitFor` waits for another instance's answer, in ms. Integer 0..60000, at most `lockTtl`; default `lockTtl`. */
  waitTimeout?: number
  /** Membership entries (`me/groups/{id}`) kept per token; further ones are not written. Integer 1..10000; default `64`. */
  maxGroupsPerToken?: number
  /** Redis calls of this tier awaiting a reply at once; further ones are misses. Integer 1..100000; default `1000`. */
  maxPending?: number
  /** Largest value written or read, in bytes of plaintext JSON. Integer 64..16777216; default `1048576`. */
  maxValueBytes?: number
  /** The breaker: after `failureThreshold` failed calls in a row Redis is not asked for `cooldown` ms. Defaults `5` and `5000`. */
  breaker?: { failureThreshold?: number; cooldown?: number }
}

/** {@link RedisCacheOptions}, validated, with the defaults filled in. */
export interface RedisCacheSettings {
  readonly client: RedisClientLike | NodeRedisClusterLike | NodeRedisSentinelLike
  readonly secret: Buffer
  readonly prefix: string
  readonly timeout: number
  readonly lockTtl: number
  readonly waitTimeout: number
  readonly maxGroupsPerToken: number
  readonly maxPending: number
  readonly maxValueBytes: number
  readonly failureThreshold: number
  readonly cooldown: number
}

/** Fewest bytes of `secret`: the HKDF input must carry at least 256 bits. */
const MIN_SECRET_BYTES = 32
/** Fewest distinct byte values in `secret`: rejects 'aaaa…' and other placeholder secrets. */
const MIN_DISTINCT_BYTES = 8
/** Every key of {@link RedisCacheOptions}. */
const OPTION_KEYS: readonly (keyof RedisCacheOptions)[] = [
  'client', 'secret', 'prefix', 'timeout', 'lockTtl', 'waitTimeout', 'maxGroupsPerToken', 'maxPending', 'maxValueBytes', 'breaker',
] // prettier-ignore

/**
 * Validates {@link RedisCacheOptions}.
 */
export function redisCacheSettings(options: RedisCacheOptions): RedisCacheSettings {
  const given = objectOption<RedisCacheOptions>('options', options)
  rejectUnknownKeys('', given, OPTION_KEYS)
  const client = redisClientOption(given.client)
  const secret = secretOption(given.secret)
  const prefix = prefixOption(given.prefix)
  const timeout = integerOption('timeout', given.timeout, { fallback: 50, min: 1, max: 10_000 })
  const lockTtl = integerOption('lockTtl', given.lockTtl, { fallback: 2_000, min: 10, max: 60_000 })
  const waitTimeout = integerOption('waitTimeout', given.waitTimeout, { fallback: lockTtl, min: 0, max: lockTtl })
  const breaker = objectOption<NonNullable<RedisCacheOptions['breaker']>>('breaker', given.breaker)
  rejectUnknownKeys('breaker.', breaker, ['failureThreshold', 'cooldown'])
  return {
    client,
    secret,
    prefix,
    timeout,
    lockTtl,
    waitTimeout,
    maxGroupsPerToken: integerOption('maxGroupsPerToken', given.maxGroupsPerToken, { fallback: 64, min: 1, max: 10_000 }),
    maxPending: integerOption('maxPending', given.maxPending, { fallback: 1_000, min: 1, max: 100_000 }),
    maxValueBytes: integerOption('maxValueBytes', given.maxValueBytes, { fallback: 1 << 20, min: 64, max: 1 << 24 }),
    failureThreshold: integerOption('breaker.failureThreshold', breaker.failureThreshold, { fallback: 5, min: 1, max: 1_000 }),
    cooldown: integerOption('breaker.cooldown', breaker.cooldown, { fallback: 5_000, min: 1, max: 3_600_000 }),
  }
}

function secretOption(value: unknown): Buffer {
  let bytes: Buffer
  if (typeof value === 'string') bytes = Buffer.from(value, 'utf8')
  else if (value instanceof Uint8Array) bytes = Buffer.from(value)
  else
    throw new InvalidOptionError(
      'secret',
      `must be a string or a Buffer of at least ${MIN_SECRET_BYTES} bytes, got ${value === null ? 'null' : typeof value}`,
    )
  if (bytes.length < MIN_SECRET_BYTES) {
    throw new InvalidOptionError(
      'secret',
      `must be at least ${MIN_SECRET_BYTES} bytes, got ${bytes.length} (use e.g. 32 random bytes, base64-encoded)`,
    )
  }
  if (new Set(bytes).size < MIN_DISTINCT_BYTES) {
    throw new InvalidOptionError(
      'secret',
      'looks like a placeholder (too few distinct characters); use e.g. 32 random bytes, base64-encoded',
    )
  }
  return bytes
}

function prefixOption(value: unknown): string {
  if (value === undefined) return 'vg:'
  // Control characters and whitespace would make keys hard to read and to match in redis-cli;
  // braces would move the Redis Cluster hash tag from the token id into the prefix.
  if (typeof value !== 'string' || !/^[\x21-\x7e]{1,64}$/.test(value) || /[{}]/.test(value)) {
    throw new InvalidOptionError('prefix', 'must be 1 to 64 printable ASCII characters without spaces or braces')
  }
  return value
}
