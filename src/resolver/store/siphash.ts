/**
 * SipHash-2-4 with a 128-bit output (Aumasson and Bernstein; the reference implementation's
 * `siphash(in, inlen, k, out, 16)`), the keyed hash of the in-process cache keys of short
 * tokens. It is a pseudo-random function under a secret 128-bit key: without the key
 * nobody can compute, predict or aim at its outputs, which is all a cache key needs (the
 * argument is in SECURITY.md, with the measurements that chose it).
 *
 * Written here, in 32-bit halves, because JavaScript has no 64-bit integers short of
 * `BigInt` (which allocates), and the packaged implementations allocate objects in every
 * 64-bit operation and cost several times `node:crypto`'s SHA-256, while this one, for a
 * short token, is no dearer than that native call (the figures are in BENCHMARKS.md).
 * Checked against the reference implementation's 64 test vectors
 * (`test/resolver/store/siphash.test.ts`).
 *
 * @module
 */

const MAX_CHAR = 0xff

/**
 * Creates SipHash-2-4-128 under `key` (16 bytes) over the characters of a string read as
 * bytes. The hash is the 16 bytes of the tag as a 16-character latin1 string; `undefined`
 * when the string has a character above U+00FF, which is not a byte (the caller hashes such
 * a string another way). `from` and `to` hash the characters between them only, as if
 * they were sliced out first.
 */
export function createSipHash128(key: Uint8Array): (input: string, from?: number, to?: number) => string | undefined {
  const tag = new Int32Array(4)
  const words = createSipHash128Words(key, tag)
  return (input, from = 0, to = input.length) => (words(input, from, to) ? tagString(tag) : undefined)
}

/** The 16 bytes of a tag kept as four little-endian 32-bit words, as a 16-character latin1 string. */
export function tagString(tag: Int32Array): string {
  const a = tag[0] as number
  const b = tag[1] as number
  const c = tag[2] as number
  const d = tag[3] as number
  // prettier-ignore
  return String.fromCharCode(
    a & 0xff, (a >>> 8) & 0xff, (a >>> 16) & 0xff, a >>> 24,
    b & 0xff, (b >>> 8) & 0xff, (b >>> 16) & 0xff, b >>> 24,
    c & 0xff, (c >>> 8) & 0xff, (c >>> 16) & 0xff, c >>> 24,
    d & 0xff, (d >>> 8) & 0xff, (d >>> 16) & 0xff, d >>> 24,
  )
}

/**
 * SipHash-2-4-128 under `key` (16 bytes) over the characters of `input` from `from` up to
 * `to`, read as bytes, with the tag written into `tag` as four little-endian 32-bit words
 * (bytes 0-3, 4-7, 8-11, 12-15); `false`, and `tag` unchanged, when one of those characters
 * is above U+00FF.
 *
 * Why the words and the offsets: a warm request's digest is read straight from its
 * `Authorization` header, after `Bearer `, without a sliced string whose every character
 * read goes through its parent, and its tag is looked up as numbers without building a
 * string per request (`digest-pool.ts`; BENCHMARKS.md, issue 41).
 */
