/**
 * The one reading of an original request's path that rules are matched against. A path
 * that two programs could read differently (the gate and the app behind the proxy) is
 * refused, never matched loosely: that is how a guard in front of an app is bypassed.
 *
 * @module
 */

/** Encoded characters that change a path's structure when an app decodes them. */
const ENCODED_SEPARATOR = /%(?:2f|5c|00)/i
// Control characters, backslash, and `;` (path parameters: `/admin;x/` is `/admin/` to some servers).
const AMBIGUOUS = /[\u0000-\u001f\u007f\\;]/
const DOT_SEGMENT = /(?:^|\/)\.{1,2}(?:\/|$)/

/**
 * The path of `target` (a request target: a path with an optional query and fragment)
 * percent-decoded once, or `undefined` when it must be refused: not starting with `/`,
 * `.` or `..` segments (also encoded), an empty segment (`//`), an encoded `/`, `\` or
 * NUL, a `%` left after decoding (double encoding), invalid encoding or UTF-8, control
 * characters, `\` or `;`.
 *
 * @example
 * ```ts
 * normalisePath('/docs/a%20b?x=1') // '/docs/a b'
 * normalisePath('/admin/../public') // undefined
 * normalisePath('/%2e%2e/admin')    // undefined
 * ```
 */
export function normalisePath(target: string): string | undefined {
  const end = target.search(/[?#]/)
  const raw = end === -1 ? target : target.slice(0, end)
  if (!raw.startsWith('/') || raw.length > 8192) return undefined
  if (ENCODED_SEPARATOR.test(raw)) return undefined
  let decoded: string
  try {
    decoded = decodeURIComponent(raw)
  } catch {
    return undefined
  }
  if (decoded.includes('%') || AMBIGUOUS.test(decoded) || decoded.includes('//') || DOT_SEGMENT.test(decoded)) return undefined
  return decoded
}

/**
 * A host as rules see it: lower-case, without port; `undefined` when it is not a host name
 * or an IP address.
 *
 * @example
 * ```ts
 * normaliseHost('Wiki.Example.org:8443') // 'wiki.example.org'
 * ```
 */
export function normaliseHost(host: string | undefined): string | undefined {
  if (host === undefined) return undefined
  const text = host.trim().toLowerCase()
  const v6 = /^(\[[0-9a-f:.]+\])(?::\d{1,5})?$/.exec(text)
  if (v6 !== null) return v6[1]
  const match = /^([a-z0-9_](?:[a-z0-9_.-]{0,252}[a-z0-9_])?)\.?(?::\d{1,5})?$/.exec(text)
  if (match === null || (match[1] as string).includes('..')) return undefined
  return match[1]
}
