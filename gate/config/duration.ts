/**
 * Durations in the gate's configuration: strings such as `30s`, `8h`, `1h30m`, `250ms`, or a
 * number of seconds.
 *
 * @module
 */

const UNIT_MS: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }
const PART = /(\d+(?:\.\d+)?)(ms|s|m|h|d)/y

/**
 * Milliseconds for a configured duration, or `undefined` when `value` is not one (a
 * negative number, an unknown unit, a bare number in a string).
 *
 * @example
 * ```ts
 * parseDuration('1h30m') // 5_400_000
 * parseDuration(30)      // 30_000
 * ```
 */
export function parseDuration(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) && value >= 0 ? Math.round(value * 1000) : undefined
  if (typeof value !== 'string') return undefined
  const text = value.trim()
  if (text === '' || text.length > 32) return undefined
  let total = 0
  PART.lastIndex = 0
  while (PART.lastIndex < text.length) {
    const start = PART.lastIndex
    const match = PART.exec(text)
    if (match === null || match.index !== start) return undefined
    total += Number(match[1]) * (UNIT_MS[match[2] as string] as number)
  }
  return Math.round(total)
}
