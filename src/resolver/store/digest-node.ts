/**
 * The digest primitive of the cache keys on Node: `node:crypto`'s one-shot `hash`, the
 * fastest SHA-256 there. Chosen by the `node` condition of the package's `imports`
 * (`#digest`); `digest-web.ts` is the same function for every other runtime.
 *
 * @module
 */
import { hash, randomBytes } from 'node:crypto'

/**
 * A salted SHA-256 under a fresh random salt: `digest(token)` is the 32 raw bytes of
 * SHA-256(salt + token), as a 32-character latin1 string.
 */
export function createSaltedDigest(): (token: string) => string {
  const salt = randomBytes(16).toString('base64url')
  // The closure calls `hash` itself: the warm path pays no call in between.
  return (token) => hash('sha256', salt + token, 'binary') // 'binary' is Node's name for latin1
}
