/**
 * Who is calling a group endpoint: nobody, somebody with a token the store rejects, or the
 * holder of a valid token; and the `WWW-Authenticate` challenges the real service sends.
 *
 * @module
 */
import type { TokenRecord, TokenStore } from './token-store.js'

/**
 * The realm in every challenge the emulator sends.
 */
export const REALM = 'voot-guard-emulator'

/**
 * The caller of one request. `token` is the raw bearer token, kept only for fault
 * matching; it never reaches the request log.
 */
export type Caller =
  | { readonly kind: 'anonymous'; readonly token?: undefined }
  | { readonly kind: 'invalid'; readonly token: string }
  | { readonly kind: 'token'; readonly token: string; readonly record: TokenRecord }

const BEARER = /^bearer(?:[ \t]+(.*))?$/is

/**
 * Reads the `Authorization` header. No header or another scheme is anonymous; a Bearer
 * header whose token is empty, unknown, revoked or expired is invalid.
 */
export function identifyCaller(header: string | undefined, tokens: TokenStore): Caller {
  const match = header === undefined ? null : BEARER.exec(header.trim())
  if (match === null) return { kind: 'anonymous' }
  const token = (match[1] ?? '').trim()
  const record = token === '' ? undefined : tokens.lookup(token)
  return record === undefined ? { kind: 'invalid', token } : { kind: 'token', token, record }
}

/**
 * A `WWW-Authenticate` value: `Bearer realm="…"`, plus an error attribute when given.
 * The real service says `invalid_scope` where RFC 6750 says `insufficient_scope`.
 */
export function challenge(error?: 'invalid_token' | 'invalid_scope'): string {
  const base = `Bearer realm="${REALM}"`
  if (error === 'invalid_token') return `${base}, error="invalid_token", error_description="Token is invalid"`
  if (error === 'invalid_scope') return `${base}, error="invalid_scope"`
  return base
}
