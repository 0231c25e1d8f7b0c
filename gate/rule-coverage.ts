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
import type { GateRule } from './config-types.js'

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

/** Memoised over positions: `(i, j) => whether outer[i..] covers inner[j..]`, for an inner sequence of `innerLength`. */
function coverage(innerLength: number, step: (i: number, j: number, again: (i: number, j: number) => boolean) => boolean): boolean {
  const memo = new Map<number, boolean>()
  const again = (i: number, j: number): boolean => {
    const key = i * (innerLength + 1) + j
    let known = memo.get(key)
    if (known === undefined) {
      known = step(i, j, again)
      memo.set(key, known)
    }
    return known
  }
  return again(0, 0)
}

/** Whether segment pattern `outer` (with `*`: any characters) matches every segment `inner` matches. */
function segmentCovers(outer: string, inner: string): boolean {
  if (outer === inner || outer === '*') return true
  return coverage(inner.length, (i, j, again) => {
    const a = outer[i]
    const b = inner[j]
    if (b === undefined) return a === undefined || (a === '*' && again(i + 1, j))
    if (a === undefined) return false
    if (b === '*') return a === '*' && (again(i, j + 1) || again(i + 1, j))
    if (a === '*') return again(i + 1, j) || again(i, j + 1)
    return a === b && again(i + 1, j + 1)
  })
}

function segments(glob: string | undefined): readonly string[] {
  return glob === undefined ? ['**'] : glob.split('/').slice(1)
}

/** Whether path glob `outer` (`undefined`: every path) matches every path `inner` matches. */
export function pathCovers(outer: string | undefined, inner: string | undefined): boolean {
  const a = segments(outer)
  const b = segments(inner)
  return coverage(b.length, (i, j, again) => {
    const x = a[i]
    const y = b[j]
    if (y === undefined) return x === undefined || (x === '**' && again(i + 1, j))
    if (x === undefined) return false
    if (y === '**') return x === '**' && (again(i, j + 1) || again(i + 1, j))
    if (x === '**') return again(i + 1, j) || again(i, j + 1)
    return segmentCovers(x, y) && again(i + 1, j + 1)
  })
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
  return hostCovers(outer.host, inner.host) && methodsCover(outer.methods, inner.methods) && pathCovers(outer.path, inner.path)
}
