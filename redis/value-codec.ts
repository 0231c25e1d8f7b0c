/**
 * The value format of the shared tier: compact, versioned, encrypted and authenticated.
 *
 * `base64( version 0x02 | expiry (6 bytes) | IV (12 bytes) | AES-256-GCM ciphertext of the JSON | tag (16 bytes) )`.
 *
 * The expiry is the absolute instant (ms since the epoch, big-endian) its writer gave the
 * value; it is in the clear but authenticated, with the entry's Redis key and the token's
 * generation, as additional data. So a value copied to another key (another token,
 * another group) fails authentication; a value written under a generation the token no
 * longer has (before an invalidation or a 401) fails authentication; and a value whose
 * Redis TTL was lengthened or removed is still refused once its own expiry has passed.
 * Anything that does not decode, authenticate and parse is `undefined`: a miss, never an
 * error.
 *
 * @module
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto'

/** Format version: the first byte of every value. A value of another version is a miss. */
const VERSION = 2
const EXPIRY_BYTES = 6
const HEADER_BYTES = 1 + EXPIRY_BYTES
const IV_BYTES = 12
const TAG_BYTES = 16
/** Longest generation accepted from Redis (the tier writes 22 characters). */
const MAX_GENERATION_CHARS = 64

/** A value read back: the answer and the expiry its writer authenticated with it. */
export interface DecodedValue {
  readonly value: unknown
  /** Ms since the epoch, by the writer's clock. */
  readonly expiresAt: number
}

/**
 * Encodes and decodes values under one key.
 */
export interface ValueCodec {
  /**
   * The stored form of `value`, bound to `redisKey` and `generation` and refused after
   * `expiresAt`; `undefined` when its JSON is larger than the limit (not written).
   */
  encode(redisKey: string, generation: string, value: unknown, expiresAt: number): string | undefined
  /** The value, or `undefined` when `stored` fails to decode, authenticate (key, generation, expiry) or parse. */
  decode(redisKey: string, generation: string, stored: string): DecodedValue | undefined
}

/** The additional authenticated data: header, then the key and the generation, each with its length. */
function additionalData(header: Buffer, redisKey: string, generation: string): Buffer {
  const key = Buffer.from(redisKey, 'utf8')
  const lengths = Buffer.alloc(8)
  lengths.writeUInt32BE(key.length, 0)
  lengths.writeUInt32BE(Buffer.byteLength(generation, 'utf8'), 4)
  return Buffer.concat([header, lengths, key, Buffer.from(generation, 'utf8')])
}

/**
 * Makes the {@link ValueCodec} of a 32-byte key.
 */
export function createValueCodec(key: Buffer, maxValueBytes: number): ValueCodec {
  // base64 of the largest allowed plaintext plus the framing: longer stored values are not opened.
  const maxStoredChars = Math.ceil((HEADER_BYTES + IV_BYTES + maxValueBytes + TAG_BYTES) / 3) * 4
  return {
    encode(redisKey, generation, value, expiresAt) {
      const plain = Buffer.from(JSON.stringify(value) ?? 'null', 'utf8')
      if (plain.length > maxValueBytes || !Number.isSafeInteger(expiresAt) || expiresAt < 0 || expiresAt >= 2 ** 48) return undefined
      const header = Buffer.alloc(HEADER_BYTES)
      header[0] = VERSION
      header.writeUIntBE(expiresAt, 1, EXPIRY_BYTES)
      const iv = randomBytes(IV_BYTES)
      const cipher = createCipheriv('aes-256-gcm', key, iv)
      cipher.setAAD(additionalData(header, redisKey, generation))
      const body = cipher.update(plain)
      const final = cipher.final()
      return Buffer.concat([header, iv, body, final, cipher.getAuthTag()]).toString('base64')
    },
    decode(redisKey, generation, stored) {
      if (typeof stored !== 'string' || stored.length > maxStoredChars) return undefined
      if (typeof generation !== 'string' || generation.length > MAX_GENERATION_CHARS) return undefined
      const bytes = Buffer.from(stored, 'base64')
      if (bytes.length < HEADER_BYTES + IV_BYTES + TAG_BYTES || bytes[0] !== VERSION) return undefined
      const header = bytes.subarray(0, HEADER_BYTES)
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(HEADER_BYTES, HEADER_BYTES + IV_BYTES), {
          authTagLength: TAG_BYTES,
        })
        decipher.setAAD(additionalData(header, redisKey, generation))
        decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES))
        const plain = Buffer.concat([decipher.update(bytes.subarray(HEADER_BYTES + IV_BYTES, bytes.length - TAG_BYTES)), decipher.final()])
        return { value: JSON.parse(plain.toString('utf8')) as unknown, expiresAt: header.readUIntBE(1, EXPIRY_BYTES) }
      } catch {
        // Tampered, written under another secret, key or generation, or not JSON: a miss.
        return undefined
      }
    },
  }
}
