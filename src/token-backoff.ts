/**
 * Per-token back-off after a 429: when the group service answered "Too Many Requests"
 * with a `Retry-After`, further calls for that token fail fast until it has passed,
 * instead of hammering the service (and being limited longer).
 *
 * Tokens are known here only by their salted digest (as in the cache), and the table is
 * a bounded LRU, so neither a heap dump nor a flood of tokens can get anything out of it.
 *
 * @module
 */
import { LRUCache } from 'lru-cache'
import { UpstreamError } from './errors.js'

/**
 * The back-off table of one resolver. Created by {@link createTokenBackoff}.
 *
 * @example
 * ```ts
 * backoff.block(digest, 30)            // a 429 said Retry-After: 30
 * backoff.refusal(digest, 'me/groups') // an UpstreamError to fail fast with, or undefined
 * ```
 */
export interface TokenBackoff {
  /** Records a `Retry-After` of `seconds` for a token digest (0 or less records nothing). */
  block(digest: string, seconds: number): void
  /** The error to fail fast with while the digest is backing off, else `undefined`. */
  refusal(digest: string, endpoint: string): UpstreamError | undefined
}

/**
 * Creates a {@link TokenBackoff} holding at most `max` digests (the least recently
 * blocked go first).
 *
 * @example
 * ```ts
 * const backoff = createTokenBackoff({ max: 10_000, now: Date.now })
 * ```
 */
export function createTokenBackoff(options: { max: number; now: () => number }): TokenBackoff {
  const { now } = options
  const until = new LRUCache<string, number>({ max: options.max })
  return {
    block(digest, seconds) {
      if (!(seconds > 0)) return
      const end = now() + seconds * 1000
      // Never shorten a wait the service asked for earlier.
      const previous = until.get(digest)
      until.set(digest, previous === undefined ? end : Math.max(previous, end))
    },
    refusal(digest, endpoint) {
      if (until.size === 0) return undefined
      const end = until.get(digest)
      if (end === undefined) return undefined
      const left = end - now()
      if (left <= 0) {
        until.delete(digest)
        return undefined
      }
      const retryAfter = Math.ceil(left / 1000)
      return new UpstreamError('ERR_UPSTREAM_RATE_LIMITED', `The group service rate-limited ${endpoint}; waiting before asking again`, {
        endpoint,
        retryAfter,
        headers: { 'retry-after': String(retryAfter) },
      })
    },
  }
}
