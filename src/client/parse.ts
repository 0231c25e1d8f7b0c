/**
 * Tolerant parsing and validation of the group service's response bodies.
 *
 * Real services differ (see `spec/real-service-behaviour.md`), so parsing accepts what
 * they send and normalises it: a translatable `displayName`, a membership sent as a bare
 * role string, a whole group where a membership object was expected. Unknown fields are
 * kept. What would be unsafe to guess fails: a group without an id, a list that is not an
 * array, a membership of the wrong type. Fields that decide whether a membership or a group
 * counts are read by ONE rule for both ({@link copyValidity}) and fail closed: an `active`
 * that is not a boolean, or a `notBefore`/`notAfter` that is not an ISO date string, makes
 * it inactive; a bound that is `null` means "no bound".
 *
 * The keys `__proto__`, `constructor` and `prototype` are never copied, at any depth of a
 * body read with {@link parseJson}, so merging a parsed value into another object cannot
 * pollute a prototype.
 *
 * @module
 */
import type { Group, GroupType, GroupWithMembership, MemberEntry, Membership, Translatable } from '../types.js'

/**
 * A response body that is not JSON, or not of the expected shape. The message describes
 * the problem without quoting the body (a hostile body could echo a token).
 */
export class BodyShapeError extends Error {
  override readonly name = 'BodyShapeError'
}

type JsonObject = Record<string, unknown>

const UNSAFE_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype'])

/**
 * Parses JSON text, dropping every `__proto__`, `constructor` and `prototype` key at any
 * depth. Throws {@link BodyShapeError} when the text is not JSON or is nested more than
 * 64 levels deep.
 */
export function parseJson(text: string): unknown {
  let value: unknown
  try {
    // A walk after the parse, not a reviver: a reviver calls back into JavaScript for
    // every value, which costs several times the walk (BENCHMARKS.md).
    value = JSON.parse(text)
  } catch {
    // The SyntaxError quotes the text, so it is not kept.
    throw new BodyShapeError('the body is not valid JSON')
  }
  clean(value, 0)
  return value
}

/**
 * Deepest nesting accepted. Real answers are four levels deep; the bound keeps every later
 * walk over a cached answer (freezing, pooling) far from the stack's limit.
 */
const MAX_DEPTH = 64

/** Drops unsafe keys at any depth, in place. */
function clean(value: unknown, depth: number): void {
  if (typeof value !== 'object' || value === null) return
  if (depth >= MAX_DEPTH) throw new BodyShapeError(`the body is nested more than ${MAX_DEPTH} levels deep`)
  if (Array.isArray(value)) {
    for (const element of value) clean(element, depth + 1)
    return
  }
  const fields = value as JsonObject
  // Own keys only: `for...in` would also visit whatever polluted Object.prototype.
  for (const key of Object.keys(fields)) {
    if (UNSAFE_KEYS.has(key)) {
      // eslint-disable-next-line @typescript-eslint/no-dynamic-delete -- dropping exactly the unsafe keys is the point
      delete fields[key]
      continue
    }
    clean(fields[key], depth + 1)
  }
}

/**
 * Parses the answer of `GET groups`: an array of groups.
 */
export function parseGroups(body: unknown): Group[] {
  return parseList(body, (element) => parseGroupObject(element) as Group)
}

/**
 * Parses the answer of `GET me/groups`: an array of groups, each with the user's
 * membership (`{}` when the service sent none).
 */
export function parseMyGroups(body: unknown): GroupWithMembership[] {
  return parseList(body, (element) => {
    const group = parseGroupObject(element)
    group['membership'] ??= {}
    return group as GroupWithMembership
  })
}

/**
 * Parses the answer of `GET groups/{groupid}`: one group.
 */
export function parseGroup(body: unknown): Group {
  return parseGroupObject(body) as Group
}

/**
 * Parses the answer of `GET me/groups/{groupid}`: a bare membership object, or (as other
 * VOOT servers send it) a whole group whose `membership` is taken (`{}` when it has none).
 */
export function parseMyMembership(body: unknown): Membership {
  if (!isObject(body)) throw new BodyShapeError('the membership answer must be a JSON object')
  if (Object.hasOwn(body, 'membership') || typeof body['id'] === 'string') {
    return parseMembershipValue(body['membership']) ?? {}
  }
  return parseMembership(body)
}

/**
 * Parses the answer of `GET groups/{groupid}/members`: an array of member entries, each
 * with a `name` (`''` when missing) and a membership (`{}` when missing).
 */
export function parseMembers(body: unknown): MemberEntry[] {
  return parseList(body, (element) => {
    if (!isObject(element)) throw new BodyShapeError('a member entry must be a JSON object')
    const entry = copyUnknown(element, MEMBER_FIELDS)
    entry['name'] = typeof element['name'] === 'string' ? element['name'] : ''
    entry['membership'] = parseMembershipValue(element['membership']) ?? {}
    return entry as MemberEntry
  })
}

