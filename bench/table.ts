/**
 * The one table printed at the end of a run (Markdown, so it can go into BENCHMARKS.md).
 *
 * @module
 */

/** One row of the table. */
export interface Row {
  /** The figure's number in issue 5 (1–8). */
  readonly figure: string
  readonly measure: string
  readonly result: string
  readonly target: string
  /** `true` met, `false` missed, `undefined` no target. */
  readonly met: boolean | undefined
}

/** Renders rows as a Markdown table with aligned columns. */
export function renderTable(rows: readonly Row[]): string {
  const cells = [
    ['#', 'measure', 'result', 'target', 'met'],
    ...rows.map((row) => [row.figure, row.measure, row.result, row.target, row.met === undefined ? '' : row.met ? 'yes' : 'NO']),
  ]
  const widths = cells[0]?.map((_, column) => Math.max(...cells.map((line) => (line[column] ?? '').length))) ?? []
  const line = (values: readonly string[]): string => `| ${values.map((value, i) => value.padEnd(widths[i] ?? 0)).join(' | ')} |`
  const [header, ...body] = cells
  return [line(header ?? []), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...body.map(line)].join('\n')
}
