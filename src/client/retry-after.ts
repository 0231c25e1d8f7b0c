/**
 * Parsing of the `Retry-After` response header (RFC 9110, section 10.2.3).
 *
 * @module
 */

/**
 * Longest wait ever derived from a `Retry-After` header, in seconds (one hour): a hostile
 * or broken upstream cannot make clients stay away for longer.
 */
export const MAX_RETRY_AFTER_SECONDS = 3600

const DELTA_SECONDS = /^\d+$/
const DAY = '(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)'
const LONG_DAY = '(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)'
const MONTH = '(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)'
const TIME = '\\d{2}:\\d{2}:\\d{2}'
// Date.parse alone accepts almost anything ("1" is the year 2001), so only the three
// HTTP-date forms RFC 9110 names are handed to it.
const HTTP_DATE = new RegExp(
  [
    `^${DAY}, \\d{2} ${MONTH} \\d{4} ${TIME} GMT$`, // IMF-fixdate
    `^${LONG_DAY}, \\d{2}-${MONTH}-\\d{2} ${TIME} GMT$`, // obsolete RFC 850
    `^${DAY} ${MONTH} [ \\d]\\d ${TIME} \\d{4}$`, // obsolete asctime
  ].join('|'),
)

/**
 * Parses a `Retry-After` header value (delta-seconds or an HTTP-date) into whole seconds
 * from `now`, clamped to `[0, 3600]`. Returns `undefined` when the header is absent,
 * repeated, or not in one of the forms RFC 9110 allows.
 *
 * @param value - The header value as undici reports it (a repeated header is an array).
 * @param now - The current time in ms since the epoch; defaults to `Date.now()`.
 */
export function parseRetryAfter(value: string | readonly string[] | undefined, now: number = Date.now()): number | undefined {
  if (typeof value !== 'string') return undefined
  const text = value.trim()
  if (DELTA_SECONDS.test(text)) return clamp(Number(text))
  if (!HTTP_DATE.test(text)) return undefined
  // asctime has no zone; RFC 9110 says it is UTC, while Date.parse would read local time.
  const at = Date.parse(text.endsWith('GMT') ? text : `${text} GMT`)
  if (Number.isNaN(at)) return undefined
  return clamp(Math.ceil((at - now) / 1000))
}

function clamp(seconds: number): number {
  return Math.min(MAX_RETRY_AFTER_SECONDS, Math.max(0, seconds))
}
