/**
 * Which hosts count as the loopback interface, where plain `http:` is allowed: bearer
 * tokens sent there never leave the machine.
 *
 * @module
 */

/**
 * Whether `hostname` (as `URL.hostname` gives it) names the loopback interface:
 * `localhost`, an address in 127.0.0.0/8, or `[::1]`.
 *
 * @example
 * ```ts
 * isLoopbackHost(new URL('http://127.0.0.1:3000').hostname) // true
 * isLoopbackHost('example.org')                              // false
 * ```
 */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/\.$/, '')
  if (host === 'localhost' || host === '[::1]') return true
  // The URL parser has already normalised IPv4 forms such as `127.1` to dotted quads.
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host)
}
