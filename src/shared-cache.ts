/**
 * The seam between the resolver and a shared cache tier (L2) that every instance of an
 * application reads and writes, such as `createRedisCache()` from `voot-guard/redis`.
 *
 * The resolver looks up L1 (in process), then the shared tier, then the group service, and
 * writes an upstream answer to both. The tier is a cache, never an authority: each of its
 * operations is bounded by its own deadline, never rejects, and reports a failure as a miss
 * (and through {@link SharedCacheSignal}). Nothing here imports a Redis client.
 *
 * @module
 */

/**
 * What a shared entry holds for one token.
 *
 * @example
 * ```ts
 * const kind: SharedAnswerKind = 'groups'
 * ```
 */
export type SharedAnswerKind =
  /** `me/groups` (active memberships): a `GroupWithMembership[]`. */
  | 'groups'
  /** `me/groups?showAll=true`: a `GroupWithMembership[]`. */
  | 'groupsAll'
  /** `me/groups/{groupid}`: a `Membership`, or `null` for a 404 (not a member). */
  | 'membership'
  /** The token was refused with 401: `true`. */
  | 'invalid'

/**
 * Names one shared entry. `tokenId` comes from {@link SharedCache.tokenId}, never the token.
 *
 * @example
 * ```ts
 * const key: SharedCacheKey = { tokenId: tier.tokenId(token), kind: 'membership', groupId: 'fc:org:example.org' }
 * ```
 */
export interface SharedCacheKey {
  readonly tokenId: string
  readonly kind: SharedAnswerKind
  /** Only for `kind: 'membership'`. */
  readonly groupId?: string
}

/**
 * An answer read from the shared tier.
 *
 * @example
 * ```ts
 * const hit = await tier.get(key)
 * if (hit !== undefined) l1.put(key, hit.value, Math.min(ttl, hit.ttlMs))
 * ```
 */
export interface SharedEntry {
  /** The answer as plain JSON data (see {@link SharedAnswerKind}). */
  readonly value: unknown
  /**
   * Milliseconds the entry has left: the least of what the tier has left for it and what
   * is left of the expiry its writer gave it (a tier must not let its store lengthen an
   * entry's life). The L1 copy must not outlive it.
   */
  readonly ttlMs: number
}

/**
 * The outcome of {@link SharedCache.acquire}: `owned` means this instance won the short
 * fleet-wide lock for a cold lookup and should call the group service, then `release()`.
 *
 * @example
 * ```ts
 * const lock = await tier.acquire(key)
 * if (!lock.owned) return (await tier.waitFor(key, signal)) ?? callUpstream()
 * ```
 */
export type SharedLock = { readonly owned: true; release(): Promise<void> } | { readonly owned: false }

/**
 * What the tier tells the resolvers attached to it: another instance (or this one) dropped a
 * token's answers or every answer, or one of the tier's own operations failed (a miss).
 *
 * @example
 * ```ts
 * tier.subscribe((signal) => { if (signal.type === 'invalidate') l1.drop(signal.tokenId) })
 * ```
 */
export type SharedCacheSignal =
  | { readonly type: 'invalidate'; readonly tokenId?: string }
  | {
      readonly type: 'error'
      readonly operation: 'get' | 'set' | 'lock' | 'wait' | 'invalidate' | 'subscribe'
      /** `'timeout'`, `'breaker_open'`, `'unreadable'` (a value that failed to decrypt or parse), or the client's error kind. */
      readonly code: string
    }

/**
 * Counters of a shared tier, for `stats()` and metrics.
 *
 * @example
 * ```ts
 * const { hits, errors } = tier.stats()
 * ```
 */
export interface SharedCacheStats {
  readonly hits: number
  readonly misses: number
  /** Operations that failed, timed out or were skipped by the breaker (each one a miss). */
  readonly errors: number
  /** Values that failed authentication or parsing (each one a miss). */
  readonly unreadable: number
  /** Cold lookups that waited for another instance's answer and got it. */
  readonly filledByOthers: number
}

/**
 * A shared cache tier, as the resolver uses it. `createRedisCache()` from
 * `voot-guard/redis` makes one; the app passes it as the `sharedCache` option.
 *
 * @example
 * ```ts
 * const resolver = createMembershipResolver({ baseUrl, sharedCache: createRedisCache({ client, secret }) })
 * ```
 */
export interface SharedCache {
  /**
   * The fleet-wide id of a token: a keyed hash (HMAC-SHA256 under the tier's secret) as its
   * 32 raw bytes in a latin1 string. Every instance derives the same id; it is never the
   * token nor an unkeyed hash of it. The resolver computes it only when it asks the tier
   * (a warm decision does not) and keeps it with the token's L1 entries, so that an
   * invalidation from another instance, which names the id, finds them.
   */
  tokenId(token: string): string
  /** Reads an entry. Resolves `undefined` on a miss, a failure, a timeout or an unreadable value. Never rejects. */
  get(key: SharedCacheKey): Promise<SharedEntry | undefined>
  /**
   * Writes an entry that lives `ttlMs` (the tier may shorten it a little, against synchronized expiry). Never rejects.
   * An answer is written only if the token was not invalidated since the last `get` or `waitFor` with the same key
   * object (the read a lookup makes before it asks the group service), so that an answer fetched before an
   * invalidation is not stored after it; pass the key object of that read. The `invalid` marker is always written.
   */
  set(key: SharedCacheKey, value: unknown, ttlMs: number): Promise<void>
  /** Tries the short fleet-wide lock of a cold lookup. `{ owned: false }` when another instance holds it. On a failure of the tier, `{ owned: true }` with a no-op release (call upstream). Never rejects. */
  acquire(key: SharedCacheKey): Promise<SharedLock>
  /** Waits a short, bounded time for another instance's answer to `key`; `undefined` when none came (then call upstream). Never rejects. */
  waitFor(key: SharedCacheKey, signal?: AbortSignal): Promise<SharedEntry | undefined>
  /**
   * Drops one token's entries (or every entry) in the tier and tells every instance. Settles once the tier dropped them and the message was sent; never rejects.
   * This instance's own listeners are told at once (before Redis is asked), other instances' through the tier.
   * Every entry of the token goes, the `invalid` marker included: after a 401, call `invalidate(tokenId)` first and `set` the marker once it settled.
   */
  invalidate(tokenId?: string): Promise<void>
  /** Receives {@link SharedCacheSignal}s; returns the function that stops them. */
  subscribe(listener: (signal: SharedCacheSignal) => void): () => void
  /** `'ok'`, or `'unreachable'` while the tier's breaker is open or its last operation failed. */
  health(): 'ok' | 'unreachable'
  /** Counters. */
  stats(): SharedCacheStats
  /** Releases what the tier opened itself (its pub/sub subscription); the app's client stays open. */
  close(): Promise<void>
}
