/**
 * The first step of every adapter's `createGuard`: the options object checked, and split
 * into the adapter's `getToken` and the core's options.
 *
 * @module
 */
import { optionsMissing, rejectUnknownKeys } from '../option-checks.js'
import { GUARD_OPTION_KEYS, type GuardOptions } from './guard.js'

/**
 * Checks that `options` is an object (so that `createGuard()` and `createGuard('x')` throw
 * an {@link InvalidOptionError}, not a `TypeError` from destructuring) and splits off
 * `getToken`, which each adapter types for its own request.
 *
 * @example
 * ```ts
 * const { getToken, coreOptions } = splitGuardOptions(options)
 * const core = createGuardCore(coreOptions)
 * ```
 */
export function splitGuardOptions<G>(options: GuardOptions & { getToken?: G }): { getToken: G | undefined; coreOptions: GuardOptions } {
  if (typeof options !== 'object' || options === null) {
    throw optionsMissing('createGuard', options)
  }
  rejectUnknownKeys('', options, [...GUARD_OPTION_KEYS, 'getToken'])
  const { getToken, ...coreOptions } = options
  return { getToken, coreOptions }
}
