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

const ASCII_SPACE = 0x20
const ASCII_DEL = 0x7f
const LOWER = 0x20 // OR-ed into an ASCII letter, makes it lower case (and only letters map onto letters)

/** Where the token of a header of the usual shape (`Bearer`, one space, the token) starts. */
export const BEARER_TOKEN_START = PREFIX_LENGTH

/**
 * Whether `header` has the usual shape, `Bearer` (any case), one space, then at most
 * {@link MAX_TOKEN_LENGTH} characters that start and end with a printable ASCII character
 * other than a space, WITHOUT checking the characters between; its token then starts at
 * {@link BEARER_TOKEN_START} and runs to the end. Any other shape is for
 * {@link extractBearerToken} to decide.
 *
 * Why: checking a token's characters is, after its digest, the dearest step of a warm
 * decision, and a token whose answers are cached was checked when they were stored (the
 * resolver's cold path refuses a malformed token before it looks anything up, with the
 * error {@link extractBearerToken} throws). So the guard looks the candidate up first and
 * has it checked only on a miss (BENCHMARKS.md, issue 41). A candidate is only ever
 * digested for the in-process cache before that check: never sent, stored or logged.
 * For every header it accepts, {@link extractBearerToken} would find the same token or
 * throw that same error.
 */
export function isBearerCandidate(header: string | readonly string[] | undefined | null): header is string {
  if (typeof header !== 'string') return false
  const length = header.length
  if (length <= PREFIX_LENGTH || length - PREFIX_LENGTH > MAX_TOKEN_LENGTH) return false
  if (
    (header.charCodeAt(0) | LOWER) !== 0x62 || // b
    (header.charCodeAt(1) | LOWER) !== 0x65 || // e
    (header.charCodeAt(2) | LOWER) !== 0x61 || // a
    (header.charCodeAt(3) | LOWER) !== 0x72 || // r
    (header.charCodeAt(4) | LOWER) !== 0x65 || // e
    (header.charCodeAt(5) | LOWER) !== 0x72 || // r
    header.charCodeAt(6) !== ASCII_SPACE
  ) {
    return false
  }
  // The general path trims the header and allows several spaces after the scheme: a
  // candidate neither starts nor ends with anything that path would cut away.
  const first = header.charCodeAt(PREFIX_LENGTH)
  const last = header.charCodeAt(length - 1)
  return first > ASCII_SPACE && first < ASCII_DEL && last > ASCII_SPACE && last < ASCII_DEL
}

/**
 * The token of a header of the usual shape ({@link isBearerCandidate}), its characters
 * unchecked; `undefined` for any other shape, which {@link extractBearerToken} decides.
 */
export function bearerCandidate(header: string | readonly string[] | undefined | null): string | undefined {
  return isBearerCandidate(header) ? header.slice(PREFIX_LENGTH) : undefined
}

/**
 * What is wrong with a bearer token, as the {@link TokenMalformedError} that
 * {@link extractBearerToken} throws (empty, longer than {@link MAX_TOKEN_LENGTH}, or a
 * character RFC 6750's `b64token` does not allow); `undefined` for a well-formed token.
 */
export function tokenProblem(token: string): TokenMalformedError | undefined {
  if (token.length === 0) return new TokenMalformedError('The bearer token is empty')
  if (token.length > MAX_TOKEN_LENGTH) return new TokenMalformedError(`The bearer token is longer than ${MAX_TOKEN_LENGTH} characters`)
  return B64TOKEN.test(token) ? undefined : new TokenMalformedError('The bearer token contains characters RFC 6750 does not allow')
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
  const problem = tokenProblem(token)
  if (problem !== undefined) throw problem
  return token
}
