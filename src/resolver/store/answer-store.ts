/**
 * The in-process answer store (L1): the answers of the group service per token, with their
 * lifetimes, the revocation marker a 401 leaves, and the bound in entries and bytes.
 *
 * How entries are laid out is this module's own business: keys derived from a keyed digest
 * of the token (`token-digest.ts`, with or without a shared tier), answers frozen and their identical parts
 * shared between tokens (`answer-pool.ts`), repeated strings interned, lifetimes kept as
 * small integers (`cache-entry.ts`). Callers see answers and instants only.
 *
 * @module
 */
import { LRUCache } from 'lru-cache'
import { createAnswerPool } from './answer-pool.js'
import { CacheEntry } from './cache-entry.js'
import { createCacheKeys, type CacheKeyKind } from './cache-key.js'
import { createTokenIndex, isMembershipKey } from './token-index.js'
import { TOKEN_DIGEST_LENGTH } from './token-digest.js'
import { DIGEST_POOL_SIZE } from './digest-pool.js'
import { deepFreeze } from './deep-freeze.js'
import { indexGroups } from '../../decision/groups-index.js'
import { pooled, POOLED_KEYS } from './string-pool.js'
import type { GroupWithMembership, Membership } from '../../types.js'

export type { CacheKeyKind as AnswerKind } from './cache-key.js'

/**
 * One answer to store, with its timing.
 */
export interface StoredAnswer {
  readonly digest: string
  readonly kind: CacheKeyKind
  readonly groupId: string | undefined
  /** The answer as the client gave it (it is frozen, interned and pooled here). */
  readonly answer: unknown
  /** When it arrived (ms since the epoch). */
  readonly at: number
  /** How long it is fresh (ms); 0 stores nothing. */
  readonly life: number
  /** When the token expires: no answer is kept past it. */
  readonly deadline: number
  /** `false` when the lookup was invalidated while it ran: prepare the answer, store nothing. */
  readonly keep: boolean
}

/**
 * The L1 store of one resolver. Created by {@link createAnswerStore}.
 */
export interface AnswerStore {
  /**
   * The token's digest, the only form in which a token is known here; with `from`, of the
   * token that starts there in `source` (a header's, read in place without a slice).
   */
  digest(source: string, from?: number): string
  /** The fresh answer, not revoked by a later 401; `undefined` otherwise. Counts as a use (recency). */
  fresh(digest: string, kind: CacheKeyKind, groupId: string | undefined, at: number): CacheEntry | undefined
  /** An expired answer at most `staleIfError` old and not revoked, for serving after a failure. */
  stale(digest: string, kind: CacheKeyKind, groupId: string | undefined, at: number): CacheEntry | undefined
  /** Prepares an answer (frozen, pooled, `me/groups` indexed), stores it when asked to, and returns the prepared value. */
  put(stored: StoredAnswer): unknown
  /** Whether a 401 for this token is still remembered (`negativeTtl`). */
  isMarkedInvalid(digest: string, at: number): boolean
  /** Records a 401: nothing cached for the token before it is served again, stale or not. */
  markInvalid(digest: string, at: number): void
  /** The key of one answer, also the key of its upstream flight. */
  keyOf(digest: string, kind: CacheKeyKind, groupId: string | undefined): string
  /** What every key of one token starts with. */
  prefixOf(digest: string): string
  /** Drops one token's answers; its 401 marker too unless `keepMarker` (another instance's revocation must not undo ours). Costs that token's entries only. */
  dropToken(digest: string, keepMarker: boolean): void
  /**
   * Keeps the token known under a shared tier's `tokenId` while a cold lookup runs (call
   * the returned function when it ends), and for as long as the token has entries, so
   * that an invalidation naming the id finds them ({@link digestOf}).
   */
  hold(digest: string, tokenId: string): () => void
  /** The digest of the token a shared tier's id names, or `undefined` when nothing of it is here (one map lookup). */
  digestOf(tokenId: string): string | undefined
  /** Drops every answer. */
  clear(): void
  /** Entries held now. */
  readonly size: number
}

/** Settings of {@link createAnswerStore}, validated by the resolver. */
export interface AnswerStoreSettings {
  readonly max: number
  readonly maxBytes: number
  readonly ttl: number
  readonly negativeTtl: number
  readonly staleIfError: number
}

/** Estimated bytes of an entry's own bookkeeping: key, entry object, LRU slots. */
const ENTRY_OVERHEAD = 120

/**
 * Creates an {@link AnswerStore}.
 */
