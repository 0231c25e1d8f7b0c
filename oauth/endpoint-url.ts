/**
 * The rule for every address the client sends a request to: HTTPS, or plain HTTP on
 * loopback (127.0.0.0/8, `::1`, `localhost`) for development against the emulator.
 * Tokens, codes and secrets travel to these addresses.
 *
 * @module
 */
import { isLoopbackHost } from '../src/internal.js'

export { isLoopbackHost }

/** Why `value` cannot be an endpoint (not HTTPS or loopback HTTP, credentials, a fragment), or `undefined` when it can. */
export function endpointProblem(value: unknown): string | undefined {
  if (typeof value !== 'string' || value === '') return 'must be a URL string'
  if (!URL.canParse(value)) return 'is not a valid URL'
  const url = new URL(value)
  if (url.protocol === 'http:' && !isLoopbackHost(url.hostname)) return 'must use https: (plain http: is only allowed on loopback)'
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return `must use https:, got ${url.protocol}`
  if (url.username !== '' || url.password !== '') return 'must not contain credentials'
  // RFC 6749 section 3.1: no fragment on endpoints; a query is allowed and kept.
  return url.hash !== '' || value.includes('#') ? 'must not contain a fragment' : undefined
}
