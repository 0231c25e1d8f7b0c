/**
 * Plain-text layout for the CLI: aligned tables and "label  value" lists.
 *
 * @module
 */
import { printable } from './terminal-text.js'

/**
 * Lays out rows under headers in columns separated by two spaces, every cell made
 * {@link printable}. The last column is not padded, so lines carry no trailing blanks.
 */
export function formatTable(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const lines = [headers, ...rows].map((row) => headers.map((_, index) => printable(row[index] ?? '')))
  // Widths in code points, not UTF-16 units, so that "Lærer" and "Overingeniør" line up.
  const length = (text: string): number => Array.from(text).length
  const widths = headers.map((_, index) => Math.max(...lines.map((cells) => length(cells[index] ?? ''))))
  return lines
    .map((cells) => {
      const padded = cells.map((cell, index) => cell + ' '.repeat((widths[index] ?? 0) - length(cell)))
      return `${padded.join('  ').trimEnd()}\n`
    })
    .join('')
}

/**
 * Lays out label/value pairs, labels aligned, each line indented by two spaces.
 */
export function formatFields(fields: readonly (readonly [string, string])[]): string {
  const width = Math.max(0, ...fields.map(([label]) => label.length))
  return fields.map(([label, value]) => `  ${label.padEnd(width)}  ${printable(value)}\n`).join('')
}
