/**
 * The app's client, whatever its kind, as one shape the tier talks to: a plain node-redis
 * client, a node-redis cluster client (`createCluster`), a node-redis sentinel client
 * (`createSentinel`), or an adapted client ({@link RedisClientLike}, such as ioredis or
 * ioredis's `Cluster` through docs/redis.md's adapters). The kind is detected from the
 * client's own members; nothing to configure.
 *
 * What differs between the kinds is where a command goes: a cluster client routes each
 * command by its first key (every command of the tier names keys of one token, so of one
 * slot; the client follows `MOVED` and `ASK` itself), and `invalidate()` of every token must
 * SCAN each master, since a SCAN sees one node's keys only.
 *
 * @module
 */
import { InvalidOptionError } from '../src/index.js'
import type { RedisClientLike, RedisNodeLike, RedisSubscriberLike } from './client.js'

/** Where a command goes: to one server, routed by the key when the deployment is a cluster. */
export interface CommandTarget {
  /** `false` while not connected (the command is then not handed over); `undefined` when unknown. */
  readonly isReady: boolean | undefined
  /** Sends one command; `key` is the first key it names (for a cluster's routing). */
  sendCommand(args: string[], key: string | undefined): Promise<unknown>
}

/**
 * The app's client as the tier uses it.
 */
export interface TierConnection extends CommandTarget {
  /** Each master now (one for a single server or a Sentinel setup), for SCAN and UNLINK of what it holds. */
  masters(): readonly CommandTarget[]
  /** The tier's subscription, which the tier opens and closes: a new connection, or a sentinel client's own pub/sub. */
  subscriber(): RedisSubscriberLike
}

/**
 * A node-redis cluster client (`createCluster` of the `redis` package, major 5 or 6), as far
 * as the tier uses it: pass it as it is.
 *
 * @example
 * ```ts
 * import { createCluster } from 'redis'
 * const client: NodeRedisClusterLike = await createCluster({ rootNodes: [{ url: 'redis://10.0.0.1:6379' }] }).connect()
 * ```
 */
export interface NodeRedisClusterLike {
  readonly isReady: boolean
  readonly masters: readonly { readonly client?: { readonly isReady: boolean } | undefined }[]
  sendCommand(firstKey: string | undefined, isReadonly: boolean | undefined, args: string[]): Promise<unknown>
  nodeClient(node: never): Promise<{ sendCommand(args: string[]): Promise<unknown> }>
  duplicate(overrides?: { minimizeConnections?: boolean }): NodeRedisSubscriberLike
}

/**
 * A node-redis sentinel client (`createSentinel` of the `redis` package, major 5 or 6), as
 * far as the tier uses it: pass it as it is.
 *
 * @example
 * ```ts
 * import { createSentinel } from 'redis'
 * const client: NodeRedisSentinelLike = await createSentinel({ name: 'mymaster', sentinelRootNodes: [{ host: '10.0.0.1', port: 26379 }] }).connect()
 * ```
 */
export interface NodeRedisSentinelLike extends NodeRedisSubscriberLike {
  readonly isReady: boolean
  sendCommand(isReadonly: boolean | undefined, args: string[]): Promise<unknown>
  getMasterNode(): unknown
  getSentinelNode(): unknown
}

/**
 * How the tier subscribes through a node-redis cluster client (a duplicate it connects and
 * destroys) or sentinel client (the app's own: its subscription has a connection of its own,
 * which follows the master; the tier unsubscribes and stops listening when it closes).
 *
 * @example
 * ```ts
 * const subscriber: NodeRedisSubscriberLike = cluster.duplicate()
 * await subscriber.connect()
 * await subscriber.subscribe('vg:invalidate', (message) => drop(message))
 * ```
 */
export interface NodeRedisSubscriberLike {
  on(event: string, listener: (...args: unknown[]) => void): unknown
  off(event: string, listener: (...args: unknown[]) => void): unknown
  subscribe(channel: string, listener: (message: string) => void): Promise<unknown>
  /** Removes the listener `subscribe` added (typed loosely: node-redis's own listener type also takes Buffers). */
  unsubscribe(channel: string, listener: never): Promise<unknown>
  connect(): Promise<unknown>
  destroy(): unknown
}

/**
 * Whether `client` is a node-redis cluster client: it has the cluster's `masters` list and
 * `nodeClient()`.
 */
function isNodeRedisCluster(client: object): client is NodeRedisClusterLike {
  const candidate = client as Partial<Record<'masters' | 'nodeClient' | 'sendCommand', unknown>>
  return Array.isArray(candidate.masters) && typeof candidate.nodeClient === 'function' && typeof candidate.sendCommand === 'function'
}

/** Whether `client` is a node-redis sentinel client: it has `getMasterNode()`, `getSentinelNode()` and its own `subscribe()`. */
function isNodeRedisSentinel(client: object): client is NodeRedisSentinelLike {
  const candidate = client as Partial<Record<keyof NodeRedisSentinelLike, unknown>>
  const methods = ['getMasterNode', 'getSentinelNode', 'sendCommand', 'subscribe', 'unsubscribe', 'on', 'off'] as const
  return methods.every((name) => typeof candidate[name] === 'function')
}

/**
 * Whether `client` is one of node-redis's own kinds the tier recognises besides a plain
 * client (checked before the plain client's shape, which a cluster client would also pass).
 */
export function isNodeRedisTopologyClient(client: object): boolean {
  return isNodeRedisCluster(client) || isNodeRedisSentinel(client)
}

/**
 * The {@link TierConnection} of a client that passed `redisClientOption`.
 */
