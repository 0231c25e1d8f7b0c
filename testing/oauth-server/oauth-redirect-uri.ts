/**
 * Which redirect URIs a client may be sent to: the authorization endpoint's check, and the
 * end-session endpoint's for `post_logout_redirect_uri`.
 *
 * @module
 */

/**
 * Whether `requested` is one of the client's registered redirect URIs. An exact match,
 * except that for loopback IP redirect URIs any port matches (RFC 8252 section 7.3), so
 * apps and tests listening on a random port can use the demo client; and a registered
 * loopback `http://127.0.0.1/*` (or `localhost`) takes any path and query on that host, at
 * any port (the emulator's demo client has both: any app on the developer's machine can
 * sign in; no other host can).
 */
export function redirectUriMatches(registered: readonly string[], requested: string): boolean {
  if (registered.includes(requested)) return true
  let want: URL
  try {
    want = new URL(requested)
  } catch {
    return false
  }
  // Only the port may differ, and only on loopback: user info (`http://x@127.0.0.1/`) or a
  // fragment never matches loosely.
  if (want.protocol !== 'http:' || !isLoopback(want.hostname) || want.hash !== '' || want.username !== '' || want.password !== '')
    return false
  return registered.some((candidate) => {
    try {
      const have = new URL(candidate)
      if (have.protocol !== want.protocol || have.hostname !== want.hostname) return false
      if (have.pathname === '/*' && have.search === '' && isLoopback(have.hostname)) return true
      return have.pathname === want.pathname && have.search === want.search
    } catch {
      return false
    }
  })
}

function isLoopback(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(hostname)
}
