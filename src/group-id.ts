/**
 * Validation and encoding of group ids before they go into a request path.
 *
 * Group ids are opaque strings with colons and sometimes percent signs
 * (`fc:gogroup:example.org:u:NO123:4a%2F3:2026-08-01:2027-06-30`). Each one goes into the
 * path as exactly ONE percent-encoded segment. Ids the URL parser would collapse (`.`,
 * `..` and their percent-encodings) are refused before any request, because the request
 * would reach another endpoint with the user's token.
 *
 * @module
 */
import { InvalidGroupIdError } from './errors.js'

/**
 * Longest group id accepted, in UTF-16 code units.
 *
 * @example
 * ```ts
 * if (id.length > MAX_GROUP_ID_LENGTH) return res.status(400).end()
 * ```
 */
export const MAX_GROUP_ID_LENGTH = 1024

// C0 controls, DEL and C1 controls: never part of a real id, and CR/LF would be a header
// or log injection risk wherever the id is echoed.
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f]/

// `.` and `..` in any mix of literal dots and `%2e`/`%2E`, including double encodings.
const DOT_SEGMENT = /^(?:\.|%2e|%252e){1,2}$/i

/**
 * Throws {@link InvalidGroupIdError} unless `id` can be sent safely as one path segment.
 *
 * @example
 * ```ts
 * assertGroupId('fc:org:example.org') // ok
 * assertGroupId('..')                 // throws InvalidGroupIdError
 * ```
 */
export function assertGroupId(id: unknown): asserts id is string {
  if (typeof id !== 'string') throw new InvalidGroupIdError(`A group id must be a string, got ${typeof id}`)
  if (id.length === 0) throw new InvalidGroupIdError('A group id must not be empty')
  if (id.length > MAX_GROUP_ID_LENGTH) {
    throw new InvalidGroupIdError(`A group id must be at most ${MAX_GROUP_ID_LENGTH} characters, got ${id.length}`)
  }
  if (CONTROL_CHARACTERS.test(id)) throw new InvalidGroupIdError('A group id must not contain control characters')
  if (!id.isWellFormed()) throw new InvalidGroupIdError('A group id must be well-formed Unicode (no lone surrogates)')
  if (DOT_SEGMENT.test(id)) throw new InvalidGroupIdError('The group ids "." and ".." (and their encodings) are refused')
}

/**
 * Validates `id` and percent-encodes it as one path segment.
 *
 * @example
 * ```ts
 * encodeGroupId('fc:gogroup:x:4a%2F3') // 'fc%3Agogroup%3Ax%3A4a%252F3'
 * ```
 */
export function encodeGroupId(id: string): string {
  assertGroupId(id)
  return encodeURIComponent(id)
}
