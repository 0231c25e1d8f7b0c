/**
 * The exit codes of the `voot-guard` command, so that scripts can branch on a check
 * without parsing its output.
 *
 * @module
 */

/**
 * Success: the command did its work (for `check`: the requirement is met).
 */
export const EXIT_OK = 0

/**
 * `check` only: the group service answered, and the requirement is not met.
 */
export const EXIT_DENIED = 1

/**
 * Anything else: bad arguments, a missing or invalid `VOOT_TOKEN`, or a group service that
 * failed. For `check` this means "unknown": neither allowed nor denied.
 */
export const EXIT_ERROR = 2
