/**
 * `createSessionEnds()`: the ends of sessions shared by a fleet through the shared tier's
 * Redis, for session stores that live in cookies (the gate's): a session ended on one
 * instance (a sign-out, a back-channel logout) is refused by every instance.
 *
 * What Redis holds is one sorted set, `<prefix>session-ends`: a keyed hash of what ended
 * (never a session id, a token or a user's name) with the time it ended, scored by the time
 * the sessions it ends would have ended anyway; pruned on every write, bounded, and expiring
 * with its last member. An end is published on the tier's channel as an invalidation is
 * (`<instance> e:<id>:<ended at>:<until>`; the tier's own subscription ignores it), so every
 * running instance hears of it at once; an instance that starts later, or whose subscription
 * was down, reads the set when its subscription is (back) up. Nothing is read per request:
 * each instance keeps the ends in its memory, and Redis only ever adds to them, so a Redis
 * outage never opens a session the instance knows to be ended.
 *
 * @module
 */
import { createHmac, hkdfSync, randomBytes } from 'node:crypto'
import type { NodeRedisClusterLike, NodeRedisSentinelLike } from './connection.js'
import { tierConnection } from './connection.js'
import type { RedisClientLike, RedisSubscriberLike } from './client.js'
import { createGuardedCommands, errorCode, FAILED } from './guarded-commands.js'
import { redisCacheSettings } from './options.js'

/**
 * One ended session, or every session of one provider session or user that began by a time.
 *
 * @example
 * ```ts
 * const end: SessionEnd = { id: ends.idOf('session', sessionId), endedAt: Date.now(), until: Date.now() + 28_800_000 }
 * ```
 */
export interface SessionEnd {
  /** The keyed hash of what ended ({@link RedisSessionEnds.idOf}). */
  readonly id: string
  /** When it ended (ms since the epoch): sessions that began later are not ended by it. */
  readonly endedAt: number
  /** Until when it matters (ms since the epoch): every session it ends would have ended by then. */
  readonly until: number
}

/**
 * Options of {@link createSessionEnds}: the shared tier's own (`client`, `secret`, `prefix`).
 *
 * @example
 * ```ts
 * const options: SessionEndsOptions = { client, secret: process.env.VOOT_CACHE_SECRET!, prefix: 'vg:' }
 * ```
 */
export interface SessionEndsOptions {
  /** A connected client, as {@link RedisCacheOptions.client}; the app owns it. */
  client: RedisClientLike | NodeRedisClusterLike | NodeRedisSentinelLike
  /** The fleet's shared secret, as the tier's (the hashes are keyed by a key derived from it). */
  secret: string | Uint8Array
  /** As the tier's `prefix`; default `'vg:'`. */
  prefix?: string
  /** Deadline of each Redis call, in ms; default `50`. */
  timeout?: number
  /** Most ends kept (in Redis, and pending while Redis is away); default `100000`. */
  max?: number
}

/**
 * The fleet's session ends (see the module's description).
 *
 * @example
 * ```ts
 * const ends = createSessionEnds({ client, secret })
 * ends.subscribe((end) => localList.add(end.id, end.until, end.endedAt))
 * await ends.end({ id: ends.idOf('session', sessionId), endedAt: Date.now(), until })
 * ```
 */
export interface RedisSessionEnds {
  /** The keyed hash (base64url, 128 bits) naming what ended: `kind` and its parts, unambiguously. */
  idOf(kind: 'session' | 'sid' | 'sub', ...parts: string[]): string
  /**
   * Keeps `end` in Redis and publishes it; resolves `true` once done, `false` when Redis did
   * not answer (it is then kept pending, bounded, and written when the subscription is back).
   * Never rejects.
   */
  end(end: SessionEnd): Promise<boolean>
  /** Tells `listener` every end heard of: published by another instance, or read from Redis. */
  subscribe(listener: (end: SessionEnd) => void): () => void
  /** Whether the set was read since the subscription was last (re)established. */
  readonly current: boolean
  /** Ends the subscription. The app's client stays open. */
  close(): void
}

const END_SCRIPT = `
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[3])
local excess = redis.call('ZCARD', KEYS[1]) - tonumber(ARGV[4])
if excess > 0 then redis.call('ZREMRANGEBYRANK', KEYS[1], 0, excess - 1) end
local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
if last[2] then redis.call('PEXPIREAT', KEYS[1], math.floor(tonumber(last[2])) + 1) end
redis.call('PUBLISH', ARGV[5], ARGV[6])
return 1
`

const ID = /^[A-Za-z0-9_-]{22}$/
/** Pause between two reads of the ends while Redis does not answer, in ms. */
const CATCH_UP_PAUSE = 250

/** Reads `<id>:<ended at>:<until>`; `undefined` for anything else. */
function parseEnd(text: string): SessionEnd | undefined {
  const [id, endedAt, until, extra] = text.split(':')
  if (extra !== undefined || id === undefined || !ID.test(id)) return undefined
  const ended = Number(endedAt)
  const end = Number(until)
  if (!Number.isSafeInteger(ended) || !Number.isSafeInteger(end)) return undefined
  return { id, endedAt: ended, until: end }
}