export function createSipHash128Words(key: Uint8Array, tag: Int32Array): (input: string, from: number, to: number) => boolean {
  if (key.length !== 16) throw new RangeError('SipHash needs a 16-byte key')
  if (tag.length !== 4) throw new RangeError('SipHash needs a tag of 4 words')
  const k = new DataView(key.buffer, key.byteOffset, 16)
  const k0l = k.getInt32(0, true)
  const k0h = k.getInt32(4, true)
  const k1l = k.getInt32(8, true)
  const k1h = k.getInt32(12, true)

  // One function, the state in locals (the 64-bit words as low and high 32-bit halves).
  // The SipRound is written twice, as the body of the message's rounds and of the
  // finalisation's: straight loops, which V8 compiles better than one loop with phases
  // (about 20 % faster; BENCHMARKS.md, issue 41). The carry of a 64-bit addition is one
  // unsigned comparison (`low < a` as unsigned), cheaper than deriving it from the bits.
  return (input, from, to) => {
    // Outside the string `charCodeAt` gives NaN, which the bit operations would read as 0.
    if (!(from >= 0 && from <= to && to <= input.length)) throw new RangeError('SipHash: from and to must lie within the input')
    let v0l = k0l ^ 0x70736575
    let v0h = k0h ^ 0x736f6d65
    let v1l = k1l ^ 0x6e646f6d ^ 0xee // 0xee: the 128-bit output's domain
    let v1h = k1h ^ 0x646f7261
    let v2l = k0l ^ 0x6e657261
    let v2h = k0h ^ 0x6c796765
    let v3l = k1l ^ 0x79746573
    let v3h = k1h ^ 0x74656462
    const length = to - from
    const whole = from + length - (length & 7)
    let at = from
    let seen = 0
    let ml = 0
    let mh = 0
    let low: number
    let t: number
    // The message words: the whole 8-byte words, then the last one (the remaining bytes and
    // the length in the top byte), each as v3 ^= m, two SipRounds, v0 ^= m.
    for (let last = false; !last;) {
      if (at < whole) {
        const c0 = input.charCodeAt(at)
        const c1 = input.charCodeAt(at + 1)
        const c2 = input.charCodeAt(at + 2)
        const c3 = input.charCodeAt(at + 3)
        const c4 = input.charCodeAt(at + 4)
        const c5 = input.charCodeAt(at + 5)
        const c6 = input.charCodeAt(at + 6)
        const c7 = input.charCodeAt(at + 7)
        seen |= c0 | c1 | c2 | c3 | c4 | c5 | c6 | c7
        ml = c0 | (c1 << 8) | (c2 << 16) | (c3 << 24)
        mh = c4 | (c5 << 8) | (c6 << 16) | (c7 << 24)
        at += 8
      } else {
        ml = 0
        mh = (length & 0xff) << 24
        for (; at < to; at++) {
          const code = input.charCodeAt(at)
          seen |= code
          const shift = (at - whole) * 8
          if (shift < 32) ml |= code << shift
          else mh |= code << (shift - 32)
        }
        if (seen > MAX_CHAR) return false
        last = true
      }
      v3l ^= ml
      v3h ^= mh
      for (let round = 0; round < 2; round++) {
        // v0 += v1; v1 = rotl(v1, 13); v1 ^= v0; v0 = rotl(v0, 32)
        low = (v0l + v1l) | 0
        v0h = (v0h + v1h + (low >>> 0 < v0l >>> 0 ? 1 : 0)) | 0
        v0l = low
        t = v1l
        v1l = (v1l << 13) | (v1h >>> 19)
        v1h = (v1h << 13) | (t >>> 19)
        v1l ^= v0l
        v1h ^= v0h
        t = v0l
        v0l = v0h
        v0h = t
        // v2 += v3; v3 = rotl(v3, 16); v3 ^= v2
        low = (v2l + v3l) | 0
        v2h = (v2h + v3h + (low >>> 0 < v2l >>> 0 ? 1 : 0)) | 0
        v2l = low
        t = v3l
        v3l = (v3l << 16) | (v3h >>> 16)
        v3h = (v3h << 16) | (t >>> 16)
        v3l ^= v2l
        v3h ^= v2h
        // v0 += v3; v3 = rotl(v3, 21); v3 ^= v0
        low = (v0l + v3l) | 0
        v0h = (v0h + v3h + (low >>> 0 < v0l >>> 0 ? 1 : 0)) | 0
        v0l = low
        t = v3l
        v3l = (v3l << 21) | (v3h >>> 11)
        v3h = (v3h << 21) | (t >>> 11)
        v3l ^= v0l
        v3h ^= v0h
        // v2 += v1; v1 = rotl(v1, 17); v1 ^= v2; v2 = rotl(v2, 32)
        low = (v2l + v1l) | 0
        v2h = (v2h + v1h + (low >>> 0 < v2l >>> 0 ? 1 : 0)) | 0
        v2l = low
        t = v1l
        v1l = (v1l << 17) | (v1h >>> 15)
        v1h = (v1h << 17) | (t >>> 15)
        v1l ^= v2l
        v1h ^= v2h
        t = v2l
        v2l = v2h
        v2h = t
      }
      v0l ^= ml
      v0h ^= mh
    }
    // The finalisation: v2 ^= 0xee, four SipRounds, the first half of the tag; v1 ^= 0xdd,
    // four more, the second half.
    v2l ^= 0xee
    let first0 = 0
    let first1 = 0
    for (let round = 0; round < 8; round++) {
      if (round === 4) {
        first0 = v0l ^ v1l ^ v2l ^ v3l
        first1 = v0h ^ v1h ^ v2h ^ v3h
        v1l ^= 0xdd
      }
      // v0 += v1; v1 = rotl(v1, 13); v1 ^= v0; v0 = rotl(v0, 32)
      low = (v0l + v1l) | 0
      v0h = (v0h + v1h + (low >>> 0 < v0l >>> 0 ? 1 : 0)) | 0
      v0l = low
      t = v1l
      v1l = (v1l << 13) | (v1h >>> 19)
      v1h = (v1h << 13) | (t >>> 19)
      v1l ^= v0l
      v1h ^= v0h
      t = v0l
      v0l = v0h
      v0h = t
      // v2 += v3; v3 = rotl(v3, 16); v3 ^= v2
      low = (v2l + v3l) | 0
      v2h = (v2h + v3h + (low >>> 0 < v2l >>> 0 ? 1 : 0)) | 0
      v2l = low
      t = v3l
      v3l = (v3l << 16) | (v3h >>> 16)
      v3h = (v3h << 16) | (t >>> 16)
      v3l ^= v2l
      v3h ^= v2h
      // v0 += v3; v3 = rotl(v3, 21); v3 ^= v0
      low = (v0l + v3l) | 0
      v0h = (v0h + v3h + (low >>> 0 < v0l >>> 0 ? 1 : 0)) | 0
      v0l = low
      t = v3l
      v3l = (v3l << 21) | (v3h >>> 11)
      v3h = (v3h << 21) | (t >>> 11)
      v3l ^= v0l
      v3h ^= v0h
      // v2 += v1; v1 = rotl(v1, 17); v1 ^= v2; v2 = rotl(v2, 32)
      low = (v2l + v1l) | 0
      v2h = (v2h + v1h + (low >>> 0 < v2l >>> 0 ? 1 : 0)) | 0
      v2l = low
      t = v1l
      v1l = (v1l << 17) | (v1h >>> 15)
      v1h = (v1h << 17) | (t >>> 15)
      v1l ^= v2l
      v1h ^= v2h
      t = v2l
      v2l = v2h
      v2h = t
    }
    tag[0] = first0
    tag[1] = first1
    tag[2] = v0l ^ v1l ^ v2l ^ v3l
    tag[3] = v0h ^ v1h ^ v2h ^ v3h
    return true
  }
}
