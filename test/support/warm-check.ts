/**
 * The synchronous warm path of a resolver as tests look at it: `checkNow`'s decision when
 * fresh cached answers allow the requirement at once, `undefined` otherwise (a cold path,
 * whose promise is settled quietly here, or a warm denial).
 */
import type { Decision, MembershipResolver, Requirement, ResolveOptions } from '../../src/index.js'

export function warmAllowed(
  resolver: MembershipResolver,
  token: string,
  requirement: Requirement,
  options?: ResolveOptions,
): Decision | undefined {
  const decided = resolver.checkNow?.(token, requirement, options)
  if (decided instanceof Promise) {
    decided.catch(() => undefined)
    return undefined
  }
  return decided?.allowed === true ? decided : undefined
}
