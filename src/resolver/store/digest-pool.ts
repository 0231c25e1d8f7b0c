/**
 * The digest strings of recent tokens, found again by their SipHash tag's words: a warm
 * request's digest without building a string per request.
 *
 * Why: a warm decision looks the token's answers up by its digest, a 16-character latin1
 * string. Built afresh on every request, that string is an allocation, and the map lookup
 * must then hash its 16 characters and compare them with the stored key's; inside a server
 * that was a good part of what the digest step cost (BENCHMARKS.md, issue 41). Here the
 * tag's first word picks a slot (a small-integer map key: no string hashed), the four
 * words are compared in full, and the same string object is handed out again, whose hash
 * V8 keeps: the cache's lookup then finds its key by identity.
 *
 * What it holds is what the cache keys are made of: keyed digests, never a token, and no
 * map is keyed by a token. It is a memo only: a slot that holds another tag (two tags
 * that share 30 bits) or none is (re)filled, and every digest it gives is compared in all
 * 128 bits first, so what the cache finds never depends on it. At most `size` digests, the
 * oldest going first.
 *
 * @module
 */
import { tagString } from './siphash.js'

/** Most digests kept by default (about 100 bytes each). */
export const DIGEST_POOL_SIZE = 4096

/** The bits of a tag's first word that pick its slot: a small integer on every V8 (31-bit Smis). */
const SLOT_BITS = 0x3fffffff

/** One kept digest, with the tag it was made of. */
class PooledDigest {
  readonly w0: number
  readonly w1: number
  readonly w2: number
  readonly w3: number

  constructor(
    readonly digest: string,
    tag: Int32Array,
  ) {
    this.w0 = tag[0] as number
    this.w1 = tag[1] as number
    this.w2 = tag[2] as number
    this.w3 = tag[3] as number
  }
}

/**
 * Creates a pool of at most `size` digests: given a tag (four words), the 16-character
 * string {@link tagString} makes of it, the same object for the same tag while it is kept.
 */
export function createDigestPool(size: number = DIGEST_POOL_SIZE): (tag: Int32Array) => string {
  if (!(Number.isInteger(size) && size >= 1)) throw new RangeError('A digest pool holds at least one digest')
  const kept = new Map<number, PooledDigest>()
  return (tag) => {
    const w0 = tag[0] as number
    const w1 = tag[1] as number
    const w2 = tag[2] as number
    const w3 = tag[3] as number
    const slot = w0 & SLOT_BITS
    const known = kept.get(slot)
    if (known !== undefined && known.w0 === w0 && known.w1 === w1 && known.w2 === w2 && known.w3 === w3) return known.digest
    const digest = tagString(tag)
    // A new slot in a full pool: the oldest goes (a map iterates in insertion order).
    if (known === undefined && kept.size >= size) kept.delete(kept.keys().next().value as number)
    kept.set(slot, new PooledDigest(digest, tag))
    return digest
  }
}
