/**
 * Reading a bearer token from an `Authorization` header (RFC 6750 section 2.1).
 *
 * @module
 */
import { TokenMalformedError, TokenMissingError } from './errors.js'

/**
 * Longest token accepted; longer ones are refused before they reach the group service.
 *
 * @example
 * ```ts
 * if (token.length > MAX_TOKEN_LENGTH) throw new TokenMalformedError()
 * ```
 */
export const MAX_TOKEN_LENGTH = 4096

// RFC 6750: b64token = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="
const B64TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/

// The scheme is case-insensitive (RFC 7235 section 2.1); one or more spaces separate it.
const BEARER_PREFIX = /^bearer(?: +|$)/i

/**
 * Whether `token` has RFC 6750 `b64token` syntax and is at most {@link MAX_TOKEN_LENGTH}
 * characters long.
 *
 * @example
 * ```ts
 * isWellFormedToken('abc.DEF-123') // true
 * isWellFormedToken('a b')         // false
 * ```
 */
export function isWellFormedToken(token: unknown): token is string {
  return typeof token === 'string' && token.length > 0 && token.length <= MAX_TOKEN_LENGTH && B64TOKEN.test(token)
}

// The usual header shape in one expression: `Bearer`, one space, a b64token. Testing the
// whole header and slicing after is cheaper than slicing first and testing the token
// (BENCHMARKS.md).
const BEARER_B64TOKEN = /^[Bb][Ee][Aa][Rr][Ee][Rr] [A-Za-z0-9\-._~+/]+=*$/
const PREFIX_LENGTH = 7 // 'Bearer '

/**
 * The token of the usual header shape, without the trim, the prefix regex and the match
 * array of the general path; `undefined` for anything else, which the general path then
 * decides (it may still accept it, or throw).
 */
function wellFormedBearer(header: string): string | undefined {
  return header.length - PREFIX_LENGTH <= MAX_TOKEN_LENGTH && BEARER_B64TOKEN.test(header) ? header.slice(PREFIX_LENGTH) : undefined
}

/**
 * Extracts the bearer token from an `Authorization` header value.
 *
 * - no header, or another scheme (`Basic ...`): throws {@link TokenMissingError} (401
 *   without an error attribute, as RFC 6750 section 3.1 asks);
 * - `Bearer` with an empty, malformed or over-long token, or several header values:
 *   throws {@link TokenMalformedError} (400 `invalid_request`).
 *
 * The messages never echo the header.
 *
 * @example
 * ```ts
 * const token = extractBearerToken(req.headers.authorization)
 * ```
 */
export function extractBearerToken(header: string | readonly string[] | undefined | null): string {
  if (typeof header === 'string') {
    const token = wellFormedBearer(header)
    if (token !== undefined) return token
  }
  if (header === undefined || header === null) throw new TokenMissingError()
  if (typeof header !== 'string') {
    if (header.length === 0) throw new TokenMissingError()
    throw new TokenMalformedError('The request carries more than one Authorization header')
  }
  // Node already strips surrounding whitespace; frameworks that do not are handled here.
  const value = header.trim()
  if (value.length === 0) throw new TokenMissingError()
  const prefix = BEARER_PREFIX.exec(value)
  if (prefix === null) throw new TokenMissingError()
  const token = value.slice(prefix[0].length)
  if (token.length === 0) throw new TokenMalformedError('The bearer token is empty')
  if (token.length > MAX_TOKEN_LENGTH) {
    throw new TokenMalformedError(`The bearer token is longer than ${MAX_TOKEN_LENGTH} characters`)
  }
  if (!B64TOKEN.test(token)) {
    throw new TokenMalformedError('The bearer token contains characters RFC 6750 does not allow')
  }
  return token
}
