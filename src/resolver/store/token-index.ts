/**
 * What the answer store knows of a token besides its entries: the keys of its membership
 * answers (the only keys of a token whose names cannot be derived from its digest), and,
 * with a shared tier, the tier's token id, so that an invalidation naming that id finds
 * the token's entries and flights.
 *
 * It is what makes dropping one token cost that token's entries, whatever the store
 * holds: the token's fixed keys are derived from its digest, its membership keys are
 * listed here, and an id that names no token here is one map lookup. A record exists only
 * while the token has entries that need it (a membership answer, or any answer once a
 * tier id is known) or a cold lookup holds it, so the index is bounded by the store's own
 * bound plus the lookups under way.
 *
 * @module
 */
import { TOKEN_DIGEST_LENGTH } from './token-digest.js'

/** The tag that follows the digest and its separator in a membership key (see `cache-key.ts`). */
const MEMBERSHIP_TAG = 'm'

/** Whether a store key is a `me/groups/{id}` answer's. */
export function isMembershipKey(key: string): boolean {
  return key.length > TOKEN_DIGEST_LENGTH + 1 && key[TOKEN_DIGEST_LENGTH + 1] === MEMBERSHIP_TAG
}

class TokenRecord {
  tokenId: string | undefined = undefined
  /** Keys of the token's membership answers in the store; made with the first (most tokens have none or one). */
  members: string[] | undefined = undefined
  /** Cold lookups under way that hold the record. */
  holds = 0
}

/**
 * The per-token index of one answer store. Created by {@link createTokenIndex}.
 */
export interface TokenIndex {
  /** Tells the index that the store added `key` (call it for new keys only, not on overwrites). */
  added(key: string): void
  /** Tells the index that the store is removing `key`, for any reason. */
  removed(key: string): void
  /** Keys of the token's membership answers: a copy, safe to iterate while deleting. */
  membersOf(digest: string): readonly string[]
  /**
   * Keeps the token known under `tokenId` (a shared tier's id) while a cold lookup runs;
   * the returned function ends the hold. The id stays known for as long as the token has
   * entries.
   */
  hold(digest: string, tokenId: string): () => void
  /** The digest of the token a shared tier's id names, or `undefined` when no entry or lookup of it is here. */
  digestOf(tokenId: string): string | undefined
  /** Forgets every token. */
  clear(): void
  /** Tokens with a record now. */
  readonly size: number
}

/**
 * Creates a {@link TokenIndex}. `holds(digest, except)` tells whether the store still
 * holds a fixed-name entry (`me/groups`, `showAll`, the 401 marker) of the token other
 * than the key `except` being removed.
 */
export function createTokenIndex(holdsFixed: (digest: string, except: string) => boolean): TokenIndex {
  const records = new Map<string, TokenRecord>()
  const digests = new Map<string, string>()

  const digestOfKey = (key: string): string => (key.length === TOKEN_DIGEST_LENGTH ? key : key.slice(0, TOKEN_DIGEST_LENGTH))

  function forget(digest: string, record: TokenRecord): void {
    if (records.get(digest) !== record) return
    records.delete(digest)
    if (record.tokenId !== undefined && digests.get(record.tokenId) === digest) digests.delete(record.tokenId)
  }

  /** Drops the record once nothing needs it: no hold, no membership, and (with a tier id) no other entry. */
  function settle(digest: string, record: TokenRecord, except: string): void {
    if (record.holds > 0 || (record.members !== undefined && record.members.length > 0)) return
    if (record.tokenId !== undefined && holdsFixed(digest, except)) return
    forget(digest, record)
  }

  return {
    added(key) {
      if (!isMembershipKey(key)) return
      const digest = digestOfKey(key)
      let record = records.get(digest)
      if (record === undefined) records.set(digest, (record = new TokenRecord()))
      if (record.members === undefined) record.members = [key]
      else record.members.push(key)
    },
    removed(key) {
      const digest = digestOfKey(key)
      const record = records.get(digest)
      if (record === undefined) return
      const members = record.members
      if (members !== undefined && isMembershipKey(key)) {
        // Order does not matter: the last key takes the removed one's place.
        const at = members.lastIndexOf(key)
        if (at >= 0) {
          const last = members.pop()
          if (last !== undefined && at < members.length) members[at] = last
        }
      }
      settle(digest, record, key)
    },
    membersOf(digest) {
      const record = records.get(digest)
      return record?.members === undefined || record.members.length === 0 ? [] : record.members.slice()
    },
    hold(digest, tokenId) {
      let record = records.get(digest)
      if (record === undefined) records.set(digest, (record = new TokenRecord()))
      if (record.tokenId === undefined) {
        record.tokenId = tokenId
        digests.set(tokenId, digest)
      }
      record.holds++
      const held = record
      let released = false
      return () => {
        if (released) return
        released = true
        held.holds--
        settle(digest, held, '')
      }
    },
    digestOf: (tokenId) => digests.get(tokenId),
    clear() {
      records.clear()
      digests.clear()
    },
    get size() {
      return records.size
    },
  }
}
