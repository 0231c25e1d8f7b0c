/**
 * A guard factory handed to the framework uncalled: `app.use(guard.authenticate)` instead of
 * `app.use(guard.authenticate())`. The framework then calls the factory with its request, and
 * without this check the request would be read as the factory's options or group id: an
 * error about an option the application never wrote, or a 400 for a request that was fine.
 * Found by its arguments: more of them than the factory takes, or a framework's request
 * (something with `headers` or `req`, not a plain object) in the first place.
 *
 * @module
 */
import { InvalidArgumentError } from '../errors.js'

/** Whether `value` is an object of a framework: a request, a Koa `ctx`, a Hono `c`. */
function isFrameworkObject(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false
  const prototype: unknown = Object.getPrototypeOf(value)
  if (prototype === Object.prototype || prototype === null) return false
  return 'headers' in value || 'req' in value
}

/** What each guard factory's call looks like, for the error of {@link refuseUncalled}. */
const GUARD_FACTORY_CALLS = {
  authenticate: 'guard.authenticate()',
  requireGroup: "guard.requireGroup('fc:org:example.org', 'admin')",
  requireAnyGroup: "guard.requireAnyGroup(['fc:adhoc:1', 'fc:adhoc:2'], 'admin')",
  requireAllGroups: "guard.requireAllGroups(['fc:adhoc:1', 'fc:adhoc:2'], 'admin')",
  require: "guard.require(group('fc:org:example.org', 'admin'))",
} as const

/**
 * Wraps the guard factory `make` called `name`, which takes at most `arity` arguments, so
 * that a framework calling it as a middleware gets an `InvalidArgumentError` (status 500,
 * not exposed: the framework's own error handling answers 500, never a 4xx) that says to
 * call it, with an example of the call.
 *
 * @example
 * ```ts
 * const authenticate = refuseUncalled('authenticate', 1, (options?: AuthenticateOptions) => ...)
 * app.use(authenticate) // the first request: "guard.authenticate was used as a middleware without being called: call it: `guard.authenticate()`"
 * ```
 */
export function refuseUncalled<A extends unknown[], R>(
  name: keyof typeof GUARD_FACTORY_CALLS,
  arity: number,
  make: (...args: A) => R,
): (...args: A) => R {
  const call = GUARD_FACTORY_CALLS[name]
  return (...args) => {
    if (args.length > arity || isFrameworkObject(args[0])) {
      throw new InvalidArgumentError(
        `guard.${name} was used as a middleware without being called (the framework called it with its request): call it: \`${call}\``,
      )
    }
    return make(...args)
  }
}
