/**
 * The digest primitive of the cache keys on every runtime but Node (Workers, Vercel's Edge,
 * Deno, Bun, browsers). It must be synchronous, so Web Crypto's `subtle.digest` (a
 * promise) is not used: where the runtime has `node:crypto`'s one-shot `hash` (Deno, Bun,
 * Workers with `nodejs_compat`), found at run time through `process.getBuiltinModule`, that;
 * elsewhere the SHA-256 of `@noble/hashes`. Chosen by the package's `imports` (`#digest`);
 * it imports nothing of Node's.
 *
 * @module
 */
import { sha256 } from '@noble/hashes/sha2.js'

type Hash = (algorithm: 'sha256', data: string, outputEncoding: 'binary') => string

const builtin = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process?.getBuiltinModule?.('node:crypto') as
  { hash?: unknown } | undefined
const nativeHash = typeof builtin?.hash === 'function' ? (builtin.hash as Hash) : undefined
const utf8 = new TextEncoder()

/**
 * A salted SHA-256 under a fresh random salt: `digest(token)` is the 32 raw bytes of
 * SHA-256(salt + token), as a 32-character latin1 string.
 */
export function createSaltedDigest(): (token: string) => string {
  const salt = base64url(crypto.getRandomValues(new Uint8Array(16)))
  if (nativeHash !== undefined) return (token) => nativeHash('sha256', salt + token, 'binary')
  return (token) => String.fromCharCode(...sha256(utf8.encode(salt + token)))
}

function base64url(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '')
}
