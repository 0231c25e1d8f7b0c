/**
 * The `iss` of a JWT access token, read without verifying it: only to choose which group
 * service the token goes to. The chosen service then judges the token itself, so a forged
 * `iss` buys nothing but a 401 from the service it names.
 *
 * @module
 */

// A JWT access token of a real provider is a few kilobytes at most; a longer one is not
// decoded (bounded work per request), and then no issuer chooses its service.
const MAX_JWT_LENGTH = 16_384
const BASE64URL = /^[A-Za-z0-9_-]+$/

/**
 * The `iss` claim of `token` when it is a JWT (three base64url parts) whose payload is a
 * JSON object with a string `iss`; `undefined` for an opaque token or anything else.
 * Never throws, and never verifies (see the module's note).
 *
 * @example
 * ```ts
 * issuerOf('eyJhbGciOiJub25lIn0.eyJpc3MiOiJodHRwczovL2F1dGguZXhhbXBsZS5vcmcifQ.') // 'https://auth.example.org'
 * ```
 */
export function issuerOf(token: string): string | undefined {
  if (token.length > MAX_JWT_LENGTH) return undefined
  const first = token.indexOf('.')
  const second = first < 0 ? -1 : token.indexOf('.', first + 1)
  if (second < 0 || token.indexOf('.', second + 1) >= 0) return undefined
  const payload = token.slice(first + 1, second)
  if (!BASE64URL.test(payload)) return undefined
  try {
    const bytes = Uint8Array.from(atob(payload.replace(/-/g, '+').replace(/_/g, '/')), (c) => c.charCodeAt(0))
    const claims: unknown = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes))
    if (typeof claims !== 'object' || claims === null) return undefined
    const { iss } = claims as { iss?: unknown }
    return typeof iss === 'string' ? iss : undefined
  } catch {
    return undefined
  }
}
