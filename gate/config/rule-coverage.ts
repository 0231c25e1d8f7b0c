/**
 * Whether one rule matches every request another matches: the test behind "a rule that no
 * request can reach is a problem". Rules are tried in order and the first match wins, so a
 * rule whose every request an earlier rule already takes never decides anything; that is
 * almost always a mistake (an over-broad rule put first), and one that widens access when
 * the unreachable rule was the stricter one.
 *
 * The test is sound: it says "covers" only when it is sure. Paths are compared as globs
 * (`*` one segment, `**` any number), segment by segment, and within a segment `*` by `*`,
 * without listing paths.
 *
 * @module
 */
import type { GateRule } from './types.js'
import { PARAM_ALPHABET, segmentParam } from './rule-params.js'

/** Whether host pattern `outer` (a rule's `host`; `undefined`: any) names every host `inner` names. */
function hostCovers(outer: string | undefined, inner: string | undefined): boolean {
  if (outer === undefined) return true
  if (inner === undefined) return false
  if (!outer.startsWith('*.')) return outer === inner
  const suffix = outer.slice(1)
  // `*.example.org` covers `a.example.org`, `*.a.example.org`, and itself.
  if (inner.startsWith('*.')) return inner === outer || inner.slice(1).endsWith(suffix)
  return inner.endsWith(suffix) && inner.length > suffix.length
}

function methodsCover(outer: readonly string[] | undefined, inner: readonly string[] | undefined): boolean {
  if (outer === undefined) return true
  if (inner === undefined) return false
  return inner.every((method) => outer.includes(method))
}

/**
 * Whether the pattern `outer` matches every sequence the pattern `inner` matches, where
 * `wildcard` stands for any run of items (zero or more) and any other item for one item that
 * `itemCovers` decides. The same test serves segments (characters, `*`) and paths
 * (segments, `**`). Memoised over the two positions, so it is quadratic, not exponential.
 */
function sequenceCovers<T>(outer: ArrayLike<T>, inner: ArrayLike<T>, wildcard: T, itemCovers: (a: T, b: T) => boolean): boolean {
  const memo = new Map<number, boolean>()
  const covers = (i: number, j: number): boolean => {
    const key = i * (inner.length + 1) + j
    let known = memo.get(key)
    if (known === undefined) {
      known = step(i, j)
      memo.set(key, known)
    }
    return known
  }
  const step = (i: number, j: number): boolean => {
    const x = i < outer.length ? outer[i] : undefined
    const y = j < inner.length ? inner[j] : undefined
    if (y === undefined) return x === undefined || (x === wildcard && covers(i + 1, j))
    if (x === undefined) return false
    // Only a wildcard matches every run a wildcard does.
    if (y === wildcard) return x === wildcard && (covers(i, j + 1) || covers(i + 1, j))
    if (x === wildcard) return covers(i + 1, j) || covers(i, j + 1)
    return itemCovers(x, y) && covers(i + 1, j + 1)
  }
  return covers(0, 0)
}

/** A rule's parameter narrowings, by name (`params`), for the segments that bind them. */
type Narrowings = Readonly<Record<string, string>> | undefined

/**
 * Whether segment pattern `outer` (with `*`: any characters; `{name}`: a parameter, see
 * rule-params.ts) matches every segment `inner` matches. A parameter covers the same
 * parameter narrowed alike, and a literal its alphabet and narrowing take; it is covered by
 * `*`; anything else is not settled here, and counts as not covered (a shadow missed,
 * never a rule refused wrongly).
 */
function segmentCovers(outer: string, inner: string, outerParams: Narrowings, innerParams: Narrowings): boolean {
  const outerParam = segmentParam(outer)
  const innerParam = segmentParam(inner)
  if (outerParam !== undefined) {
    const narrowing = outerParams?.[outerParam]
    if (innerParam !== undefined) return narrowing === undefined || narrowing === innerParams?.[innerParam]
    if (/[*{}]/.test(inner) || !PARAM_ALPHABET.test(inner)) return false
    return narrowing === undefined || new RegExp(`^(?:${narrowing})$`, 'u').test(inner)
  }
  if (innerParam !== undefined) return outer === '*'
  return outer === inner || outer === '*' || sequenceCovers(outer, inner, '*', (a, b) => a === b)
}

function segments(glob: string | undefined): readonly string[] {
  return glob === undefined ? ['**'] : glob.split('/').slice(1)
}

/** Whether path glob `outer` (`undefined`: every path) matches every path `inner` matches. */
export function pathCovers(
  outer: string | undefined,
  inner: string | undefined,
  outerParams?: Narrowings,
  innerParams?: Narrowings,
): boolean {
  return sequenceCovers(segments(outer), segments(inner), '**', (a, b) => segmentCovers(a, b, outerParams, innerParams))
}

/**
 * Whether rule `outer` matches every request rule `inner` matches (host, methods and path),
 * so that `inner`, placed after it, is never reached.
 *
 * @example
 * ```ts
 * ruleCovers({ path: '/**', allow: 'signed-in' }, { path: '/admin/**', require: { group: 'fc:org:example.org' } }) // true
 * ruleCovers({ path: '/admin/*', allow: 'signed-in' }, { path: '/admin/**', allow: 'anyone' })                     // false
 * ```
 */
export function ruleCovers(outer: GateRule, inner: GateRule): boolean {
  return (
    hostCovers(outer.host, inner.host) &&
    methodsCover(outer.methods, inner.methods) &&
    pathCovers(outer.path, inner.path, outer.params, inner.params)
  )
}
