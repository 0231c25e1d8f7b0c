/**
 * Cache keys derived from a token without ever storing the token.
 *
 * The digest is SHA-256 over a random per-resolver salt and the token: a heap dump of the
 * cache cannot be used to confirm a guessed token, and two resolvers never share keys. It
 * is kept as its 32 raw bytes (a 32-character latin1 string): shorter keys than base64url,
 * and no encoding step on every request.
 *
 * The key of `me/groups`, the one every warm request looks up, is the digest itself (no
 * concatenation per request); any other key is `<digest> NUL <kind> [NUL <group id>]`.
 * Keys are unambiguous because the digest has a fixed length (whatever bytes it holds)
 * and a group id cannot contain NUL (control characters are refused); every key of a
 * token, and only those, starts with its digest.
 *
 * @module
 */
// node:crypto on Node, a synchronous SHA-256 elsewhere: the package's `imports` choose.
import { createSaltedDigest } from '#digest'

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
 * Turns tokens into salted SHA-256 digests and digests into cache keys.
 */
export interface CacheKeys {
  /** The salted digest of a token (the 32 raw bytes of a SHA-256, as a latin1 string). */
  digest(token: string): string
  /** The cache key of one answer for one token digest. */
  key(digest: string, kind: CacheKeyKind, groupId?: string): string
  /** The prefix every key of one token digest starts with. */
  prefix(digest: string): string
}

/**
 * Creates a {@link CacheKeys} with a fresh random salt, or with the given digest (a shared
 * tier's keyed hash, which must also be 32 raw bytes as a latin1 string).
 */
export function createCacheKeys(digest?: (token: string) => string): CacheKeys {
  return {
    // A shared tier's digest is an HMAC of the same 32-byte length, the same for every instance.
    digest: digest ?? createSaltedDigest(),
    key: (digest, kind, groupId) => {
      if (kind === 'groups') return digest
      return groupId === undefined ? digest + SEPARATOR + KIND_TAG[kind] : digest + SEPARATOR + KIND_TAG[kind] + SEPARATOR + groupId
    },
    prefix: (digest) => digest,
  }
}
