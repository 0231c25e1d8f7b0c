/**
 * The one reading of an original request's path that rules are matched against. A path
 * that two programs could read differently (the gate and the app behind the proxy) is
 * refused, never matched loosely: that is how a guard in front of an app is bypassed.
 *
 * @module
 */

/** Encoded characters that change a path's structure when an app decodes them. */
const ENCODED_SEPARATOR = /%(?:2f|5c|00)/i
// Control characters (C0, DEL and C1: a backend may trim NEL, U+0085, or read it as a line
// end), format characters (zero-width, bidi, BOM: invisible, and stripped by some
// normalisers), line and paragraph separators, backslash, and `;` (path parameters:
// `/admin;x/` is `/admin/` to some servers).
const AMBIGUOUS = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\\;]/u
const DOT_SEGMENT = /(?:^|\/)\.{1,2}(?:\/|$)/
// A segment ending in a space or a dot: Windows and IIS drop them (`/admin.` and `/admin%20`
// are `/admin` there), and a later rule would match what the app serves as a guarded path.
const TRAILING_SPACE_OR_DOT = /[ .](?:\/|$)/
// A byte above 0x7f sent raw: Node reads header values as latin1, so such a path is read
// differently from an app that reads UTF-8. Only percent-encoded UTF-8 is one reading.
const RAW_NON_ASCII = /[^\u0000-\u007f]/

/**
 * The path of `target` (a request target: a path with an optional query and fragment)
 * percent-decoded once, or `undefined` when it must be refused: not starting with `/`,
 * `.` or `..` segments (also encoded), an empty segment (`//`), an encoded `/`, `\` or
 * NUL, a `%` left after decoding (double encoding), invalid encoding or UTF-8, raw bytes
 * above 0x7f (only percent-encoded UTF-8 has one reading), control characters (C0, DEL,
 * C1), Unicode format characters, line or paragraph separators, `\`, `;`, or a segment
 * ending in a space or a dot (`/admin.`, `/admin%20/x`: Windows servers drop them).
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
  if (ENCODED_SEPARATOR.test(raw) || RAW_NON_ASCII.test(raw)) return undefined
  let decoded: string
  try {
    decoded = decodeURIComponent(raw)
  } catch {
    return undefined
  }
  if (decoded.includes('%') || AMBIGUOUS.test(decoded) || decoded.includes('//') || DOT_SEGMENT.test(decoded)) return undefined
  if (TRAILING_SPACE_OR_DOT.test(decoded)) return undefined
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
