/**
 * Reading a cookie from a request and writing `Set-Cookie` lines.
 *
 * @module
 */

/**
 * The value of the first cookie named `name` in the request's `Cookie` header(s), or
 * `undefined`.
 *
 * @example
 * ```ts
 * readCookie('a=1; voot-gate=xyz', 'voot-gate') // 'xyz'
 * ```
 */
export function readCookie(header: string | readonly string[] | undefined, name: string): string | undefined {
  if (header === undefined) return undefined
  const lines = typeof header === 'string' ? [header] : header
  for (const line of lines) {
    for (const part of line.split(';')) {
      const eq = part.indexOf('=')
      if (eq === -1) continue
      if (part.slice(0, eq).trim() !== name) continue
      let value = part.slice(eq + 1).trim()
      if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1)
      return value
    }
  }
  return undefined
}

/** Attributes of a `Set-Cookie` line; `HttpOnly`, `SameSite=Lax` and `Path=/` always. */
export interface CookieAttributes {
  readonly secure: boolean
  /** Seconds; `0` deletes the cookie. */
  readonly maxAge: number
}

/**
 * A `Set-Cookie` value.
 *
 * @example
 * ```ts
 * setCookie('voot-gate', sealed, { secure: false, maxAge: 28_800 })
 * ```
 */
export function setCookie(name: string, value: string, attributes: CookieAttributes): string {
  return `${name}=${value}; Path=/; Max-Age=${Math.max(0, Math.floor(attributes.maxAge))}; HttpOnly; SameSite=Lax${attributes.secure ? '; Secure' : ''}`
}
