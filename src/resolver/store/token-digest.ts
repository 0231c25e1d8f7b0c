/**
 * The in-process digest of a token, the part of every cache key that stands for it: a
 * keyed SipHash-2-4-128 for a short token, a salted SHA-256 for a long one, both 16 raw
 * bytes (a 16-character latin1 string) under secrets drawn afresh for each resolver.
 *
 * Why two: per request this is the most expensive step of a warm decision. For the short
 * opaque tokens most group services issue (a UUID, 32 to 64 characters), SipHash in
 * JavaScript is no dearer than one native SHA-256 call, and cheaper inside a server, where
 * the native call's code and OpenSSL's state leave the CPU caches between two requests;
 * off Node it replaces a SHA-256 that costs several times more. For a long token (a JWT of
 * a kilobyte) SipHash in JavaScript is the slower one, so SHA-256 stays. The argument that
 * either is a sound cache key is in SECURITY.md; the measurements are in BENCHMARKS.md.
 *
 * @module
 */
import { createDigestPool } from './digest-pool.js'
import { createSipHash128Words } from './siphash.js'

/** Longest token digested with SipHash; longer ones (and any with a character above U+00FF) with SHA-256. */
export const SIPHASH_MAX_LENGTH = 64

/** The digest's length in characters (bytes). */
export const TOKEN_DIGEST_LENGTH = 16

/**
 * A token's digest. `from` digests the token that starts there in a longer string and runs
 * to its end (the token of an `Authorization` header, read in place after `Bearer `): the
 * same digest as of `source.slice(from)`, without the slice.
 */
export type TokenDigest = (source: string, from?: number) => string

/**
 * Composes the digest from a runtime's SHA-256 (`sha256(data)`: the 32 raw bytes as a
 * latin1 string) and 32 random bytes: the first 16 the SipHash key, the last 16 the
 * SHA-256 salt. A SipHash digest is handed out from a pool of recent ones of at most
 * `poolSize` (`digest-pool.ts`): the same string object for the same token while it is kept.
 */
export function createTokenDigest(random: Uint8Array, sha256: (data: string) => string, poolSize?: number): TokenDigest {
  if (random.length !== 32) throw new RangeError('createTokenDigest needs 32 random bytes')
  const tag = new Int32Array(4)
  const sip = createSipHash128Words(random.subarray(0, 16), tag)
  const pooled = createDigestPool(poolSize)
  const salt = String.fromCharCode(...random.subarray(16))
  return (source, from = 0) => {
    const to = source.length
    if (!(from >= 0 && from <= to)) throw new RangeError('A token digest starts within its string')
    if (to - from <= SIPHASH_MAX_LENGTH && sip(source, from, to)) return pooled(tag)
    return sha256(salt + (from === 0 ? source : source.slice(from))).slice(0, TOKEN_DIGEST_LENGTH)
  }
}