/**
 * Makes the fleet's session ends on the shared tier's Redis (see {@link RedisSessionEnds}).
 * Synchronous: it opens its own subscription in the background. Throws
 * `InvalidOptionError` for invalid options; afterwards nothing it returns throws.
 *
 * @example
 * ```ts
 * import { createClient } from 'redis'
 * import { createSessionEnds } from 'voot-guard/redis'
 *
 * const client = await createClient({ url: process.env.REDIS_URL }).connect()
 * const ends = createSessionEnds({ client, secret: process.env.VOOT_CACHE_SECRET! })
 * ends.subscribe((end) => signedOut.add(end.id, end.until, end.endedAt))
 * ```
 */
export function createSessionEnds(options: SessionEndsOptions): RedisSessionEnds {
  const { max: givenMax, ...tierOptions } = options
  const settings = redisCacheSettings(tierOptions)
  const max = Number.isSafeInteger(givenMax) && (givenMax as number) > 0 ? (givenMax as number) : 100_000
  const hashKey = Buffer.from(hkdfSync('sha256', settings.secret, 'voot-guard/redis', 'session end v1', 32))
  const key = `${settings.prefix}session-ends`
  const channel = `${settings.prefix}invalidate`
  const instance = randomBytes(9).toString('base64url')
  const connection = tierConnection(settings.client)
  const commands = createGuardedCommands({ ...settings, connection, onError: () => {} })
  const listeners = new Set<(end: SessionEnd) => void>()
  /** Ends Redis did not take: written again when it is back. Bounded by `max`. */
  const pending = new Map<string, SessionEnd>()
  let subscriber: RedisSubscriberLike | undefined
  let closed = false
  let wasReady = false
  let current = false
  let catchingUp = false
  let retry: NodeJS.Timeout | undefined

  function tell(end: SessionEnd): void {
    for (const listener of listeners) {
      try {
        listener(end)
      } catch {
        // A listener's failure must not stop the others.
      }
    }
  }

  function receive(message: string): void {
    const space = message.indexOf(' ')
    if (space < 0 || message.slice(0, space) === instance) return
    const body = message.slice(space + 1)
    // Invalidations share the channel: they are the tier's.
    if (!body.startsWith('e:')) return
    const end = parseEnd(body.slice(2))
    if (end !== undefined) tell(end)
  }

  async function write(end: SessionEnd): Promise<boolean> {
    if (closed) return false
    const message = `${instance} e:${end.id}:${end.endedAt}:${end.until}`
    const reply = await commands.send(
      'invalidate',
      ['EVAL', END_SCRIPT, '1', key, String(end.until), `${end.id}:${end.endedAt}`, String(Date.now()), String(max), channel, message],
      key,
    )
    return reply !== FAILED
  }

  /**
   * Reads every end Redis holds (the longest-lived first, at most `max`), then writes those
   * still pending. Until Redis answers (the app's client may reconnect after the
   * subscription does), it tries again, at most every `CATCH_UP_PAUSE` ms, one try at a time.
   */
  async function catchUp(): Promise<void> {
    if (catchingUp || closed) return
    catchingUp = true
    clearTimeout(retry)
    try {
      const reply = await commands.send(
        'get',
        ['ZREVRANGEBYSCORE', key, '+inf', `(${Date.now()}`, 'WITHSCORES', 'LIMIT', '0', String(max)],
        key,
      )
      if (!Array.isArray(reply)) {
        retry = setTimeout(() => void catchUp(), CATCH_UP_PAUSE)
        retry.unref()
        return
      }
      // Member and score in turn (RESP2), or as pairs (RESP3 clients).
      const flat = (reply as unknown[]).flat()
      for (let at = 0; at + 1 < flat.length; at += 2) {
        const end = parseEnd(`${String(flat[at])}:${String(flat[at + 1])}`)
        if (end !== undefined) tell(end)
      }
      current = true
      for (const [id, end] of pending) {
        if (end.until <= Date.now() || (await write(end))) pending.delete(id)
      }
    } finally {
      catchingUp = false
    }
  }

  try {
    subscriber = connection.subscriber()
    subscriber.on('error', () => {
      current = false
    })
    subscriber.on('ready', () => {
      // Back after an outage: ends published meanwhile were missed; Redis has kept them.
      if (wasReady && !closed) void catchUp()
      wasReady = true
    })
    subscriber
      .connect()
      .then(async () => {
        if (closed) {
          subscriber?.destroy()
          return
        }
        // Subscribed first, then read: an end published in between is heard, not lost.
        await subscriber?.subscribe(channel, receive)
        await catchUp()
      })
      .catch((error: unknown) => {
        void errorCode(error)
      })
  } catch {
    // No subscription: this instance hears of no other's ends; its own still hold.
  }

  return {
    idOf(kind, ...parts) {
      const hmac = createHmac('sha256', hashKey).update(kind)
      for (const part of parts) hmac.update('\0').update(String(part.length)).update(':').update(part, 'utf8')
      return hmac.digest().subarray(0, 16).toString('base64url')
    },
    async end(end) {
      if (!ID.test(end.id) || !Number.isSafeInteger(end.endedAt) || !Number.isSafeInteger(end.until)) return false
      if (await write(end)) return true
      if (pending.size >= max) {
        const first = pending.keys().next().value
        if (first !== undefined) pending.delete(first)
      }
      pending.set(end.id, end)
      return false
    },
    subscribe(listener) {
      listeners.add(listener)
      return () => {
        listeners.delete(listener)
      }
    },
    get current() {
      return current
    },
    close() {
      if (closed) return
      closed = true
      clearTimeout(retry)
      try {
        subscriber?.destroy()
      } catch {
        // Already closed.
      }
    },
  }
}
