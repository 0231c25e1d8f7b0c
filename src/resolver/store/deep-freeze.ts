/**
 * Deep freezing of the answers the resolver caches and shares between requests.
 *
 * @module
 */

/**
 * Freezes `value` and everything reachable from it, and returns it. Stops at objects that
 * are already frozen: those were frozen whole by an earlier call (cached answers share
 * frozen groups), so walking them again would only cost time.
 *
 * @example
 * ```ts
 * const data = deepFreeze({ users: [{ id: 'alice', groups: ['fc:org:example.org'] }] })
 * ```
 */
export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value)
    for (const inner of Object.values(value)) deepFreeze(inner)
  }
  return value
}
