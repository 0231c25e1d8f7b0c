/**
 * The digest primitive of the cache keys on Node: `node:crypto`'s one-shot `hash`, the
 * fastest SHA-256 there. Chosen by the `node` condition of the package's `imports`
 * (`#digest`); `digest-web.ts` is the same function for every other runtime.
 *
 * @module
 */
import { hash, randomBytes } from 'node:crypto'

/**
 * The SHA-256 of `text` (as UTF-8): its 32 raw bytes as a 32-character latin1 string.
 *
 * @example
 * ```ts
 * sha256Latin1(salt + token).length // 32
 * ```
 */
export function sha256Latin1(text: string): string {
  return hash('sha256', text, 'binary') // 'binary' is Node's name for latin1
}

/**
 * A fresh random salt: 16 random bytes, base64url.
 *
 * @example
 * ```ts
 * const salt = randomSalt()
 * ```
 */
export function randomSalt(): string {
  return randomBytes(16).toString('base64url')
}