/**
 * Parses the answer of `GET grouptypes`: an array of group types.
 */
export function parseGroupTypes(body: unknown): GroupType[] {
  return parseList(body, (element) => {
    if (!isObject(element)) throw new BodyShapeError('a group type must be a JSON object')
    const id = requireId(element, 'a group type')
    const type = copyUnknown(element, GROUP_TYPE_FIELDS)
    type['id'] = id
    type['displayName'] = parseDisplayName(element['displayName']) ?? id
    return type as GroupType
  })
}

/**
 * Parses a membership value as it appears in a group or member entry: an object, a bare
 * role string (`"admin"` becomes `{ basic: 'admin' }`), or absent/`null` (`undefined`).
 * Anything else throws {@link BodyShapeError}.
 */
export function parseMembershipValue(value: unknown): Membership | undefined {
  if (value === undefined || value === null) return undefined
  if (typeof value === 'string') return value === '' ? {} : { basic: value }
  if (isObject(value)) return parseMembership(value)
  throw new BodyShapeError('a membership must be an object or a role string')
}

const MEMBERSHIP_FIELDS: ReadonlySet<string> = new Set(['basic', 'displayName', 'active', 'notBefore', 'notAfter'])
const GROUP_FIELDS: ReadonlySet<string> = new Set([
  'id',
  'displayName',
  'description',
  'type',
  'membership',
  'active',
  'notBefore',
  'notAfter',
])
const MEMBER_FIELDS: ReadonlySet<string> = new Set(['name', 'membership'])
const GROUP_TYPE_FIELDS: ReadonlySet<string> = new Set(['id', 'displayName'])

function parseMembership(source: JsonObject): Membership {
  const membership = copyUnknown(source, MEMBERSHIP_FIELDS)
  if (typeof source['basic'] === 'string') membership['basic'] = source['basic']
  const displayName = parseTranslatable(source['displayName'])
  if (displayName !== undefined) membership['displayName'] = displayName
  copyValidity(source, membership)
  return membership
}

/**
 * Copies the fields that decide whether a membership or a group counts, the same way for
 * both, failing closed. `active` present but not a boolean (`"false"`, `null`, `0`) is an
 * unknown state: inactive. A `notBefore`/`notAfter` that is not an ISO date string (a
 * number of ms, an unparsable text) could hide an expiry: inactive. A bound that is `null`
 * is "no bound", as if absent.
 */
function copyValidity(source: JsonObject, target: JsonObject): void {
  let active: boolean | undefined
  if (Object.hasOwn(source, 'active')) active = source['active'] === true
  for (const bound of ['notBefore', 'notAfter'] as const) {
    const value = source[bound]
    if (value === undefined || value === null) continue
    if (typeof value === 'string' && !Number.isNaN(Date.parse(value))) target[bound] = value
    else active = false
  }
  if (active !== undefined) target['active'] = active
}

function parseGroupObject(source: unknown): JsonObject {
  if (!isObject(source)) throw new BodyShapeError('a group must be a JSON object')
  const id = requireId(source, 'a group')
  const group = copyUnknown(source, GROUP_FIELDS)
  group['id'] = id
  group['displayName'] = parseDisplayName(source['displayName']) ?? id
  const description = parseTranslatable(source['description'])
  if (description !== undefined) group['description'] = description
  if (typeof source['type'] === 'string') group['type'] = source['type']
  copyValidity(source, group)
  const membership = parseMembershipValue(source['membership'])
  if (membership !== undefined) group['membership'] = membership
  return group
}

function requireId(source: JsonObject, what: string): string {
  const id = source['id']
  if (typeof id !== 'string' || id === '') throw new BodyShapeError(`${what} needs a non-empty string id`)
  return id
}

function parseDisplayName(value: unknown): Translatable | undefined {
  // An empty name is as useless as a missing one; the caller falls back to the id.
  return value === '' ? undefined : parseTranslatable(value)
}

function parseTranslatable(value: unknown): Translatable | undefined {
  if (typeof value === 'string') return value
  if (!isObject(value)) return undefined
  const texts: Record<string, string> = {}
  let found = false
  for (const [language, text] of Object.entries(value)) {
    if (UNSAFE_KEYS.has(language) || typeof text !== 'string') continue
    texts[language] = text
    found = true
  }
  return found ? texts : undefined
}

function parseList<T>(body: unknown, parseElement: (element: unknown) => T): T[] {
  if (!Array.isArray(body)) throw new BodyShapeError('a list endpoint must answer a JSON array')
  return body.map((element, index) => {
    try {
      return parseElement(element)
    } catch (err) {
      if (err instanceof BodyShapeError) throw new BodyShapeError(`element ${index}: ${err.message}`)
      throw err
    }
  })
}

function copyUnknown(source: JsonObject, known: ReadonlySet<string>): JsonObject {
  const copy: JsonObject = {}
  for (const key of Object.keys(source)) {
    if (!known.has(key) && !UNSAFE_KEYS.has(key)) copy[key] = source[key]
  }
  return copy
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
