/**
 * A bounded pool of the short strings that recur in every user's answers: group ids,
 * group types, role names, group names. Thousands of users of one organisation share
 * the same few hundred groups; without a pool, every cached answer holds its own copy of
 * each string, and those copies are much of what a cache entry weighs (BENCHMARKS.md).
 *
 * Only values under the keys in {@link POOLED_KEYS} are pooled: they describe groups, not
 * people (member names, titles and affiliations are left alone).
 *
 * @module
 */

/**
 * The JSON keys whose string values are pooled.
 */
export const POOLED_KEYS: ReadonlySet<string> = new Set(['id', 'parent', 'type', 'basic', 'displayName'])

/** Longest string pooled; longer ones are rare and would crowd the pool. */
const MAX_POOLED_LENGTH = 256

/** Most strings kept; the pool starts over when full, so it never grows past this. */
const MAX_POOLED = 8192

const pool = new Map<string, string>()

/**
 * The pooled copy of `value` (the first one seen), or `value` itself when it is not
 * worth pooling.
 */
export function pooled(value: string): string {
  if (value.length > MAX_POOLED_LENGTH) return value
  const known = pool.get(value)
  if (known !== undefined) return known
  if (pool.size >= MAX_POOLED) pool.clear()
  pool.set(value, value)
  return value
}
