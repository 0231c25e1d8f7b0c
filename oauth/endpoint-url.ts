/**
 * The rule for every address the OAuth client sends a request to: HTTPS, except on the
 * loopback interface (127.0.0.0/8, `::1`, `localhost`), where plain HTTP is allowed so that
 * development against the emulator works. Tokens, codes and client secrets travel to
 * these addresses, so plain HTTP to any other host is refused.
 *
 * @module
 */

export { isLoopbackHost } from '../src/client/loopback-host.js'
import { isLoopbackHost } from '../src/client/loopback-host.js'

/**
 * Why `value` cannot be used as an endpoint the client calls, or `undefined` when it can:
 * an absolute `https:` URL (or `http:` on loopback) without credentials or fragment
 * (RFC 6749 section 3.1 forbids a fragment on endpoints; a query is allowed and kept).
 *
 * @example
 * ```ts
 * endpointProblem('http://auth.example.org/token') // 'must use https: (plain http: is only allowed on loopback)'
 * ```
 */
export function endpointProblem(value: unknown): string | undefined {
  if (typeof value !== 'string' || value === '') return 'must be a URL string'
  let url: URL
  try {
    url = new URL(value)
  } catch {
    return 'is not a valid URL'
  }
  if (url.protocol === 'http:') {
    if (!isLoopbackHost(url.hostname)) return 'must use https: (plain http: is only allowed on loopback)'
  } else if (url.protocol !== 'https:') {
    return `must use https:, got ${url.protocol}`
  }
  if (url.username !== '' || url.password !== '') return 'must not contain credentials'
  if (url.hash !== '' || value.includes('#')) return 'must not contain a fragment'
  return undefined
}
