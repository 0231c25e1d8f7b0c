/**
 * The few things the shared tier needs from a Redis client. A node-redis client (`redis`
 * package, major 5 or 6) fits as it is, and so do node-redis's cluster (`createCluster`) and
 * sentinel (`createSentinel`) clients; another client (ioredis, ioredis's `Cluster`) is
 * adapted in a few lines (see docs/redis.md). The tier sends only these commands: GET, SET,
 * EVAL (scripts that call GET, SET, PTTL, EXISTS, SADD, SREM, SMEMBERS, SCARD, SISMEMBER,
 * PEXPIRE, UNLINK, DEL, PUBLISH), SCAN, UNLINK, PUBLISH (plus SUBSCRIBE on its own
 * duplicated connection).
 *
 * @module
 */

/**
 * A connection the tier subscribes with: made by {@link RedisClientLike.duplicate}, opened and
 * closed by the tier.
 *
 * @example
 * ```ts
 * const subscriber: RedisSubscriberLike = client.duplicate()
 * subscriber.on('error', report)
 * await subscriber.connect()
 * await subscriber.subscribe('vg:invalidate', (message) => drop(message))
 * ```
 */
export interface RedisSubscriberLike {
  /** `error`: the connection failed (it keeps reconnecting); `ready`: it is (re)connected and usable. */
  on(event: 'error' | 'ready', listener: (error?: unknown) => void): unknown
  /** Opens the connection. */
  connect(): Promise<unknown>
  /** Subscribes to a channel; resubscribing after a reconnect is the client's job (node-redis and ioredis both do). */
  subscribe(channel: string, listener: (message: string) => void): Promise<unknown>
  /** Closes the connection at once. */
  destroy(): void
}

/**
 * One master of a cluster, as an adapted cluster client's `masters()` lists it.
 *
 * @example
 * ```ts
 * const node: RedisNodeLike = { isReady: true, sendCommand: ([command, ...args]) => ioredisNode.call(command!, ...args) }
 * ```
 */
export interface RedisNodeLike {
  /** `false` while not connected; optional, as on {@link RedisClientLike}. */
  readonly isReady?: boolean
  /** Sends one command to this node. */
  sendCommand(args: string[]): Promise<unknown>
}

/**
 * The app's Redis client, as the tier uses it: the shape an adapted client takes (node-redis's
 * plain client has it already; its cluster and sentinel clients are recognised as they are).
 * The app connects it, listens for its errors, and quits it; the tier never closes it.
 *
 * @example
 * ```ts
 * import { createClient } from 'redis'
 * const client: RedisClientLike = await createClient({ url: process.env.REDIS_URL }).connect()
 * ```
 */
export interface RedisClientLike {
  /**
   * `false` while the client is not connected: the tier then answers a miss at once instead
   * of handing the client a command it would queue (no offline queue grows behind the tier).
   * Optional: a client without it is asked anyway, under the tier's deadline.
   */
  readonly isReady?: boolean
  /**
   * Sends one command; resolves its reply (bulk strings as strings, integers as numbers,
   * arrays, `null`). A cluster client routes it by its keys (every command of the tier names
   * keys of one slot) and follows `MOVED` and `ASK` itself.
   */
  sendCommand(args: string[]): Promise<unknown>
  /** A new, unconnected client for the same server (or cluster), for the tier's pub/sub subscription. */
  duplicate(): RedisSubscriberLike
  /**
   * Cluster clients only: each master now. `invalidate()` of every token SCANs each one, as
   * a SCAN sees the keys of one node only. Leave it out for a single server or Sentinel.
   */
  masters?(): readonly RedisNodeLike[]
}
