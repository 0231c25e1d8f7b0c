/**
 * Which hosts count as the loopback interface, where plain `http:` is allowed: bearer
 * tokens and session cookies sent there never leave the machine. One rule for the whole
 * package: the groups client, the OAuth client, the CLI's listen address and the gate.
 *
 * @module
 */

/**
 * Whether `hostname` names the loopback interface: `localhost`, an address in 127.0.0.0/8,
 * or `::1` (with or without brackets, as `URL.hostname` or a `Host` header give it), in any
 * case and with or without the trailing dot of a fully qualified name (`localhost.`).
 *
 * Names under `.localhost` (`wiki.localhost`) are not loopback here, although RFC 6761 lets
 * resolvers send them there: glibc's resolver asks DNS for them, so a token or a cookie sent
 * to one may leave the machine, which is exactly what plain `http:` must not allow.
 *
 * @example
 * ```ts
 * isLoopbackHost(new URL('http://127.0.0.1:3000').hostname) // true
 * isLoopbackHost('[::1]')                                    // true
 * isLoopbackHost('wiki.localhost')                           // false
 * isLoopbackHost('example.org')                              // false
 * ```
 */
export function isLoopbackHost(hostname: string): boolean {
  const lower = hostname.toLowerCase()
  const bare = lower.startsWith('[') && lower.endsWith(']') ? lower.slice(1, -1) : lower
  const host = bare.endsWith('.') ? bare.slice(0, -1) : bare
  if (host === 'localhost' || host === '::1') return true
  // The URL parser has already normalised IPv4 forms such as `127.1` to dotted quads.
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host)
}
