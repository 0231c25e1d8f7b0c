/**
 * The emulator's access tokens: opaque random strings, as the real authorization server
 * issues them (not JWTs), each bound to a client, an optional user, scopes and an expiry.
 *
 * The group endpoints and the emulated authorization server share one store, so a token
 * from a real OAuth flow against the emulator works on the group endpoints and vice versa.
 *
 * @module
 */
import { createHash, randomBytes } from 'node:crypto'
import { InvalidArgumentError } from '../src/index.js'

/**
 * What the store knows about one token.
 *
 * @example
 * ```ts
 * const record = emulator.tokens.lookup(token)
 * if (record?.userId === 'alice') console.log(record.scopes.join(' '))
 * ```
 */
export interface TokenRecord {
  /** The user the token represents; absent on client-only (client credentials) tokens. */
  readonly userId?: string
  /** The client the token was issued to. */
  readonly clientId: string
  /** Granted scopes. */
  readonly scopes: readonly string[]
  /** Expiry, in milliseconds since the epoch (by the store's clock). */
  readonly expiresAt: number
}

/**
 * What {@link TokenStore.issue} needs.
 *
 * @example
 * ```ts
 * const request: TokenIssueRequest = { clientId: 'demo-service', scopes: ['groups'], expiresIn: 3600 }
 * ```
 */
export interface TokenIssueRequest {
  /** The user the token represents; leave out for a client-only token. */
  userId?: string
  /** The client the token is issued to. */
  clientId: string
  /** Granted scopes. */
  scopes: readonly string[]
  /** Lifetime in seconds (OAuth's `expires_in` unit). */
  expiresIn: number
}

/**
 * Sweep expired tokens once the store holds this many, so a long benchmark run that
 * issues a token per request does not grow the map without bound.
 */
const SWEEP_THRESHOLD = 10_000

/**
 * An in-memory store of opaque access tokens.
 *
 * Tokens are kept under their SHA-256 digest, never as raw strings, so the store holds
 * nothing that could be replayed if its contents ever end up in a heap dump or a log.
 *
 * @example
 * ```ts
 * const store = new TokenStore(() => fakeNow)
 * const token = store.issue({ userId: 'alice', clientId: 'demo-client', scopes: ['groups'], expiresIn: 3600 })
 * store.lookup(token)?.userId // 'alice'
 * store.revoke(token)
 * store.lookup(token)         // undefined
 * ```
 */
export class TokenStore {
  readonly #now: () => number
  readonly #records = new Map<string, TokenRecord>()
  // The size at which the next sweep runs. It doubles past what a sweep left, so that a
  // store full of live tokens is not swept on every issue (amortised O(1) per token).
  #nextSweep = SWEEP_THRESHOLD

  /**
   * @param now - Clock for expiry, in ms since the epoch. Default `Date.now`.
   */
  constructor(now: () => number = Date.now) {
    if (typeof now !== 'function') throw new InvalidArgumentError('TokenStore: now must be a function')
    this.#now = now
  }

  /**
   * Issues a new token: 32 random bytes, base64url-encoded.
   *
   * @throws {@link voot-guard!InvalidArgumentError} when a field of `record` is invalid.
   */
  issue(record: TokenIssueRequest): string {
    const { userId, clientId, scopes, expiresIn } = record
    if (userId !== undefined && (typeof userId !== 'string' || userId === '')) {
      throw new InvalidArgumentError('TokenStore.issue: userId must be a non-empty string when given')
    }
    if (typeof clientId !== 'string' || clientId === '') {
      throw new InvalidArgumentError('TokenStore.issue: clientId must be a non-empty string')
    }
    if (!Array.isArray(scopes) || !scopes.every((scope) => typeof scope === 'string')) {
      throw new InvalidArgumentError('TokenStore.issue: scopes must be an array of strings')
    }
    if (typeof expiresIn !== 'number' || !Number.isFinite(expiresIn) || expiresIn <= 0) {
      throw new InvalidArgumentError('TokenStore.issue: expiresIn must be a positive number of seconds')
    }
    if (this.#records.size >= this.#nextSweep) this.#sweep()

    const token = randomBytes(32).toString('base64url')
    const stored: TokenRecord = Object.freeze({
      ...(userId === undefined ? {} : { userId }),
      clientId,
      scopes: Object.freeze([...scopes]),
      expiresAt: this.#now() + expiresIn * 1000,
    })
    this.#records.set(digest(token), stored)
    return token
  }

  /** The token's record, or `undefined` when the token is unknown, revoked or expired. */
  lookup(token: string): TokenRecord | undefined {
    if (typeof token !== 'string' || token === '') return undefined
    const record = this.#records.get(digest(token))
    // Expired records stay until a sweep, so a test that moves a fake clock back finds
    // the token valid again.
    if (record === undefined || record.expiresAt <= this.#now()) return undefined
    return record
  }

  /** Revokes the token; later lookups return `undefined`. Unknown tokens are ignored. */
  revoke(token: string): void {
    if (typeof token !== 'string') return
    this.#records.delete(digest(token))
  }

  #sweep(): void {
    const now = this.#now()
    for (const [key, record] of this.#records) {
      if (record.expiresAt <= now) this.#records.delete(key)
    }
    this.#nextSweep = Math.max(SWEEP_THRESHOLD, 2 * this.#records.size)
  }
}

function digest(token: string): string {
  return createHash('sha256').update(token).digest('base64url')
}
