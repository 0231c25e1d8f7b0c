/**
 * Requirements from the request: `requireGroup((req) => id, role)` and
 * `require((req) => requirement)`. The function runs once per request; what it returns is
 * checked there (a group id as `assertGroupId` checks it, a requirement as the builders
 * made it), and found again by what it requires (`requirementKey`), so that an equal
 * requirement, static or computed before, is the same object and the resolver's remembered
 * verdicts serve it warm.
 *
 * A group id that request data made invalid is the request's fault, not the application's:
 * it is refused as a 403 `forbidden` without a call (never a 500). An error thrown by the
 * application's own function is a bug, for the framework's error handling (a 500).
 *
 * @module
 */
import { ForbiddenError, InvalidGroupIdError } from '../errors.js'
import { group, isRequirement, type Requirement } from '../decision/requirements.js'
import { groupKey, requirementKey } from '../decision/requirement-key.js'

/**
 * A requirement computed from the framework's request `I` (Express `req`, Koa `ctx`,
 * Fastify `request`, Hono `c`, fetch `Request`), once per request.
 *
 * @example
 * ```ts
 * const courseAdmins: RequirementOf<Request> = (req) => group(`fc:fs:fs:emne:example.org:${req.params.id}:1`, 'admin')
 * ```
 */
export type RequirementOf<I> = (input: I) => Requirement

/** Computed requirements remembered per guard core: enough for the routes' live values, bounded against a crawler's. */
export const MAX_COMPUTED_REQUIREMENTS = 4096

/** The computed requirements of one guard core: each found again by its key, checked once. */
export interface RequirementInterner {
  /** Makes `requirement` (a static one, declared) the one its equals are found as. */
  declare(requirement: Requirement): void
  /** The requirement of `requireGroup(computed, role)` for one request's id. */
  group(groupId: unknown, role: string | undefined): Requirement
  /** The requirement a `require(computed)` function returned, as its equals are known. */
  requirement(requirement: unknown): Requirement
}

/**
 * Creates the computed requirements' table of a guard core; `prepare` is the core's check
 * of a requirement (its roles, its service), run once per distinct requirement.
 */
export function createRequirementInterner(prepare: (requirement: Requirement) => Requirement, named: boolean): RequirementInterner {
  const declared = new Map<string, Requirement>()
  const computed = new Map<string, Requirement>()

  function find(key: string): Requirement | undefined {
    return declared.get(key) ?? computed.get(key)
  }

  function keep(key: string, requirement: Requirement): Requirement {
    // An unknown role or a group no service holds is the application's mistake: it throws.
    const checked = prepare(requirement)
    // First in, first out: no reordering on the warm path, and a flood of distinct values
    // costs the oldest entries, never unbounded memory.
    if (computed.size >= MAX_COMPUTED_REQUIREMENTS) computed.delete(computed.keys().next().value as string)
    computed.set(key, checked)
    return checked
  }

  return {
    declare(requirement) {
      const key = requirementKey(requirement)
      if (key !== undefined && !declared.has(key)) declared.set(key, requirement)
    },
    group(groupId, role) {
      if (typeof groupId === 'string') {
        const known = find(groupKey(groupId, role, undefined))
        if (known !== undefined) return known
      }
      let built: Requirement
      try {
        built = group(groupId as string, role)
      } catch (error) {
        throw refused(error, named)
      }
      return keep(groupKey(groupId as string, role, undefined), built)
    },
    requirement(requirement) {
      if (!isRequirement(requirement)) {
        throw new TypeError('require((request) => ...): the function must return a requirement built by voot-guard (group(), anyOf(), ...)')
      }
      const key = requirementKey(requirement)
      // A `where` predicate made per request is only itself: checked each time, never kept.
      if (key === undefined) return prepare(requirement)
      return find(key) ?? keep(key, requirement)
    },
  }
}

/**
 * The 403 of a computed group id that `assertGroupId` refuses: request data made it, so no
 * member of it can exist (`not_member`), and nothing is sent anywhere. The answer never
 * repeats the id. Any other error is a bug and stays itself (a 500).
 */
export function refused(error: unknown, named: boolean): unknown {
  if (!(error instanceof InvalidGroupIdError)) return error
  const message = named ? 'The group this request names is not a valid group id' : undefined
  return new ForbiddenError(message, { reason: 'not_member', cause: error })
}
