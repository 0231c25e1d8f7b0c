/**
 * The token digest of the cache keys on Node (see `token-digest.ts`), with `node:crypto`'s
 * one-shot `hash` as its SHA-256. Chosen by the `node` condition of the package's
 * `imports` (`#digest`); `digest-web.ts` is the same function for every other runtime.
 *
 * @module
 */
import { hash, randomBytes } from 'node:crypto'
import { createTokenDigest, type TokenDigest } from './token-digest.js'

/**
 * A token digest under fresh random secrets: 16 raw bytes as a 16-character latin1 string
 * (SipHash digests from a pool of at most `poolSize`).
 */
export function createRuntimeTokenDigest(poolSize?: number): TokenDigest {
  return createTokenDigest(randomBytes(32), (data) => hash('sha256', data, 'binary'), poolSize) // 'binary' is Node's name for latin1
}
