/**
 * The version of voot-guard, sent in the default `User-Agent` of the groups client.
 *
 * @example
 * ```ts
 * import { VERSION } from 'voot-guard'
 * console.log(`running voot-guard ${VERSION}`)
 * ```
 */
export const VERSION = '0.1.0'
