/**
 * `createRedisCache()`: the shared cache tier on Redis (see {@link SharedCache} for the
 * promises it keeps, and docs/redis.md for the deployment picture and the threat model).
 *
 * @module
 */
import { randomBytes } from 'node:crypto'
import type { SharedCache, SharedCacheKey, SharedCacheSignal, SharedCacheStats, SharedEntry, SharedLock } from '../src/adapter-kit.js'
import { tierConnection, type CommandTarget } from './connection.js'
import { createGuardedCommands, FAILED, type Operation } from './guarded-commands.js'
import { createInvalidationBus } from './invalidation-bus.js'
import { createKeyNames, deriveSecrets } from './keys.js'
import { redisCacheSettings, type RedisCacheOptions } from './options.js'
import { DROP_TOKEN_SCRIPT, GENERATION_SCRIPT, READ_SCRIPT, RELEASE_LOCK_SCRIPT, WRITE_MEMBERSHIP_SCRIPT, WRITE_SCRIPT } from './scripts.js'
import { createValueCodec } from './value-codec.js'

/** Share of a TTL taken off at random (at most), so entries written together do not expire together. */
const TTL_JITTER = 0.05
/** Keys SCAN returns per call when every entry is dropped. */
const SCAN_COUNT = '500'
/** UNLINK commands (one per token: one slot each) sent at once while every entry is dropped. */
const UNLINK_BATCH = 32
/** First and longest pause between two reads of `waitFor`, in ms. */
const FIRST_POLL = 5
const LONGEST_POLL = 50
/**
 * How long a token's generation is kept after a read, at least (ms): longer than a lookup
 * takes between reading the tier and writing the group service's answer to it. A write
 * also keeps it as long as the value it writes.
 */
const GENERATION_HOLD = '60000'
/** The generation the `invalid` marker is bound to: none (see `invalidate`). */
const NO_GENERATION = ''

/** A fresh generation: 128 random bits, so that no old one can be guessed or counted down to. */
const newGeneration = (): string => randomBytes(16).toString('base64url')

/**
 * Makes the shared cache tier on a connected Redis client. Synchronous: it opens its own
 * pub/sub connection (a duplicate of `client`) in the background; `close()` closes it. The
 * app owns `client`: it connects it, listens for its errors, and quits it.
 *
 * Throws `InvalidOptionError` naming the option for invalid options; afterwards nothing it
 * returns ever throws or rejects: a Redis failure is a miss, counted in `stats()` and told
 * to `subscribe` listeners.
 *
 * @example
 * ```ts
 * import { createClient } from 'redis'
 * import { createRedisCache } from 'voot-guard/redis'
 *
 * const client = await createClient({ url: process.env.REDIS_URL }).on('error', console.error).connect()
 * const sharedCache = createRedisCache({ client, secret: process.env.VOOT_CACHE_SECRET!, prefix: 'myapp:vg:' })
 * ```
 */
