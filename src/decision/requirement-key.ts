/**
 * What a requirement requires, as a string: two requirements with the same key decide
 * alike on the same answers. Computed requirements (built per request from a route's
 * parameters) are found again by it, so that a warm decision reads the verdict an equal
 * requirement left, whichever object asked first.
 *
 * @module
 */
import type { Requirement } from './requirements.js'

// Ids, roles, types and service names never hold control characters (the builders refuse
// them), so these separators cannot occur inside a part: the key is unambiguous.
const PART = '\u0000'
const OPEN = '\u0002'
const CLOSE = '\u0003'

/**
 * The key of a requirement, or `undefined` when it holds a `where` predicate (a function
 * is only itself: such a requirement has no equal but itself).
 *
 * @example
 * ```ts
 * requirementKey(group('fc:org:example.org', 'admin')) === requirementKey(group('fc:org:example.org', 'admin')) // true
 * ```
 */
export function requirementKey(requirement: Requirement): string | undefined {
  switch (requirement.kind) {
    case 'group':
      return groupKey(requirement.groupId, requirement.role, requirement.service)
    case 'groupOfType':
      return `t${PART}${requirement.groupType}${PART}${requirement.role ?? ''}${PART}${requirement.service ?? ''}`
    case 'anyOf':
    case 'allOf': {
      let key = requirement.kind === 'anyOf' ? `a${OPEN}` : `l${OPEN}`
      for (const part of requirement.requirements) {
        const partKey = requirementKey(part)
        if (partKey === undefined) return undefined
        key += partKey + PART
      }
      return key + CLOSE
    }
    case 'where':
      return undefined
    case 'authenticated':
      return 'u'
  }
}

/**
 * The key of `group(groupId, role)`, without building the requirement: the guard of
 * `requireGroup((req) => id, role)` looks it up before anything else.
 *
 * @example
 * ```ts
 * groupKey('fc:org:example.org', 'admin', undefined) === requirementKey(group('fc:org:example.org', 'admin')) // true
 * ```
 */
export function groupKey(groupId: string, role: string | undefined, service: string | undefined): string {
  return `g${PART}${role ?? ''}${PART}${service ?? ''}${PART}${groupId}`
}
