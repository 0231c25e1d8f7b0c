/**
 * The token id of the shared tier, HMAC-SHA256(tokenKey, token), computed on every request
 * that has a shared tier (the in-process cache is keyed by it too, so that an invalidation
 * from another instance finds the entries it names).
 *
 * It is HMAC by its definition (RFC 2104), H((K ⊕ opad) ‖ H((K ⊕ ipad) ‖ m)), over two
 * calls of `node:crypto`'s one-shot `hash` into buffers made once: a third of the cost of
 * `createHmac(...).update(...).digest()`, which builds a `Hmac` stream object, a native
 * context and a result buffer per call (BENCHMARKS.md). Checked byte for byte against
 * `createHmac` (`test/redis/token-id.test.ts`).
 *
 * @module
 */
import { createHmac, hash } from 'node:crypto'

// The HMAC block of SHA-256, in bytes; a key longer than this would be hashed first, and
// the tier's keys (HKDF outputs of 32 bytes) never are.
const BLOCK = 64
// Tokens up to this many UTF-16 code units fit the buffer (UTF-8 takes at most 3 bytes
// per code unit); a longer one, which only a direct resolver call could bring, goes
// through `createHmac`.
const LONGEST_IN_BUFFER = 4096

/**
 * Makes `tokenId(token)`: the 32 bytes of HMAC-SHA256(key, UTF-8 of token) as a latin1
 * string.
 */
export function createTokenId(key: Buffer): (token: string) => string {
  if (key.length > BLOCK) throw new RangeError('The token key must be at most 64 bytes')
  // (K ⊕ ipad) followed by room for the message; (K ⊕ opad) followed by the inner hash.
  const inner = Buffer.alloc(BLOCK + 3 * LONGEST_IN_BUFFER)
  const outer = Buffer.alloc(BLOCK + 32)
  for (let i = 0; i < BLOCK; i++) {
    inner[i] = (key[i] ?? 0) ^ 0x36
    outer[i] = (key[i] ?? 0) ^ 0x5c
  }
  return (token) => {
    if (token.length > LONGEST_IN_BUFFER) return createHmac('sha256', key).update(token, 'utf8').digest().toString('latin1')
    const length = inner.write(token, BLOCK, 'utf8')
    outer.write(hash('sha256', inner.subarray(0, BLOCK + length), 'binary'), BLOCK, 'latin1')
    return hash('sha256', outer, 'binary')
  }
}
