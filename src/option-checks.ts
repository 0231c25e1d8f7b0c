/**
 * Checks for factory options: each throws {@link InvalidOptionError} naming the option,
 * so invalid configuration fails at creation, never on some later request.
 *
 * @module
 */
import { InvalidOptionError } from './errors.js'

/**
 * The default and the range of an integer option.
 */
export interface IntegerBounds {
  readonly fallback: number
  readonly min: number
  readonly max: number
}

/**
 * Returns `value`, or `bounds.fallback` when it is undefined, after checking it is an
 * integer within `[bounds.min, bounds.max]`.
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
 */
export function functionOption<F extends (...args: never[]) => unknown>(name: string, value: unknown, fallback: F): F {
  if (value === undefined) return fallback
  if (typeof value !== 'function') throw new InvalidOptionError(name, `must be a function, got ${describe(value)}`)
  return value as F
}

/**
 * Checks that `value` is a plain object (or undefined) and returns it, or `{}`.
 */
export function objectOption<T extends object>(name: string, value: unknown): Partial<T> {
  if (value === undefined) return {}
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new InvalidOptionError(name, `must be an object, got ${describe(value)}`)
  }
  return value
}

/**
 * Checks that `value` is an http: or https: URL without credentials, query or fragment,
 * and returns it without a trailing slash.
 */
export function baseUrlOption(name: string, value: unknown): string {
  if (typeof value !== 'string' || value.length === 0) {
    throw new InvalidOptionError(name, `must be a URL string, got ${describe(value)}`)
  }
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

/** A short, safe description of a value for an error message (never the value of a string). */
function describe(value: unknown): string {
  if (value === null) return 'null'
  if (typeof value === 'number') return String(value)
  if (Array.isArray(value)) return 'an array'
  return typeof value
}
