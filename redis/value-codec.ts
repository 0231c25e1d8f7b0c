/**
 * The value format of the shared tier: compact, versioned, encrypted and authenticated.
 *
 * `base64( version 0x01 | IV (12 bytes) | AES-256-GCM ciphertext of the JSON | tag (16 bytes) )`,
 * with the entry's Redis key as additional authenticated data, so a value copied to another
 * key (another token, another group) fails authentication. Anything that does not decode,
 * authenticate and parse is `undefined`: a miss, never an error.
 *
 * @module
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto'

/** Format version: the first byte of every value. A value of another version is a miss. */
const VERSION = 1
const IV_BYTES = 12
const TAG_BYTES = 16

/**
 * Encodes and decodes values under one key.
 */
export interface ValueCodec {
  /** The stored form of `value`, or `undefined` when its JSON is larger than the limit (not written). */
  encode(redisKey: string, value: unknown): string | undefined
  /** The value, or `undefined` when `stored` fails to decode, authenticate or parse. */
  decode(redisKey: string, stored: string): { value: unknown } | undefined
}

/**
 * Makes the {@link ValueCodec} of a 32-byte key.
 */
export function createValueCodec(key: Buffer, maxValueBytes: number): ValueCodec {
  // base64 of the largest allowed plaintext plus the framing: longer stored values are not opened.
  const maxStoredChars = Math.ceil((1 + IV_BYTES + maxValueBytes + TAG_BYTES) / 3) * 4
  return {
    encode(redisKey, value) {
      const plain = Buffer.from(JSON.stringify(value) ?? 'null', 'utf8')
      if (plain.length > maxValueBytes) return undefined
      const iv = randomBytes(IV_BYTES)
      const cipher = createCipheriv('aes-256-gcm', key, iv)
      cipher.setAAD(Buffer.from(redisKey, 'utf8'))
      const body = cipher.update(plain)
      const final = cipher.final()
      return Buffer.concat([Buffer.of(VERSION), iv, body, final, cipher.getAuthTag()]).toString('base64')
    },
    decode(redisKey, stored) {
      if (typeof stored !== 'string' || stored.length > maxStoredChars) return undefined
      const bytes = Buffer.from(stored, 'base64')
      if (bytes.length < 1 + IV_BYTES + TAG_BYTES || bytes[0] !== VERSION) return undefined
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(1, 1 + IV_BYTES), { authTagLength: TAG_BYTES })
        decipher.setAAD(Buffer.from(redisKey, 'utf8'))
        decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES))
        const plain = Buffer.concat([decipher.update(bytes.subarray(1 + IV_BYTES, bytes.length - TAG_BYTES)), decipher.final()])
        return { value: JSON.parse(plain.toString('utf8')) as unknown }
      } catch {
        // Tampered, written under another secret or key, or not JSON: a miss.
        return undefined
      }
    },
  }
}
