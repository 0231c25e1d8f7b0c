/**
 * The token digest of the cache keys (see `token-digest.ts`) on every runtime but Node
 * (Workers, Vercel's Edge, Deno, Bun, browsers). Its SHA-256, for long tokens, must be
 * synchronous, so Web Crypto's `subtle.digest` (a promise) is not used: where the runtime
 * has `node:crypto`'s one-shot `hash` (Deno, Bun, Workers with `nodejs_compat`), found at
 * run time through `process.getBuiltinModule`, that; elsewhere the SHA-256 of
 * `@noble/hashes`. Chosen by the package's `imports` (`#digest`); it imports nothing of
 * Node's.
 *
 * @module
 */
import { sha256 } from '@noble/hashes/sha2.js'
import { createTokenDigest, type TokenDigest } from './token-digest.js'

type Hash = (algorithm: 'sha256', data: string, outputEncoding: 'binary') => string

const builtin = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process?.getBuiltinModule?.('node:crypto') as
  { hash?: unknown } | undefined
const nativeHash = typeof builtin?.hash === 'function' ? (builtin.hash as Hash) : undefined
const utf8 = new TextEncoder()

/**
 * A token digest under fresh random secrets: 16 raw bytes as a 16-character latin1 string
 * (SipHash digests from a pool of at most `poolSize`).
 */
export function createRuntimeTokenDigest(poolSize?: number): TokenDigest {
  const random = crypto.getRandomValues(new Uint8Array(32))
  if (nativeHash !== undefined) return createTokenDigest(random, (data) => nativeHash('sha256', data, 'binary'), poolSize)
  return createTokenDigest(random, (data) => String.fromCharCode(...sha256(utf8.encode(data))), poolSize)
}
