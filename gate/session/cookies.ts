/**
 * Reading a cookie from a request and writing `Set-Cookie` lines.
 *
 * @module
 */

/**
 * The value of the one cookie named `name` in the request's `Cookie` header(s), or
 * `undefined` when there is none or more than one: a second cookie of the same name is one
 * a sibling subdomain (or a script there) tossed in, and which of the two a browser sends
 * first is not the gate's to guess, so neither is read.
 *
 * @example
 * ```ts
 * readCookie('a=1; voot-gate=xyz', 'voot-gate') // 'xyz'
 * readCookie('voot-gate=xyz; voot-gate=abc', 'voot-gate') // undefined
 * ```
 */
export function readCookie(header: string | readonly string[] | undefined, name: string): string | undefined {
  if (header === undefined) return undefined
  const lines = typeof header === 'string' ? [header] : header
  let found: string | undefined
  for (const line of lines) {
    for (const part of line.split(';')) {
      const eq = part.indexOf('=')
      if (eq === -1) continue
      if (part.slice(0, eq).trim() !== name) continue
      if (found !== undefined) return undefined
      let value = part.slice(eq + 1).trim()
      if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1)
      found = value
    }
  }
  return found
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
