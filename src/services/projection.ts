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