export function tierConnection(client: RedisClientLike | NodeRedisClusterLike | NodeRedisSentinelLike): TierConnection {
  if (isNodeRedisCluster(client)) return clusterConnection(client)
  if (isNodeRedisSentinel(client)) return sentinelConnection(client)
  return adaptedConnection(client)
}

function clusterConnection(cluster: NodeRedisClusterLike): TierConnection {
  return {
    get isReady() {
      return cluster.isReady
    },
    sendCommand: (args, key) => cluster.sendCommand(key, false, args),
    masters: () =>
      cluster.masters.map((master) => ({
        get isReady() {
          return master.client?.isReady
        },
        sendCommand: async (args: string[]) => (await cluster.nodeClient(master as never)).sendCommand(args),
      })),
    // Any node back after an outage may be the one the subscription was on: count it as a comeback.
    // Connections to the masters only when asked: the duplicate only subscribes.
    subscriber: () =>
      reconnectAware(cluster.duplicate({ minimizeConnections: true }), true, 'node-error', { event: 'node-ready', when: () => true }),
  }
}

function sentinelConnection(sentinel: NodeRedisSentinelLike): TierConnection {
  const connection: TierConnection = {
    get isReady() {
      return sentinel.isReady
    },
    sendCommand: (args) => sentinel.sendCommand(false, args),
    masters: () => [connection],
    // The sentinel client's subscription has a connection of its own (node-redis 5 has no
    // duplicate() for it), which a failover moves to the new master: messages sent
    // meanwhile are missed.
    subscriber: () => reconnectAware(sentinel, false, 'error', { event: 'topology-change', when: isMasterChange }),
  }
  return connection
}

function adaptedConnection(client: RedisClientLike): TierConnection {
  const target = (node: RedisNodeLike): CommandTarget => ({
    get isReady() {
      return node.isReady
    },
    sendCommand: (args) => node.sendCommand(args),
  })
  const connection: TierConnection = {
    get isReady() {
      return client.isReady
    },
    sendCommand: (args) => client.sendCommand(args),
    masters: () => (client.masters === undefined ? [connection] : client.masters().map(target)),
    subscriber: () => client.duplicate(),
  }
  return connection
}

function isMasterChange(event: unknown): boolean {
  return (event as { type?: unknown } | undefined)?.type === 'MASTER_CHANGE'
}

/**
 * A node-redis cluster or sentinel client as a {@link RedisSubscriberLike}. Their connection
 * errors and comebacks come as other events (`node-error`; `node-ready`, a master change),
 * which are told as `error` and `ready`. `ready` is told once when the subscription is up,
 * then at each comeback: the connections made at the start are not comebacks. An `owned`
 * client (a duplicate) is connected and destroyed here; the app's own client is only
 * subscribed, then unsubscribed and its listeners removed.
 */
function reconnectAware(
  client: NodeRedisSubscriberLike,
  owned: boolean,
  errorEvent: string,
  comeback: { event: string; when: (detail: unknown) => boolean },
): RedisSubscriberLike {
  let subscribed = false
  let subscription: { channel: string; listener: (message: string) => void } | undefined
  const readyListeners: ((error?: unknown) => void)[] = []
  const added: [string, (...args: unknown[]) => void][] = []
  const listen = (event: string, listener: (...args: unknown[]) => void): void => {
    added.push([event, listener])
    client.on(event, listener)
  }
  listen(comeback.event, (detail) => {
    if (subscribed && comeback.when(detail)) for (const listener of readyListeners) listener()
  })
  return {
    on(event, listener) {
      if (event === 'ready') readyListeners.push(listener)
      else for (const name of new Set(['error', errorEvent])) listen(name, listener)
      return this
    },
    connect: () => (owned ? client.connect() : Promise.resolve()),
    async subscribe(channel, listener) {
      subscription = { channel, listener }
      await client.subscribe(channel, listener)
      subscribed = true
      for (const ready of readyListeners) ready()
    },
    destroy() {
      for (const [event, listener] of added.splice(0)) client.off(event, listener)
      const ended = owned ? client.destroy() : subscription && client.unsubscribe(subscription.channel, subscription.listener as never)
      void Promise.resolve(ended).catch(() => {})
    },
  }
}

/**
 * Checks the `client` option: an object with `sendCommand` and `duplicate`.
 */
export function redisClientOption(value: unknown): RedisClientLike | NodeRedisClusterLike | NodeRedisSentinelLike {
  const candidate = value as Partial<RedisClientLike> | null | undefined
  if (typeof candidate !== 'object' || candidate === null) {
    throw new InvalidOptionError('client', 'must be a connected Redis client (node-redis, or one adapted as docs/redis.md shows)')
  }
  // ioredis (and its Cluster) has a sendCommand() and a duplicate() of its own, with other meanings.
  if (typeof (candidate as { status?: unknown }).status === 'string' && typeof (candidate as { call?: unknown }).call === 'function') {
    throw new InvalidOptionError(
      'client',
      'is an ioredis client: adapt it first, as docs/redis.md shows (fromIoredis, or fromIoredisCluster for a Cluster)',
    )
  }
  if (isNodeRedisTopologyClient(candidate)) return candidate as unknown as NodeRedisClusterLike | NodeRedisSentinelLike
  if (typeof candidate.sendCommand !== 'function' || typeof candidate.duplicate !== 'function') {
    throw new InvalidOptionError(
      'client',
      'must have sendCommand() and duplicate() (node-redis does; adapt other clients as docs/redis.md shows)',
    )
  }
  if (candidate.masters !== undefined && typeof candidate.masters !== 'function') {
    throw new InvalidOptionError('client', 'has a masters member that is not a function (see RedisClientLike in docs/redis.md)')
  }
  return candidate as RedisClientLike
}
