/**
 * The exit codes of the `voot-guard` command, so that scripts can branch on a check
 * without parsing its output.
 *
 * @module
 */

/**
 * Success: the command did its work (for `check`: the requirement is met).
 *
 * @example
 * ```ts
 * if ((await runCli(argv, io)) === EXIT_OK) console.log('allowed')
 * ```
 */
export const EXIT_OK = 0

/**
 * `check` only: the group service answered, and the requirement is not met.
 *
 * @example
 * ```ts
 * if (code === EXIT_DENIED) console.log('denied')
 * ```
 */
export const EXIT_DENIED = 1

/**
 * Anything else: bad arguments, a missing or invalid `VOOT_TOKEN`, or a group service that
 * failed. For `check` this means "unknown": neither allowed nor denied.
 *
 * @example
 * ```ts
 * if (code === EXIT_ERROR) console.error('no answer; try again later')
 * ```
 */
export const EXIT_ERROR = 2
