/**
 * What a refused request is told: the requirement it did not meet, in words ("This resource
 * requires the role admin or higher in the group fc:org:example.org"). It names what was
 * required, which is the application's configuration, and never what the user has: no
 * group of theirs, no role they hold, no reason code.
 *
 * @module
 */
import type { GroupRequirement, Requirement } from './requirements.js'

// Requirements are frozen and built once per route: their text is made once too.
const texts = new WeakMap<Requirement, string>()

/**
 * The sentence a 403 `forbidden` answer carries as its `error_description` (and the
 * `ForbiddenError`'s message) when the guard's `denials` option is `'named'`.
 *
 * @example
 * ```ts
 * requiredText(group('fc:org:example.org', 'admin'))
 * // 'This resource requires the role admin or higher in the group fc:org:example.org'
 * requiredText(anyOf(group('fc:adhoc:1'), group('fc:adhoc:2')))
 * // 'This resource requires membership in one of: fc:adhoc:1, fc:adhoc:2'
 * ```
 */
export function requiredText(requirement: Requirement): string {
  let text = texts.get(requirement)
  if (text === undefined) {
    text = `This resource requires ${phrase(requirement)}`
    texts.set(requirement, text)
  }
  return text
}

function phrase(requirement: Requirement): string {
  switch (requirement.kind) {
    case 'group':
      return requirement.role === undefined
        ? `membership in the group ${requirement.groupId}`
        : `the role ${requirement.role} or higher in the group ${requirement.groupId}`
    case 'groupOfType':
      return requirement.role === undefined
        ? `membership in a group of type ${requirement.groupType}`
        : `the role ${requirement.role} or higher in a group of type ${requirement.groupType}`
    case 'where':
      return `the condition "${requirement.description}"`
    case 'authenticated':
      return 'a valid personal token with the groups scope'
    case 'anyOf':
      return several(requirement.requirements, 'one of')
    case 'allOf':
      return several(requirement.requirements, 'each of')
  }
}

/** `membership in one of: A, B` when the parts are groups with one role; else each part's phrase. */
function several(parts: readonly Requirement[], which: 'one of' | 'each of'): string {
  const first = parts[0]
  if (first?.kind === 'group' && parts.every((part) => part.kind === 'group' && part.role === first.role)) {
    const ids = (parts as readonly GroupRequirement[]).map((part) => part.groupId).join(', ')
    return first.role === undefined ? `membership in ${which}: ${ids}` : `the role ${first.role} or higher in ${which}: ${ids}`
  }
  const phrases = parts.map((part) => (part.kind === 'anyOf' || part.kind === 'allOf' ? `(${phrase(part)})` : phrase(part)))
  return `${which}: ${phrases.join('; ')}`
}
