/**
 * Cache keys derived from a token without ever storing the token.
 *
 * The digest is a keyed hash of the token under secrets drawn for each resolver
 * (`token-digest.ts`: SipHash-2-4-128 for a short token, a salted SHA-256 for a long one):
 * a heap dump of the cache cannot be used to confirm a guessed token without those secrets
 * too, and two resolvers never share keys. With a shared tier too: the tier's fleet-wide
 * token id is computed only when the tier is asked, and the store maps it to this digest
 * (`token-index.ts`). It is kept as its 16 raw bytes (a
 * 16-character latin1 string): short keys, and no encoding step on every request.
 *
 * The key of `me/groups`, the one every warm request looks up, is the digest itself (no
 * concatenation per request); any other key is `<digest> NUL <kind> [NUL <group id>]`.
 * Keys are unambiguous because the digest has a fixed length (whatever bytes it holds)
 * and a group id cannot contain NUL (control characters are refused); every key of a
 * token, and only those, starts with its digest.
 *
 * @module
 */
// The SHA-256 of long tokens: node:crypto on Node, a synchronous one elsewhere; the package's `imports` choose.
import { createRuntimeTokenDigest } from '#digest'

const SEPARATOR = '\u0000'

/**
 * What a cache entry holds, per token.
 */
export type CacheKeyKind =
  /** `me/groups` (active memberships). */
  | 'groups'
  /** `me/groups?showAll=true`. */
  | 'groupsAll'
  /** `me/groups/{groupid}`. */
  | 'membership'
  /** The token was refused with 401. */
  | 'invalid'

const KIND_TAG: Readonly<Record<Exclude<CacheKeyKind, 'groups'>, string>> = {
  groupsAll: 'G',
  membership: 'm',
  invalid: 'x',
}

/**
 * Turns tokens into keyed digests and digests into cache keys.
 */
export interface CacheKeys {
  /**
   * The keyed digest of a token (16 raw bytes as a latin1 string); with `from`, of the
   * token that starts there in `source` and runs to its end (a header's, read in place).
   */
  digest(source: string, from?: number): string
  /** The cache key of one answer for one token digest. */
  key(digest: string, kind: CacheKeyKind, groupId?: string): string
  /** The prefix every key of one token digest starts with. */
  prefix(digest: string): string
}

/**
 * Creates a {@link CacheKeys} with fresh random secrets, keeping at most `poolSize` recent
 * digests for reuse (`digest-pool.ts`).
 */
export function createCacheKeys(poolSize?: number): CacheKeys {
  return {
    digest: createRuntimeTokenDigest(poolSize),
    key: (digest, kind, groupId) => {
      if (kind === 'groups') return digest
      return groupId === undefined ? digest + SEPARATOR + KIND_TAG[kind] : digest + SEPARATOR + KIND_TAG[kind] + SEPARATOR + groupId
    },
    prefix: (digest) => digest,
  }
}
