/**
 * Scopes (RFC 6749 section 3.3): reading them from options and arguments, as lists of
 * scope tokens without duplicates.
 *
 * @module
 */
import { InvalidArgumentError, InvalidOptionError } from '../src/errors.js'

// RFC 6749 appendix A.4: scope-token = 1*NQCHAR
const SCOPE_TOKEN = /^[\x21\x23-\x5B\x5D-\x7E]+$/

/**
 * Reads a scope option: a list of scope tokens.
 *
 * @throws {@link InvalidOptionError} naming the option.
 *
 * @example
 * ```ts
 * readScopesOption('scopes', ['openid', 'groups']) // ['openid', 'groups']
 * ```
 */
export function readScopesOption(name: string, value: unknown): readonly string[] {
  if (!Array.isArray(value) || !value.every((s) => typeof s === 'string' && SCOPE_TOKEN.test(s))) {
    throw new InvalidOptionError(name, 'must be an array of scope tokens (no spaces, quotes or backslashes)')
  }
  return Object.freeze([...new Set(value as string[])])
}

/**
 * Reads a scope argument: a list of scope tokens or a space-separated string of them.
 *
 * @throws {@link InvalidArgumentError}
 *
 * @example
 * ```ts
 * readScopeArgument('openid groups') // ['openid', 'groups']
 * ```
 */
export function readScopeArgument(value: unknown): readonly string[] {
  const list = typeof value === 'string' ? value.split(' ').filter((s) => s !== '') : value
  if (!Array.isArray(list) || !list.every((s) => typeof s === 'string' && SCOPE_TOKEN.test(s))) {
    throw new InvalidArgumentError('scope must be a list of scope tokens or a space-separated string of them')
  }
  return Object.freeze([...new Set(list as string[])])
}
