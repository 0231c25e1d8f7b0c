/**
 * Reading the parameters of a redirect back from the authorization server, whatever form
 * the app has them in: `URLSearchParams`, a framework's parsed query object, a whole
 * URL, or a bare query string or fragment.
 *
 * RFC 6749 section 3.1 forbids repeating a parameter; a repeated one is refused rather
 * than guessed at (a second `state` or `code` is a classic injection).
 *
 * This module has no Node.js imports, so the implicit-flow helper works in browsers.
 *
 * @module
 */
import { OAuthValidationError } from './errors.js'

/**
 * The parameters of a redirect back: `URLSearchParams`, an object such as Express's
 * `req.query`, or a string (a whole or relative redirect URL such as `req.originalUrl`,
 * `?query`, `#fragment`, or bare `a=b&c=d`).
 *
 * @example
 * ```ts
 * const input: CallbackParams = req.originalUrl
 * ```
 */
export type CallbackParams = URLSearchParams | Readonly<Record<string, unknown>> | string

/**
 * Reads the parameters into a map of single values.
 *
 * @param part - Which part of a whole URL holds them: `query` (code flow) or `fragment`
 *   (implicit flow).
 * @throws {@link OAuthValidationError} (`response`) for a repeated or non-string parameter.
 *
 * @example
 * ```ts
 * readParams('https://app.example.org/cb?code=abc&state=xyz', 'query').get('state') // 'xyz'
 * ```
 */
export function readParams(input: CallbackParams, part: 'query' | 'fragment'): Map<string, string> {
  if (typeof input === 'string') return fromSearchParams(new URLSearchParams(paramString(input, part)))
  if (input instanceof URLSearchParams) return fromSearchParams(input)
  if (typeof input !== 'object' || input === null) {
    throw new OAuthValidationError('response', 'The redirect parameters must be a string, URLSearchParams or an object')
  }
  const params = new Map<string, string>()
  for (const [name, value] of Object.entries(input)) {
    if (value === undefined) continue
    if (Array.isArray(value)) throw repeated(name)
    if (typeof value !== 'string') {
      throw new OAuthValidationError('response', `The redirect parameter "${safeName(name)}" is not a string`)
    }
    params.set(name, value)
  }
  return params
}

function paramString(input: string, part: 'query' | 'fragment'): string {
  const marker = part === 'query' ? '?' : '#'
  if (input.startsWith(marker)) return input.slice(1)
  let url: URL | undefined
  try {
    url = new URL(input)
  } catch {
    url = undefined
  }
  if (url !== undefined) return (part === 'query' ? url.search : url.hash).slice(1)
  // A relative URL such as Express's `req.originalUrl` ('/callback?code=...'), or bare parameters.
  const withoutFragment = part === 'query' ? (input.split('#')[0] ?? '') : input
  const at = withoutFragment.indexOf(marker)
  return at === -1 ? withoutFragment : withoutFragment.slice(at + 1)
}

function fromSearchParams(search: URLSearchParams): Map<string, string> {
  const params = new Map<string, string>()
  for (const [name, value] of search) {
    if (params.has(name)) throw repeated(name)
    params.set(name, value)
  }
  return params
}

function repeated(name: string): OAuthValidationError {
  return new OAuthValidationError('response', `The redirect parameter "${safeName(name)}" appears more than once`)
}

/** A parameter name fit for a message: short, printable ASCII only. */
function safeName(name: string): string {
  return name.replace(/[^\x21-\x7e]/g, '?').slice(0, 40)
}
