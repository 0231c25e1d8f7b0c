/**
 * A requirement seen from one group service: the parts on other services cannot be met
 * with this service's token, so they become denials before any call, never calls. What is
 * left is an ordinary requirement for that service's own resolver.
 *
 * @module
 */
import { allOf, anyOf, type Requirement } from '../decision/requirements.js'

/**
 * `requirement` as `service` can decide it, or `undefined` when no part of it can be met
 * there (the decision is then a denial, `other_service`). `serviceOf` names the service of
 * a group or group-type leaf; `where` and `authenticated` hold on any service. An `anyOf`
 * keeps its alternatives on `service`; an `allOf` with a part elsewhere cannot be met.
 *
 * @example
 * ```ts
 * projectRequirement(anyOf(feideAdmin, surfAdmin), 'feide', serviceOf) // feideAdmin
 * ```
 */
export function projectRequirement(
  requirement: Requirement,
  service: string,
  serviceOf: (leaf: Requirement & { kind: 'group' | 'groupOfType' }) => string,
): Requirement | undefined {
  switch (requirement.kind) {
    case 'group':
    case 'groupOfType':
      return serviceOf(requirement) === service ? requirement : undefined
    case 'where':
    case 'authenticated':
      return requirement
    case 'anyOf': {
      const kept = projectAll(requirement.requirements, service, serviceOf)
      const left = kept.filter((part): part is Requirement => part !== undefined)
      if (left.length === 0) return undefined
      // Unchanged parts keep the requirement itself (and so its prepared state and its words).
      if (left.length === kept.length && kept.every((part, index) => part === requirement.requirements[index])) return requirement
      return left.length === 1 ? left[0] : anyOf(...left)
    }
    case 'allOf': {
      const kept = projectAll(requirement.requirements, service, serviceOf)
      if (kept.some((part) => part === undefined)) return undefined
      if (kept.every((part, index) => part === requirement.requirements[index])) return requirement
      return allOf(...(kept as Requirement[]))
    }
  }
}

function projectAll(
  parts: readonly Requirement[],
  service: string,
  serviceOf: (leaf: Requirement & { kind: 'group' | 'groupOfType' }) => string,
): (Requirement | undefined)[] {
  return parts.map((part) => projectRequirement(part, service, serviceOf))
}

/** `groupPrefixes` as pairs of a prefix and the service it names. */
export type GroupPrefixEntries = readonly (readonly [prefix: string, service: string])[]

/**
 * The services whose `groupPrefixes` entries start `id`, each once, in the entries' order:
 * one is the group's service, none or several mean it must be named.
 *
 * @example
 * ```ts
 * servicesByPrefix('fc:org:uio.no', Object.entries({ 'fc:': 'feide', 'urn:collab:': 'surf' })) // ['feide']
 * ```
 */
export function servicesByPrefix(id: string, prefixes: GroupPrefixEntries): string[] {
  const found: string[] = []
  for (const [prefix, service] of prefixes) if (id.startsWith(prefix) && !found.includes(service)) found.push(service)
  return found
}

/**
 * For a group id no `groupPrefixes` entry covers, the service it most likely belongs to: the
 * one whose prefix shares the longest start with it (`urn:mace:...` is nearer `urn:collab:`
 * than `fc:`). `undefined` when no prefix shares a character with it or two services tie:
 * then advice lists the services instead of guessing one.
 *
 * @example
 * ```ts
 * nearestPrefixService('urn:mace:surf.nl:staff', Object.entries({ 'fc:': 'feide', 'urn:collab:': 'surf' })) // 'surf'
 * ```
 */
export function nearestPrefixService(id: string, prefixes: GroupPrefixEntries): string | undefined {
  let best = 0
  let nearest = new Set<string>()
  for (const [prefix, service] of prefixes) {
    let shared = 0
    while (shared < prefix.length && shared < id.length && prefix[shared] === id[shared]) shared++
    if (shared === 0 || shared < best) continue
    if (shared > best) nearest = new Set()
    best = shared
    nearest.add(service)
  }
  return nearest.size === 1 ? [...nearest][0] : undefined
}
