/**
 * Reading the expiry of a JWT access token, so that no cached answer outlives its token.
 *
 * User access tokens of the real service are opaque; JWT access tokens come from RFC 8693
 * token exchange and live about five minutes. The claim is only read, not verified: it
 * can only shorten how long an answer is cached, never grant anything.
 *
 * @module
 */
import { decodeJwt } from 'jose'

/**
 * The `exp` of a JWT in ms since the epoch, or `undefined` for an opaque token, a JWT
 * without a numeric `exp`, or anything that does not decode.
 */
export function tokenExpiry(token: string): number | undefined {
  // Cheap pre-check: a compact JWS has exactly two dots.
  const first = token.indexOf('.')
  if (first < 0 || token.indexOf('.', first + 1) < 0) return undefined
  try {
    const { exp } = decodeJwt(token)
    return typeof exp === 'number' && Number.isFinite(exp) ? exp * 1000 : undefined
  } catch {
    return undefined
  }
}
