// The shared tier's token id (redis/token-id.ts): HMAC-SHA256 built from two one-shot
// hashes must be byte for byte what `createHmac` gives, for every kind of string.
import { createHmac, randomBytes } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { createTokenId } from '../../redis/token-id.js'

const reference = (key: Buffer, token: string): string => createHmac('sha256', key).update(token, 'utf8').digest().toString('latin1')

describe('createTokenId', () => {
  const key = randomBytes(32)
  const tokenId = createTokenId(key)

  it('is HMAC-SHA256 of the UTF-8 of the token, as 32 latin1 characters', () => {
    const tokens = [
      '',
      'a',
      'zpKSJfgHisArzpKSJfgHisArzpKSJfgHisArzpKSJfg',
      'eyJhbGciOiJSUzI1NiJ9.'.repeat(60),
      'tøken-€-😀',
      'lone \ud800 surrogate',
      'x'.repeat(4096),
      '€'.repeat(4096), // the longest that fits the buffer, at 3 bytes a character
      'x'.repeat(4097), // past it: through createHmac
    ]
    for (const token of tokens) {
      expect(tokenId(token), token.slice(0, 20)).toBe(reference(key, token))
      expect(tokenId(token)).toHaveLength(32)
    }
  })

  it('leaves nothing of a longer token behind for a shorter one', () => {
    expect(tokenId('a'.repeat(300))).toBe(reference(key, 'a'.repeat(300)))
    expect(tokenId('b')).toBe(reference(key, 'b'))
  })

  it('takes keys up to the 64-byte block, and refuses longer ones', () => {
    for (const length of [1, 32, 64]) {
      const other = randomBytes(length)
      expect(createTokenId(other)('token')).toBe(reference(other, 'token'))
    }
    expect(() => createTokenId(randomBytes(65))).toThrow(/at most 64 bytes/)
  })
})
