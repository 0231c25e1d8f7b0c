/**
 * The state one emulated authorization server shares between its endpoints: the data set,
 * the token store, its clock and keys, pending authorization requests and issued codes.
 *
 * @module
 */
import { createHash } from 'node:crypto'
import type { EmulatorClient, EmulatorData } from '../data/data.js'
import type { SigningKeys } from './oauth-keys.js'
import type { TokenStore } from '../token-store.js'

/** An authorization request waiting for the person's decision on the consent page. */
export interface PendingRequest {
  readonly clientId: string
  readonly redirectUri: string
  readonly responseType: 'code' | 'token'
  readonly scopes: readonly string[]
  readonly state: string | undefined
  readonly nonce: string | undefined
  readonly codeChallenge: string | undefined
  readonly expiresAt: number
}

/** An issued authorization code (stored under its digest, like tokens). */
export interface CodeRecord {
  readonly clientId: string
  readonly redirectUri: string
  readonly userId: string
  readonly scopes: readonly string[]
  readonly nonce: string | undefined
  readonly codeChallenge: string | undefined
  readonly authTime: number
  readonly expiresAt: number
  /** Set at the first redemption; a second one is refused and revokes this token. */
  redeemed: boolean
  accessToken: string | undefined
}

/** Everything the endpoints of one authorization server share. */
export interface OAuthContext {
  readonly data: EmulatorData
  readonly tokens: TokenStore
  readonly issuer: string
  readonly now: () => number
  readonly keys: SigningKeys
  readonly pending: Map<string, PendingRequest>
  readonly codes: Map<string, CodeRecord>
  /** The provider's sessions by `sid` (bounded, as codes are). */
  readonly sessions: Map<string, ProviderSession>
  /** Access token lifetime, in seconds. */
  readonly accessTokenLifetime: number
  /** The service its pages name (`Feide`, `SURFconext (surf)`). */
  readonly service: string
}

/** Lifetime of an authorization code, in ms (RFC 6749 section 4.1.2 recommends at most 10 minutes). */
export const CODE_LIFETIME = 60_000
/** Lifetime of a pending authorization request (the consent page), in ms. */
export const PENDING_LIFETIME = 10 * 60_000
/** Lifetime of an ID token, in seconds. */
export const ID_TOKEN_LIFETIME = 600

const MAX_ENTRIES = 10_000

/**
 * Stores `value` under `key`, first dropping expired entries and, if still full, the
 * oldest, so a flood of requests cannot grow the map without bound.
 */
export function remember<V extends { readonly expiresAt: number }>(map: Map<string, V>, key: string, value: V, now: number): void {
  if (map.size >= MAX_ENTRIES) {
    for (const [k, v] of map) if (v.expiresAt <= now) map.delete(k)
    while (map.size >= MAX_ENTRIES) {
      const oldest = map.keys().next()
      if (oldest.done === true) break
      map.delete(oldest.value)
    }
  }
  map.set(key, value)
}

/**
 * SHA-256 of a secret value, base64url: codes are stored under it, never raw.
 */
export function digest(value: string): string {
  return createHash('sha256').update(value).digest('base64url')
}

/**
 * The registered client with this id.
 */
export function findClient(data: EmulatorData, clientId: string | undefined): EmulatorClient | undefined {
  return clientId === undefined ? undefined : data.clients.find((c) => c.clientId === clientId)
}

/**
 * The scopes granted for a request: the requested ones the client is registered for
 * (others are dropped silently, as the real service does), or, when none were requested,
 * all of the client's scopes except `openid` (which must be asked for).
 */
export function grantScopes(client: EmulatorClient, requested: string | undefined): string[] {
  const allowed = client.scopes ?? ['openid', 'userid', 'profile', 'email', 'groups']
  if (requested === undefined || requested.trim() === '') return allowed.filter((s) => s !== 'openid')
  const wanted = [...new Set(requested.split(' ').filter((s) => s !== ''))]
  return wanted.filter((s) => allowed.includes(s))
}

/** One provider session: a user signed in to a client. */
export interface ProviderSession {
  readonly userId: string
  readonly clientId: string
  readonly expiresAt: number
}
