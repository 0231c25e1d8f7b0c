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
// A segment ending in whitespace or a dot, or starting with whitespace: Windows and IIS drop
// trailing dots and spaces (`/admin.` and `/admin%20` are `/admin` there), and apps that
// trim segments drop Unicode spaces too (Python's strip() drops U+00A0 and U+3000); a later
// rule would match what the app serves as a guarded path.
const EDGE_SPACE_OR_TRAILING_DOT = /(?:^|\/)\p{White_Space}|[\p{White_Space}.](?:\/|$)/u
// The characters that give a path its structure: compatibility normalisation (NFKC, which
// some frameworks and Windows' best-fit mapping apply) must not make any of them, as it
// makes "．．" of U+FF0E into "..", and "／" (U+FF0F) into "/".
const STRUCTURE = /[^/\\;%.]/g
// A byte above 0x7f sent raw: Node reads header values as latin1, so such a path is read
// differently from an app that reads UTF-8. Only percent-encoded UTF-8 is one reading.
const RAW_NON_ASCII = /[^\u0000-\u007f]/

/**
 * The path of `target` (a request target: a path with an optional query and fragment)
 * percent-decoded once, or `undefined` when it must be refused: not starting with `/`,
 * `.` or `..` segments (also encoded), an empty segment (`//`), an encoded `/`, `\` or
 * NUL, a `%` left after decoding (double encoding), invalid encoding or UTF-8, raw bytes
 * above 0x7f (only percent-encoded UTF-8 has one reading), control characters (C0, DEL,
 * C1), Unicode format characters, line or paragraph separators, `\`, `;`, a segment
 * ending in whitespace or a dot or starting with whitespace (`/admin.`, `/admin%20/x`:
 * Windows servers drop them), or a path that compatibility normalisation (NFKC) would give
 * another structure (`/admin／x`, `/．．/x`) or make ambiguous.
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
  if (isAmbiguous(decoded)) return undefined
  if (RAW_NON_ASCII.test(decoded)) {
    const compatible = decoded.normalize('NFKC')
    if (compatible.replace(STRUCTURE, '') !== decoded.replace(STRUCTURE, '') || isAmbiguous(compatible)) return undefined
  }
  return decoded
}

/** Whether a decoded path has a character or a shape two readers could take differently. */
function isAmbiguous(decoded: string): boolean {
  return (
    decoded.includes('%') ||
    AMBIGUOUS.test(decoded) ||
    decoded.includes('//') ||
    DOT_SEGMENT.test(decoded) ||
    EDGE_SPACE_OR_TRAILING_DOT.test(decoded)
  )
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
