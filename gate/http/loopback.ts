/**
 * Which host names are this machine: where plain http is acceptable (a `Secure` cookie
 * cannot be set there) and where the gate may listen without `trustedProxies`.
 *
 * @module
 */

/**
 * Whether `host` (lower-case, without port; IPv6 with or without brackets) is loopback:
 * `localhost`, `*.localhost`, `127.0.0.0/8` or `::1`.
 *
 * @example
 * ```ts
 * isLoopbackHostname('127.0.0.1') // true
 * isLoopbackHostname('wiki.example.org') // false
 * ```
 */
export function isLoopbackHostname(host: string): boolean {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host
  if (bare === 'localhost' || bare.endsWith('.localhost') || bare === '::1') return true
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(bare)
}