export function createRedisCache(options: RedisCacheOptions): SharedCache {
  const settings = redisCacheSettings(options)
  const secrets = deriveSecrets(settings.secret)
  const names = createKeyNames(settings.prefix, secrets)
  const codec = createValueCodec(secrets.valueKey, settings.maxValueBytes)
  const listeners = new Set<(signal: SharedCacheSignal) => void>()
  const counts = { hits: 0, misses: 0, errors: 0, unreadable: 0, filledByOthers: 0 }
  /**
   * The token generation the last read with a key object saw (`null`: that read failed).
   * `set` writes an answer only under it, so an answer fetched before an invalidation is
   * refused by Redis if the invalidation came first. Held weakly: one key object per lookup.
   */
  const observed = new WeakMap<SharedCacheKey, string | null>()
  let closed = false

  function emit(signal: SharedCacheSignal): void {
    for (const listener of listeners) {
      try {
        listener(signal)
      } catch {
        // A listener's failure must not change what the tier answers.
      }
    }
  }

  function reportError(operation: Operation, code: string): void {
    counts.errors++
    emit({ type: 'error', operation, code })
  }

  const connection = tierConnection(settings.client)
  const commands = createGuardedCommands({ ...settings, connection, onError: reportError })
  const bus = createInvalidationBus(connection, names.channel, emit, (code) => {
    reportError('subscribe', code)
  })

  /** Sends a command that names keys of one token, routed by `key` (the first) on a cluster. */
  function send(operation: Operation, key: string, args: string[]): Promise<unknown> {
    return closed ? Promise.resolve(FAILED) : commands.send(operation, args, key)
  }

  function sendTo(target: CommandTarget, args: string[]): Promise<unknown> {
    return closed ? Promise.resolve(FAILED) : commands.sendTo(target, 'invalidate', args)
  }

  /**
   * Drops every key under the prefix that `master` holds; resolves whether it answered. A
   * SCAN sees one node's keys, and an UNLINK of several keys must name keys of one slot:
   * one UNLINK per token.
   */
  async function dropEverything(master: CommandTarget): Promise<boolean> {
    let cursor = '0'
    do {
      const reply = await sendTo(master, ['SCAN', cursor, 'MATCH', names.everything, 'COUNT', SCAN_COUNT])
      if (!Array.isArray(reply) || reply.length !== 2) return false
      const [next, keys] = reply as [unknown, unknown]
      // The fleet's session ends are not answers: an invalidation of every answer keeps them.
      const groups = Array.isArray(keys) ? bySlot((keys as string[]).filter((name) => name !== names.sessionEnds)) : []
      for (let at = 0; at < groups.length; at += UNLINK_BATCH) {
        const replies = await Promise.all(groups.slice(at, at + UNLINK_BATCH).map((group) => sendTo(master, ['UNLINK', ...group])))
        if (replies.includes(FAILED)) return false
      }
      cursor = String(next)
    } while (cursor !== '0')
    return true
  }

  /** Reads an entry: a hit, `'absent'` (with whether its lock is held), or `undefined` on a failure or an unreadable value. */
  async function read(operation: Operation, key: SharedCacheKey): Promise<SharedEntry | { absent: true; locked: boolean } | undefined> {
    const entryKey = names.entry(key)
    const generationKey = names.generation(key.tokenId)
    const reply = await send(operation, entryKey, [
      'EVAL',
      READ_SCRIPT,
      '3',
      entryKey,
      names.lock(key),
      generationKey,
      newGeneration(),
      GENERATION_HOLD,
    ])
    observed.set(key, null)
    if (reply === FAILED) return undefined
    if (!Array.isArray(reply) || reply.length !== 3 || typeof reply[2] !== 'string') {
      unreadable(operation)
      return
    }
    const [stored, second, generation] = reply as [unknown, unknown, string]
    observed.set(key, generation)
    if (stored === '' || stored === null) return { absent: true, locked: Number(second) === 1 }
    const decoded =
      typeof stored === 'string' ? codec.decode(entryKey, key.kind === 'invalid' ? NO_GENERATION : generation, stored) : undefined
    if (decoded === undefined) {
      unreadable(operation)
      return
    }
    // The value's life is what its writer authenticated, cut short by Redis's TTL but never
    // lengthened by it: whoever can write Redis can PEXPIRE or PERSIST a key, not change
    // the expiry inside the value. Past it, the value is a miss, as if Redis had dropped it.
    const pttl = Number(second)
    const left = decoded.expiresAt - Date.now()
    const ttlMs = Number.isInteger(pttl) && pttl > 0 ? Math.min(pttl, left) : left
    if (!(ttlMs > 0)) return { absent: true, locked: false }
    return { value: decoded.value, ttlMs }
  }

  /** The generation to write `key` under: the one its last read saw, or (never read) the token's current one. */
  async function generationFor(key: SharedCacheKey): Promise<string | undefined> {
    const seen = observed.get(key)
    // The read before the answer was fetched failed: which generation it belongs to is unknown.
    if (seen === null) return undefined
    if (seen !== undefined) return seen
    const generationKey = names.generation(key.tokenId)
    const reply = await send('set', generationKey, ['EVAL', GENERATION_SCRIPT, '1', generationKey, newGeneration(), GENERATION_HOLD])
    return typeof reply === 'string' ? reply : undefined
  }

  function unreadable(operation: Operation): undefined {
    counts.unreadable++
    emit({ type: 'error', operation, code: 'unreadable' })
    return undefined
  }

  function isKey(key: SharedCacheKey): boolean {
    return (
      typeof key?.tokenId === 'string' &&
      key.tokenId.length === 32 &&
      (key.kind === 'membership' ? typeof key.groupId === 'string' : key.kind in KINDS)
    )
  }

  const tier: SharedCache = {
    tokenId: (token) => names.tokenId(token),

    async get(key) {
      const entry = isKey(key) ? await read('get', key) : undefined
      if (entry !== undefined && !('absent' in entry)) {
        counts.hits++
        return entry
      }
      counts.misses++
      return undefined
    },

    async set(key, value, ttlMs) {
      if (!isKey(key) || !Number.isFinite(ttlMs)) return
      const ttl = Math.floor(ttlMs * (1 - Math.random() * TTL_JITTER))
      if (ttl < 1) return
      const entryKey = names.entry(key)
      if (key.kind === 'invalid') {
        // A refusal, not a grant: bound to its key and expiry, not to a generation, so that
        // it holds across the invalidation written just before it.
        const marker = codec.encode(entryKey, NO_GENERATION, value, Date.now() + ttl)
        if (marker !== undefined) await send('set', entryKey, ['SET', entryKey, marker, 'PX', String(ttl)])
        return
      }
      const generation = await generationFor(key)
      if (generation === undefined) return
      const stored = codec.encode(entryKey, generation, value, Date.now() + ttl)
      if (stored === undefined) return
      const generationKey = names.generation(key.tokenId)
      if (key.kind === 'membership') {
        const max = String(settings.maxGroupsPerToken)
        const index = names.index(key.tokenId)
        await send('set', entryKey, [
          'EVAL',
          WRITE_MEMBERSHIP_SCRIPT,
          '3',
          entryKey,
          index,
          generationKey,
          stored,
          String(ttl),
          max,
          generation,
        ])
      } else {
        await send('set', entryKey, ['EVAL', WRITE_SCRIPT, '2', entryKey, generationKey, stored, String(ttl), generation])
      }
    },

    async acquire(key) {
      const fallback: SharedLock = { owned: true, release: async () => {} }
      if (!isKey(key)) return fallback
      const lockKey = names.lock(key)
      const owner = randomBytes(16).toString('base64url')
      const reply = await send('lock', lockKey, ['SET', lockKey, owner, 'PX', String(settings.lockTtl), 'NX'])
      // A failure of the tier: call upstream without a lock.
      if (reply === FAILED) return fallback
      if (reply === null) return { owned: false }
      let released = false
      return {
        owned: true,
        async release() {
          if (released) return
          released = true
          await send('lock', lockKey, ['EVAL', RELEASE_LOCK_SCRIPT, '1', lockKey, owner])
        },
      }
    },

    async waitFor(key, signal) {
      if (!isKey(key)) return undefined
      const until = Date.now() + settings.waitTimeout
      let pause = FIRST_POLL
      while (!closed && signal?.aborted !== true && Date.now() < until) {
        if (!(await sleep(Math.min(pause, until - Date.now()), signal))) break
        const entry = await read('wait', key)
        // A failure, or the owner gave up without an answer (its lock is gone): stop waiting.
        if (entry === undefined || ('absent' in entry && !entry.locked)) break
        if (!('absent' in entry)) {
          counts.filledByOthers++
          return entry
        }
        pause = Math.min(LONGEST_POLL, pause * 2)
      }
      return undefined
    },

    async invalidate(tokenId) {
      if (tokenId !== undefined && (typeof tokenId !== 'string' || tokenId.length !== 32)) return
      // This instance's listeners first: they must not wait for Redis, nor depend on it.
      emit(tokenId === undefined ? { type: 'invalidate' } : { type: 'invalidate', tokenId })
      const message = bus.message(tokenId)
      if (tokenId !== undefined) {
        const fixed = names.fixed(tokenId)
        const dropped = await send('invalidate', fixed[0], ['EVAL', DROP_TOKEN_SCRIPT, '5', ...fixed, names.channel, message])
        if (dropped !== FAILED) return
        // The server (on a cluster, the master) holding the token is out of reach: the other
        // instances must still drop their copies, through any master that answers.
        for (const master of connection.masters()) if ((await sendTo(master, ['PUBLISH', names.channel, message])) !== FAILED) return
        return
      }
      // Every master at once; the message goes through one that answered (on a cluster, a
      // PUBLISH on any node reaches the subscribers of every node).
      const masters = connection.masters()
      const answered = await Promise.all(masters.map(dropEverything))
      await sendTo(masters[answered.indexOf(true)] ?? connection, ['PUBLISH', names.channel, message])
    },

    subscribe(listener) {
      listeners.add(listener)
      return () => {
        listeners.delete(listener)
      }
    },

    health: () => (commands.unreachable ? 'unreachable' : 'ok'),

    stats: () => ({ ...counts }) satisfies SharedCacheStats,

    close() {
      closed = true
      bus.close()
      return Promise.resolve()
    },
  }
  return tier
}

const KINDS = { groups: true, groupsAll: true, invalid: true }

/** Keys grouped by their hash tag (`{…}`: one token's keys, one Redis Cluster slot). */
function bySlot(keys: readonly string[]): string[][] {
  const groups = new Map<string, string[]>()
  for (const key of keys) {
    const open = key.indexOf('{')
    const close = open < 0 ? -1 : key.indexOf('}', open + 1)
    const tag = close > open + 1 ? key.slice(open + 1, close) : key
    const group = groups.get(tag)
    if (group === undefined) groups.set(tag, [key])
    else group.push(key)
  }
  return [...groups.values()]
}

/** Resolves `true` after `ms`, or `false` as soon as `signal` aborts. */
function sleep(ms: number, signal: AbortSignal | undefined): Promise<boolean> {
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer)
      signal?.removeEventListener('abort', done)
      resolve(signal?.aborted !== true)
    }
    const timer = setTimeout(done, Math.max(0, ms))
    signal?.addEventListener('abort', done, { once: true })
  })
}
