/**
 * A fixed-window request counter per client address, as the real service's rate limit
 * (which answers 429 with an empty body).
 *
 * @module
 */
import { InvalidOptionError } from '../../src/index.js'

/**
 * Options of {@link createRateLimiter}.
 */
export interface RateLimiterOptions {
  /** Requests allowed per window and address. */
  limit: number
  /** Window length in ms. */
  windowMs: number
  /** Clock, in ms since the epoch. Default `Date.now`. */
  now?: () => number
}

/**
 * The verdict on one request.
 */
export type RateLimitVerdict = { readonly allowed: true } | { readonly allowed: false; readonly retryAfterSeconds: number }

/**
 * A rate limiter.
 */
export interface RateLimiter {
  /** Counts one request from `address` and says whether it is allowed. */
  take(address: string): RateLimitVerdict
}

const SWEEP_THRESHOLD = 10_000

/**
 * Creates a fixed-window limiter.
 *
 * @throws {@link voot-guard!InvalidOptionError} for a `limit` that is not a positive integer or a
 *   `windowMs` that is not a positive number.
 */
export function createRateLimiter(options: RateLimiterOptions): RateLimiter {
  const { limit, windowMs, now = Date.now } = options
  if (!Number.isInteger(limit) || limit < 1) throw new InvalidOptionError('rateLimit.limit', 'must be a positive integer')
  if (typeof windowMs !== 'number' || !Number.isFinite(windowMs) || windowMs <= 0) {
    throw new InvalidOptionError('rateLimit.windowMs', 'must be a positive number of milliseconds')
  }
  const windows = new Map<string, { start: number; count: number }>()
  return {
    take(address) {
      const time = now()
      if (windows.size >= SWEEP_THRESHOLD) {
        for (const [key, window] of windows) if (time - window.start >= windowMs) windows.delete(key)
      }
      let window = windows.get(address)
      if (window === undefined || time - window.start >= windowMs) {
        window = { start: time, count: 0 }
        windows.set(address, window)
      }
      window.count += 1
      if (window.count <= limit) return { allowed: true }
      return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((window.start + windowMs - time) / 1000)) }
    },
  }
}
