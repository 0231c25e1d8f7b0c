/**
 * Checks for factory options: each throws {@link InvalidOptionError} naming the option,
 * so invalid configuration fails at creation, never on some later request.
 *
 * @module
 */
import { InvalidOptionError } from './errors.js'

/**
 * The default and the range of an integer option.
 *
 * @example
 * ```ts
 * const retries = integerOption('retries', options.retries, { fallback: 1, min: 0, max: 5 } satisfies IntegerBounds)
 * ```
 */
export interface IntegerBounds {
  readonly fallback: number
  readonly min: number
  readonly max: number
}

/**
 * Returns `value`, or `bounds.fallback` when it is undefined, after checking it is an
 * integer within `[bounds.min, bounds.max]`.
 *
 * @example
 * ```ts
 * const timeout = integerOption('timeout', options.timeout, { fallback: 50, min: 1, max: 10_000 })
 * ```
 */
export function integerOption(name: string, value: unknown, bounds: IntegerBounds): number {
  const { fallback, min, max } = bounds
  if (value === undefined) return fallback
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new InvalidOptionError(name, `must be an integer from ${min} to ${max}, got ${describe(value)}`)
  }
  return value
}

/**
 * Returns `value`, or `fallback` when it is undefined, after checking it is a function.
 *
 * @example
 * ```ts
 * const now = functionOption('now', options.now, Date.now)
 * ```
 */
export function functionOption<F extends (...args: never[]) => unknown>(name: string, value: unknown, fallback: F): F {
  if (value === undefined) return fallback
  if (typeof value !== 'function') throw new InvalidOptionError(name, `must be a function, got ${describe(value)}`)
  return value as F
}

/**
 * Checks that `value` is a plain object (or undefined) and returns it, or `{}`.
 *
 * @example
 * ```ts
 * const breaker = objectOption<{ cooldown?: number }>('breaker', options.breaker)
 * ```
 */
export function objectOption<T extends object>(name: string, value: unknown): Partial<T> {
  if (value === undefined) return {}
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new InvalidOptionError(name, `must be an object, got ${describe(value)}`)
  }
  return value
}

/** What a `baseUrl` looks like, for the messages that say one is missing. */
export const BASE_URL_EXAMPLES =
  "'https://groups-api.dataporten.no/groups' (Feide, with its /groups prefix) or 'https://voot.surfconext.nl' (SURFconext)"

/**
 * The error of a factory called without its options object (`createGuard()`), or with
 * something else: it names `baseUrl`, the one option every such factory needs, and shows a
 * minimal call; a string given in its place (`createGuard('https://...')`) is shown as the
 * `baseUrl` it was meant to be.
 *
 * @example
 * ```ts
 * if (typeof options !== 'object' || options === null) throw optionsMissing('createGuard', options)
 * ```
 */
export function optionsMissing(factory: string, value: unknown): InvalidOptionError {
  if (value === undefined || value === null) {
    return new InvalidOptionError(
      'baseUrl',
      `is required: ${factory}() was called without options; give it at least the group service's address, such as ${factory}({ baseUrl: 'https://groups-api.dataporten.no/groups' })`,
    )
  }
  // A URL passed where the options go (`createGuard('https://...')`) is shown in its place.
  const meant =
    typeof value === 'string' && value.length <= 256 && /^https?:\/\/[\x21-\x7e]*$/.test(value)
      ? JSON.stringify(value)
      : "'https://groups-api.dataporten.no/groups'"
  return new InvalidOptionError(
    '(options)',
    `${factory}() takes an options object, not ${Array.isArray(value) ? 'an array' : `a ${typeof value}`}: ${factory}({ baseUrl: ${meant} })`,
  )
}

/**
 * Checks that `value` is an http: or https: URL without credentials, query or fragment,
 * and returns it without a trailing slash.
 */
export function baseUrlOption(name: string, value: unknown): string {
  if (value === '') {
    throw new InvalidOptionError(
      name,
      `is empty: give the group service's address, such as ${BASE_URL_EXAMPLES} (an environment variable that is empty?)`,
    )
  }
  if (typeof value !== 'string') throw new InvalidOptionError(name, `must be a URL string, got ${describe(value)}`)
  let url: URL
  try {
    url = new URL(value)
  } catch {
    throw new InvalidOptionError(name, 'is not a valid URL')
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new InvalidOptionError(name, `must use http: or https:, got ${url.protocol}`)
  }
  if (url.username !== '' || url.password !== '') throw new InvalidOptionError(name, 'must not contain credentials')
  if (url.search !== '' || url.hash !== '') throw new InvalidOptionError(name, 'must not contain a query or fragment')
  return url.href.replace(/\/+$/, '')
}

/**
 * Throws {@link InvalidOptionError} for the first own key of `options` that is not in
 * `knownKeys`, naming it (after `where`, such as `'cache.'`) and suggesting the known key
 * it most likely misspells: a misspelt option silently ignored is a setting not in force.
 *
 * @example
 * ```ts
 * rejectUnknownKeys('', { lockTTL: 100 }, ['lockTtl', 'timeout'])
 * // InvalidOptionError: Invalid option lockTTL: is not an option (did you mean lockTtl?)
 * ```
 */
export function rejectUnknownKeys(where: string, options: object, knownKeys: readonly string[]): void {
  for (const key of Object.keys(options)) {
    if (knownKeys.includes(key)) continue
    const near = nearestKey(key, knownKeys)
    throw new InvalidOptionError(`${where}${key}`, `is not an option${near === undefined ? '' : ` (did you mean ${near}?)`}`)
  }
}

/**
 * The known key `key` most likely misspells (equal but for case, else the nearest within
 * two edits), or `undefined`: the suggestion of {@link rejectUnknownKeys}, also used for
 * the demo's flags.
 *
 * @example
 * ```ts
 * nearestKey('lockTTL', ['lockTtl', 'prefix']) // 'lockTtl'
 * ```
 */
export function nearestKey(key: string, knownKeys: readonly string[]): string | undefined {
  const lower = key.toLowerCase()
  let best: string | undefined
  let bestDistance = 3
  for (const name of knownKeys) {
    const d = editDistance(name.toLowerCase(), lower)
    if (d < bestDistance) {
      best = name
      bestDistance = d
    }
  }
  return best
}

/** Levenshtein distance, for suggestions only (option names are short). */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i)
  for (let i = 1; i <= a.length; i++) {
    const row = [i]
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1)
      row[j] = Math.min((previous[j] ?? 0) + 1, (row[j - 1] ?? 0) + 1, substitution)
    }
    previous = row
  }
  return previous[b.length] ?? 0
}

/** A short, safe description of a value for an error message (never the value of a string). */
function describe(value: unknown): string {
  if (value === null) return 'null'
  if (typeof value === 'number') return String(value)
  if (Array.isArray(value)) return 'an array'
  return typeof value
}