export function createAnswerStore(settings: AnswerStoreSettings): AnswerStore {
  const { ttl, negativeTtl, staleIfError } = settings
  // A pool of recent digests no larger than the cache's bound in entries.
  const keys = createCacheKeys(Math.min(settings.max, DIGEST_POOL_SIZE))
  const index = createTokenIndex((digest, except) => {
    const alive = (key: string): boolean => key !== except && cache.has(key)
    return alive(keys.key(digest, 'groups')) || alive(keys.key(digest, 'groupsAll')) || alive(keys.key(digest, 'invalid'))
  })
  const cache = new LRUCache<string, CacheEntry>({
    max: settings.max,
    maxSize: settings.maxBytes,
    // One huge answer must not push out the answers of every other user.
    maxEntrySize: Math.max(1, Math.floor(settings.maxBytes / 10)),
    // The index follows the keys: told of each new key and of each key removed (evicted,
    // deleted, or refused as too large), not of an answer replaced under the same key.
    noDisposeOnSet: true,
    onInsert: (_entry, key, reason) => {
      if (reason === 'add') index.added(key)
    },
    dispose: (_entry, key) => {
      index.removed(key)
      if (isMembershipKey(key)) forgetVerdicts(key)
    },
  })
  const pool = createAnswerPool()

  /**
   * Ends the remembered verdicts of the token of a membership key (any key of a token
   * starts with its digest, and its `me/groups` key is the digest itself): a membership
   * answer stored, replaced or removed may change what the rules would decide.
   */
  function forgetVerdicts(key: string): void {
    const groups = cache.peek(key.slice(0, TOKEN_DIGEST_LENGTH))
    if (groups !== undefined) groups.verdicts = undefined
  }

  /**
   * Whether a cached answer predates a 401 of its token. Such answers are never served
   * again, fresh or stale: the marker's `hardUntil` outlives every answer stored before it
   * (`ttl + staleIfError`), so no per-token scan of the cache is needed.
   */
  function isRevoked(entry: CacheEntry, digest: string, at: number): boolean {
    const marker = cache.peek(keys.key(digest, 'invalid'))
    return marker !== undefined && at < marker.hardUntil && entry.storedAt <= marker.storedAt
  }

  function prepare(kind: CacheKeyKind, answer: unknown): unknown {
    switch (kind) {
      case 'groups':
        return indexGroups(pool.shareAll(answer as readonly GroupWithMembership[]))
      case 'groupsAll':
        return pool.shareAll(answer as readonly GroupWithMembership[])
      case 'membership':
        return answer === null ? null : pool.share(answer as Membership)
      case 'invalid':
        return answer
    }
  }

  return {
    digest: (source, from) => keys.digest(source, from),
    fresh(digest, kind, groupId, at) {
      const entry = cache.get(keys.key(digest, kind, groupId))
      // Written as `!(a < b)` so that a NaN clock counts as not fresh.
      if (entry === undefined || !(at < entry.freshUntil)) return undefined
      // `me/groups` entries go when a 401 is recorded; other answers are checked against it.
      return kind === 'groups' || !isRevoked(entry, digest, at) ? entry : undefined
    },
    stale(digest, kind, groupId, at) {
      if (staleIfError === 0) return undefined
      const entry = cache.get(keys.key(digest, kind, groupId))
      if (entry === undefined || at - entry.freshUntil > staleIfError || !(at < entry.hardUntil)) return undefined
      return isRevoked(entry, digest, at) ? undefined : entry
    },
    put({ digest, kind, groupId, answer, at, life, deadline, keep }) {
      // Interned and measured before freezing, while the parsed answer can still change.
      const bytes = ENTRY_OVERHEAD + internAndMeasure(answer, 0)
      const value = deepFreeze(prepare(kind, answer))
      if (keep && life > 0 && at < deadline) {
        const entry = new CacheEntry(value, at, Math.min(at + life, deadline), deadline)
        const key = keys.key(digest, kind, groupId)
        cache.set(key, entry, { size: bytes })
        // A replaced answer is not disposed of (`noDisposeOnSet`): its verdicts end here.
        if (kind === 'membership') forgetVerdicts(key)
      }
      return value
    },
    isMarkedInvalid(digest, at) {
      const marker = cache.get(keys.key(digest, 'invalid'))
      return marker !== undefined && at < marker.freshUntil
    },
    markInvalid(digest, at) {
      // The warm path reads `me/groups` without looking for a marker, so those go now.
      cache.delete(keys.key(digest, 'groups'))
      cache.delete(keys.key(digest, 'groupsAll'))
      const hardUntil = at + Math.max(negativeTtl, ttl + staleIfError)
      cache.set(keys.key(digest, 'invalid'), new CacheEntry(true, at, at + negativeTtl, hardUntil), { size: ENTRY_OVERHEAD })
    },
    keyOf: (digest, kind, groupId) => keys.key(digest, kind, groupId),
    prefixOf: (digest) => keys.prefix(digest),
    dropToken(digest, keepMarker) {
      // The fixed names are derived; the membership keys are the index's.
      cache.delete(keys.key(digest, 'groups'))
      cache.delete(keys.key(digest, 'groupsAll'))
      if (!keepMarker) cache.delete(keys.key(digest, 'invalid'))
      for (const key of index.membersOf(digest)) cache.delete(key)
    },
    hold: (digest, tokenId) => index.hold(digest, tokenId),
    digestOf: (tokenId) => index.digestOf(tokenId),
    clear() {
      // The index first: the cache's disposal of each entry then finds nothing to update.
      index.clear()
      cache.clear()
      pool.clear()
    },
    get size() {
      return cache.size
    },
  }
}

/**
 * Interns the strings every answer repeats (group ids, types, role names) in place, and
 * estimates the heap the answer takes: a parsed answer costs several times its size on the
 * wire (object headers, property slots, two-byte strings), and the bound on the cache is in
 * bytes. Shared parts are counted for every answer that holds them: an estimate that errs
 * on the side of the bound.
 */
function internAndMeasure(value: unknown, depth: number): number {
  // V8's sizes, roughly: a string's header and its (usually one-byte) characters, an
  // object's header and a slot per property, an array's header and a slot per element.
  if (typeof value === 'string') return 16 + value.length
  if (typeof value !== 'object' || value === null) return 8
  // Parsing bounds real answers at 64 levels; a custom client's deeper objects are not walked further.
  if (depth > 64) return 64
  if (Array.isArray(value)) {
    let bytes = 16 + 8 * value.length
    for (const element of value) bytes += internAndMeasure(element, depth + 1)
    return bytes
  }
  const fields = value as Record<string, unknown>
  const writable = !Object.isFrozen(value)
  let bytes = 24
  for (const key of Object.keys(fields)) {
    const inner = fields[key]
    bytes += 8
    if (writable && typeof inner === 'string' && POOLED_KEYS.has(key)) fields[key] = pooled(inner)
    bytes += internAndMeasure(inner, depth + 1)
  }
  return bytes
}
