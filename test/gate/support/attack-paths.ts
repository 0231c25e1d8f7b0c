/**
 * Paths a backend may read as `/admin/x` while a naive check reads something else: each
 * must be refused (403) before any rule, directly and through every proxy. A non-admin
 * asks for them, so a path that fell to the catch-all signed-in rule would pass (200).
 */
export const UNICODE_AND_TRAILING_PATHS: readonly (readonly [path: string, why: string])[] = [
  ['/admin%C2%85/x', 'NEL (U+0085), a C1 control some backends trim'],
  ['/admin%C2%9F/x', 'U+009F, the last C1 control'],
  ['/admin%C2%80/x', 'U+0080, the first C1 control'],
  ['/admin\u0085/x', 'a raw 0x85 byte'],
  ['/admin%E2%80%A8/x', 'LINE SEPARATOR (U+2028)'],
  ['/admin%E2%80%A9/x', 'PARAGRAPH SEPARATOR (U+2029)'],
  ['/admin%E2%80%8B/x', 'ZERO WIDTH SPACE (U+200B), a format character'],
  ['/admin%EF%BB%BF/x', 'BOM (U+FEFF), a format character'],
  ['/admin%E2%80%AE/x', 'RIGHT-TO-LEFT OVERRIDE (U+202E)'],
  ['/admin%20/x', 'a segment ending in a space'],
  ['/admin./x', 'a segment ending in a dot'],
  ['/admin%2E/x', 'an encoded trailing dot'],
  ['/admin.', 'a last segment ending in a dot'],
  ['/admin%C2%A0/x', 'a segment ending in NO-BREAK SPACE (U+00A0), which Python strip() drops'],
  ['/admin%E3%80%80/x', 'a segment ending in IDEOGRAPHIC SPACE (U+3000)'],
  ['/%20admin/x', 'a segment starting with a space'],
  ['/admin%EF%BC%8Fx', 'FULLWIDTH SOLIDUS (U+FF0F), "/" after NFKC'],
  ['/public/%EF%BC%8E%EF%BC%8E/admin/x', 'FULLWIDTH FULL STOPs (U+FF0E), ".." after NFKC'],
  ['/admin%EF%BC%8E/x', 'a trailing FULLWIDTH FULL STOP, a trailing "." after NFKC'],
]

/**
 * Paths that read, after compatibility normalisation (NFKC) as some apps apply, as a path
 * another rule guards: refused by the check (both readings must find one rule), not by
 * normalisePath alone.
 */
export const NORMALISED_TO_ANOTHER_RULE: readonly (readonly [path: string, why: string])[] = [
  ['/%EF%BD%81dmin/x', 'FULLWIDTH "a" (U+FF41): "/admin/x" after NFKC'],
  ['/%F0%9D%90%9Admin/x', 'MATHEMATICAL BOLD SMALL A (U+1D41A): "/admin/x" after NFKC'],
]

/** Every path a check must refuse, for the tests that ask the gate (directly or through a proxy). */
export const ATTACK_PATHS = [...UNICODE_AND_TRAILING_PATHS, ...NORMALISED_TO_ANOTHER_RULE]
