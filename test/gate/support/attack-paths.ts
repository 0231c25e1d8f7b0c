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
]
