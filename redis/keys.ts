/**
 * Redis key names of the shared tier, and the secrets derived from the shared `secret`.
 *
 * Every name is `prefix` + `{` + the token id (base64url) + `}` + a kind tag, so a dump
 * shows neither the token nor any unkeyed hash of it, and all of one token's keys share a
 * Redis Cluster hash slot (the scripts touch several of them at once). A group id appears
 * only as an HMAC under the secret, bound to the token id, so a dump shows neither group
 * names nor which tokens looked up the same group.
 *
 * Keys of one token: `g` (me/groups), `a` (me/groups?showAll), `x` (invalid token),
 * `i` (the set of its membership keys), `v` (its generation: a random nonce that every
 * value of the token is bound to, dropped with the token's entries), up to
 * `maxGroupsPerToken` membership keys `m:<hmac>`, and short-lived locks `l:<kind>`.
 *
 * @module
 */
import { createHmac, hkdfSync } from 'node:crypto'
import type { SharedCacheKey } from '../src/adapter-kit.js'
import { createTokenId } from './token-id.js'

/** Byte length of a token id (HMAC-SHA256). */
export const TOKEN_ID_BYTES = 32
/** Byte length kept of a group id's HMAC: 128 bits, no collision among a token's few groups. */
const GROUP_HASH_BYTES = 16

/**
 * Keys derived from the shared secret with HKDF-SHA256, one per purpose.
 */
export interface DerivedSecrets {
  readonly tokenKey: Buffer
  readonly groupKey: Buffer
  readonly valueKey: Buffer
}

/**
 * Derives the tier's keys from `secret`.
 */
export function deriveSecrets(secret: Buffer): DerivedSecrets {
  const derive = (info: string): Buffer => Buffer.from(hkdfSync('sha256', secret, 'voot-guard/redis', info, 32))
  return { tokenKey: derive('token id v1'), groupKey: derive('group id v1'), valueKey: derive('value v1') }
}

/**
 * The names of one tier's keys and channel.
 */
export interface KeyNames {
  /** HMAC-SHA256 of the token: 32 bytes as a latin1 string. */
  tokenId(token: string): string
  /** The key of an entry. */
  entry(key: SharedCacheKey): string
  /** The key of the cold-lookup lock of an entry. */
  lock(key: SharedCacheKey): string
  /** The key of the set of a token's membership keys. */
  index(tokenId: string): string
  /** The key of a token's generation. */
  generation(tokenId: string): string
  /** The keys of a token that have fixed names: groups, groupsAll, invalid, the index, the generation. */
  fixed(tokenId: string): [string, string, string, string, string]
  /** The pub/sub channel of invalidations. */
  readonly channel: string
  /** A SCAN MATCH pattern for every key under the prefix. */
  readonly everything: string
  /** The key of the fleet's session ends (`createSessionEnds`), which dropping every answer keeps. */
  readonly sessionEnds: string
}

const KIND_TAGS = { groups: 'g', groupsAll: 'a', invalid: 'x', membership: 'm' } as const

/**
 * Makes the {@link KeyNames} of a prefix and secret.
 */
export function createKeyNames(prefix: string, secrets: DerivedSecrets): KeyNames {
  const base = (tokenId: string): string => `${prefix}{${Buffer.from(tokenId, 'latin1').toString('base64url')}}:`
  // One lookup asks for the entry and the lock of one key object (read, lock, write): its
  // group id's HMAC is computed once per key object, not once per name.
  const tails = new WeakMap<SharedCacheKey, string>()
  const tail = (key: SharedCacheKey): string => {
    if (key.kind !== 'membership') return KIND_TAGS[key.kind]
    let found = tails.get(key)
    if (found !== undefined) return found
    // The token id has a fixed length, so token id + group id is an unambiguous HMAC input.
    const hash = createHmac('sha256', secrets.groupKey)
      .update(Buffer.from(key.tokenId, 'latin1'))
      .update(key.groupId ?? '', 'utf8')
      .digest()
      .subarray(0, GROUP_HASH_BYTES)
    found = `m:${hash.toString('base64url')}`
    tails.set(key, found)
    return found
  }
  return {
    tokenId: createTokenId(secrets.tokenKey),
    entry: (key) => base(key.tokenId) + tail(key),
    lock: (key) => `${base(key.tokenId)}l:${tail(key)}`,
    index: (tokenId) => `${base(tokenId)}i`,
    generation: (tokenId) => `${base(tokenId)}v`,
    fixed: (tokenId) => {
      const at = base(tokenId)
      return [at + KIND_TAGS.groups, at + KIND_TAGS.groupsAll, at + KIND_TAGS.invalid, `${at}i`, `${at}v`]
    },
    channel: `${prefix}invalidate`,
    everything: `${prefix.replace(/[*?[\]\\]/g, '\\$&')}*`,
    sessionEnds: `${prefix}session-ends`,
  }
}
