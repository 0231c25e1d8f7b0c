// The in-process token digest (token-digest.ts): which hash a token gets, and that either
// way the digest is 16 bytes under the resolver's own secrets.
import { createHash, randomBytes } from 'node:crypto'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { createSipHash128 } from '../../../src/resolver/store/siphash.js'
import { createTokenDigest, SIPHASH_MAX_LENGTH, TOKEN_DIGEST_LENGTH } from '../../../src/resolver/store/token-digest.js'

const sha256 = (data: string): string => createHash('sha256').update(data).digest().toString('latin1')

describe('createTokenDigest', () => {
  const random = randomBytes(32)
  const digest = createTokenDigest(random, sha256)
  const sip = createSipHash128(random.subarray(0, 16))
  const salt = random.subarray(16).toString('latin1')

  it('gives a token of up to SIPHASH_MAX_LENGTH bytes its SipHash-2-4-128 under the first 16 bytes', () => {
    for (const token of ['a', '3f2a9c1e-8b4d-4e7a-9f01-2c3d4e5f6a7b', 'x'.repeat(SIPHASH_MAX_LENGTH)]) {
      expect(digest(token)).toBe(sip(token))
      expect(digest(token)).toHaveLength(TOKEN_DIGEST_LENGTH)
    }
  })

  it('gives a longer token, or one with a character above U+00FF, the first 16 bytes of SHA-256(salt + token)', () => {
    for (const token of ['x'.repeat(SIPHASH_MAX_LENGTH + 1), 'eyJhbGciOi'.repeat(80), 'tøken-€']) {
      expect(digest(token)).toBe(sha256(salt + token).slice(0, TOKEN_DIGEST_LENGTH))
      expect(digest(token)).toHaveLength(TOKEN_DIGEST_LENGTH)
    }
  })

  it('tells tokens apart, and gives another digest under other secrets', () => {
    const tokens = ['abc', 'abd', 'abc ', 'x'.repeat(SIPHASH_MAX_LENGTH), 'x'.repeat(SIPHASH_MAX_LENGTH + 1), 'tøken-€']
    expect(new Set(tokens.map((token) => digest(token))).size).toBe(tokens.length)
    const other = createTokenDigest(randomBytes(32), sha256)
    for (const token of tokens) expect(other(token)).not.toBe(digest(token))
  })

  it('refuses random bytes that are not 32', () => {
    expect(() => createTokenDigest(new Uint8Array(16), sha256)).toThrow(/32 random bytes/)
  })

  it('digests the token that starts at an offset, in place, as it digests that token sliced out (property)', () => {
    const b64 = fc.string({ unit: fc.constantFrom(...'ABCxyz019-._~+/='), minLength: 1, maxLength: 120 })
    const prefix = fc.constantFrom('', 'Bearer ', 'bearer ', 'x', '€uro ', 'Bearer '.repeat(3))
    fc.assert(
      fc.property(prefix, b64, (before, token) => {
        expect(digest(before + token, before.length)).toBe(digest(token))
      }),
      { numRuns: 500 },
    )
    // Either side of SIPHASH_MAX_LENGTH, and a token with a character above U+00FF.
    for (const token of ['x'.repeat(SIPHASH_MAX_LENGTH), 'x'.repeat(SIPHASH_MAX_LENGTH + 1), 'tøken-€'])
      expect(digest(`Bearer ${token}`, 7)).toBe(digest(token))
    expect(() => digest('Bearer', 7)).toThrow(RangeError)
  })
})
