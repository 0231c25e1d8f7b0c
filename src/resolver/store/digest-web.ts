/**
 * The digest primitive of the cache keys on every runtime but Node (Workers, Vercel's Edge,
 * Deno, Bun, browsers): a synchronous SHA-256 from `@noble/hashes`, because Web Crypto's
 * `subtle.digest` answers with a promise and the warm path must stay synchronous.
 * Chosen by the package's `imports` (`#digest`); it imports nothing of Node's.
 *
 * @module
 */
import { sha256 } from '@noble/hashes/sha2.js'

const utf8 = new TextEncoder()

/**
 * The SHA-256 of `text` (as UTF-8): its 32 raw bytes as a 32-character latin1 string.
 *
 * @example
 * ```ts
 * sha256Latin1(salt + token).length // 32
 * ```
 */
export function sha256Latin1(text: string): string {
  return String.fromCharCode(...sha256(utf8.encode(text)))
}

/**
 * A fresh random salt: 16 random bytes from Web Crypto, base64url.
 *
 * @example
 * ```ts
 * const salt = randomSalt()
 * ```
 */
export function randomSalt(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16))
  return btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '')
}
