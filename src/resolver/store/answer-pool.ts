/**
 * A bounded pool of the frozen parts of cached answers (a listed group with the user's
 * membership of it, a bare membership), keyed by their JSON text.
 *
 * Users of one organisation mostly hold the same groups with the same membership: the
 * students of a class all have `{ basic: 'member', affiliation: 'student' }` in the same
 * class group. Without a pool every cached answer holds its own copy of those objects,
 * which is most of what a cache entry weighs. With it, identical parts are one frozen
 * object, whichever token they were fetched with. Parts are shared from the inside out:
 * a membership with a title of its own is a new object, but its role's display name
 * (`{ nb: 'Lærer', en: 'Teacher' }`) is still the shared one. Sharing is safe because
 * the parts are deep-frozen and identical in every byte; nothing of one user can reach
 * another that the other's own answer did not already hold. The pool does keep recently seen parts
 * (membership attributes such as titles among them) after their cache entries are gone,
 * within its bounds, until {@link AnswerPool.clear}.
 *
 * @module
 */
import { LRUCache } from 'lru-cache'
import { deepFreeze } from './deep-freeze.js'

/** Parts whose JSON is longer than this are not pooled: rare, and they would crowd the pool. */
const MAX_KEY_LENGTH = 1024

/** Most parts kept. */
const MAX_PARTS = 4096

/** Most characters of JSON kept as keys, all parts together (about 1 MiB). */
const MAX_KEY_CHARACTERS = 1_000_000

/** Deeper parts are not pooled (real answers are three levels deep). */
const MAX_DEPTH = 8

/** Whether `value` is made of JSON's own values only, so that its JSON text identifies it. */
function isPlainJson(value: unknown, depth: number): boolean {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return true
    case 'number':
      return Number.isFinite(value) && !Object.is(value, -0)
    case 'object': {
      if (value === null) return true
      if (depth >= MAX_DEPTH) return false
      if (Array.isArray(value)) {
        // An index loop, not `every`: a hole reads as `undefined` and is refused.
        for (let i = 0; i < value.length; i++) if (!isPlainJson(value[i], depth + 1)) return false
        return true
      }
      // Plain objects only: a null-prototype one would come back from its JSON as a plain one.
      if (Object.getPrototypeOf(value) !== Object.prototype) return false
      // An own `__proto__` survives JSON but not assignment: such objects stay unpooled.
      if (Object.hasOwn(value, '__proto__')) return false
      for (const inner of Object.values(value)) if (!isPlainJson(inner, depth + 1)) return false
      return true
    }
    default:
      return false
  }
}

/**
 * A copy of `fields` laid out in one piece. An object built key by key (as the parser
 * builds answers) keeps all but its first four properties in a separate array, 40 to 64
 * bytes more per object; `JSON.parse` sizes the object for all of them. The copy then
 * takes `fields`' own values back, so that inner parts and pooled strings stay shared.
 */
function compact(key: string, fields: Record<string, unknown>): Record<string, unknown> {
  const copy = JSON.parse(key) as Record<string, unknown>
  for (const name of Object.keys(fields)) copy[name] = fields[name]
  return copy
}

/**
 * Shares identical answer parts; see the module description.
 */
export interface AnswerPool {
  /** The pooled, deep-frozen object equal to `part` (`part` itself, frozen, when it is new or not pooled). */
  share<T extends object>(part: T): T
  /** The list with each element shared, frozen. */
  shareAll<T extends object>(list: readonly T[]): readonly T[]
  /** Forgets every part (cached answers keep theirs). */
  clear(): void
}

/**
 * Creates an {@link AnswerPool}: least recently used parts go first, and the pool never
 * holds more than {@link MAX_PARTS} parts or {@link MAX_KEY_CHARACTERS} characters of keys.
 */
export function createAnswerPool(): AnswerPool {
  const parts = new LRUCache<string, object>({
    max: MAX_PARTS,
    maxSize: MAX_KEY_CHARACTERS,
    sizeCalculation: (_part, key) => key.length,
  })

  /**
   * The pooled object equal to `part`; when there is none, shares the parts inside it
   * (replacing them in place while it is not frozen) and pools `part`. Looked up whole
   * first: a group every user of a class holds costs one lookup, not one per part.
   */
  function shareTree(part: object): object {
    // Key order is part of the key: the same service writes its objects the same way, and
    // a difference in order only costs a second copy, never a wrong one.
    const key = JSON.stringify(part)
    const poolable = key.length <= MAX_KEY_LENGTH
    if (poolable) {
      const known = parts.get(key)
      if (known !== undefined) return known
    }
    const fields = part as Record<string, unknown>
    const frozen = Object.isFrozen(part)
    if (!frozen) {
      for (const name of Object.keys(fields)) {
        const inner = fields[name]
        if (typeof inner === 'object' && inner !== null) fields[name] = shareTree(inner)
      }
    }
    // Equal inner parts were swapped in, so `key` is still the JSON of `part`.
    if (!poolable) return deepFreeze(part)
    const kept = frozen || Array.isArray(part) ? part : compact(key, fields)
    parts.set(key, deepFreeze(kept))
    return kept
  }

  function share<T extends object>(part: T): T {
    // Only what JSON says exactly is pooled: a custom client's Date, class instance or
    // `undefined` would share a key with something that is not the same.
    return isPlainJson(part, 0) ? (shareTree(part) as T) : deepFreeze(part)
  }

  return {
    share,
    shareAll: (list) => Object.freeze(list.map(share)),
    clear: () => {
      parts.clear()
    },
  }
}
