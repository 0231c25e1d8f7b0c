/**
 * Suggestions for misspelt configuration keys.
 *
 * @module
 */

/** Edit distance (insertions, deletions, substitutions, transpositions); keys are short. */
function distance(a: string, b: string): number {
  const rows: number[][] = []
  for (let i = 0; i <= a.length; i++) {
    rows.push([i])
  }
  for (let j = 1; j <= b.length; j++) (rows[0] as number[])[j] = j
  for (let i = 1; i <= a.length; i++) {
    const row = rows[i] as number[]
    const above = rows[i - 1] as number[]
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      let best = Math.min((above[j] as number) + 1, (row[j - 1] as number) + 1, (above[j - 1] as number) + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        best = Math.min(best, ((rows[i - 2] as number[])[j - 2] as number) + 1)
      }
      row[j] = best
    }
  }
  return (rows[a.length] as number[])[b.length] as number
}

/**
 * The known name `given` most likely misspells, or `undefined` when none is close: case
 * is ignored, and a name is close when at most a third of it (at least one, at most three
 * edits) differs.
 *
 * @example
 * ```ts
 * didYouMean('requrie', ['id', 'host', 'path', 'methods', 'allow', 'require']) // 'require'
 * ```
 */
export function didYouMean(given: string, known: readonly string[]): string | undefined {
  const wanted = given.toLowerCase()
  let best: string | undefined
  let bestDistance = Infinity
  for (const name of known) {
    const d = distance(wanted, name.toLowerCase())
    const limit = Math.min(3, Math.max(1, Math.floor(name.length / 3)))
    if (d <= limit && d < bestDistance) {
      best = name
      bestDistance = d
    }
  }
  return best
}
