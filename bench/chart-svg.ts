/**
 * A horizontal bar chart as hand-written SVG: labelled rows, bars of one or more stacked
 * segments, a value axis with its unit, and vertical reference lines for a baseline and a
 * goal. Small on purpose: the benchmark's charts need nothing more, and no dependency.
 *
 * @module
 */

/** One stacked part of a bar. */
export interface Segment {
  readonly value: number
  /** Index into the palette (and the legend). */
  readonly series: number
}

/** One row of the chart. */
export interface Bar {
  readonly label: string
  readonly segments: readonly Segment[]
  /** Text after the bar (e.g. the value and its ratio to the baseline). */
  readonly note?: string
  /** Drawn in the baseline's colour (the row the others are compared with). */
  readonly isBaseline?: boolean
  /** A heading row above this bar (a framework's name, a scenario). */
  readonly group?: string
}

/** A vertical line across the bars at `value`. */
export interface Reference {
  readonly value: number
  readonly label: string
}

/** What {@link renderBarChart} draws. */
export interface BarChart {
  readonly title: string
  /** A second line under the title: conditions of the run (date, load average). */
  readonly subtitle?: string
  /** The value axis's label, with its unit, e.g. `µs per request`. */
  readonly axis: string
  readonly bars: readonly Bar[]
  /** Names of the series, in palette order; shown as a legend when there is more than one. */
  readonly series?: readonly string[]
  readonly baseline?: Reference
  readonly goal?: Reference
  /** The axis's end; default: a round number above the largest bar and reference. */
  readonly max?: number
  /** Lines of small print under the axis. */
  readonly footnotes?: readonly string[]
}

const PALETTE = ['#3b6ea5', '#9cc3e6', '#d98c3f', '#f2c38f', '#6a9f58', '#b5d6a7']
const BASELINE_COLOUR = '#7a7a7a'
const WIDTH = 1000
const LABEL_WIDTH = 370
const PLOT_WIDTH = 340
const ROW = 22
const BAR = 14

/** Escapes text for SVG. */
function xml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;')
}

/** A round step for about five ticks up to `max`. */
function tickStep(max: number): number {
  const raw = max / 5
  const power = 10 ** Math.floor(Math.log10(raw))
  const scaled = raw / power
  return (scaled <= 1 ? 1 : scaled <= 2 ? 2 : scaled <= 2.5 ? 2.5 : scaled <= 5 ? 5 : 10) * power
}

function tickLabel(value: number, step: number): string {
  // As many decimals as the step has (0.25 → 2), so that no two ticks read alike.
  const digits = Math.min(3, (String(Number(step.toPrecision(6))).split('.')[1] ?? '').length)
  return value.toFixed(digits)
}

/** Renders `chart` as a standalone SVG document. */
export function renderBarChart(chart: BarChart): string {
  const total = (bar: Bar): number => bar.segments.reduce((sum, segment) => sum + Math.max(0, segment.value), 0)
  const largest = Math.max(0, ...chart.bars.map(total), chart.baseline?.value ?? 0, chart.goal?.value ?? 0)
  const step = tickStep(chart.max ?? (largest > 0 ? largest * 1.05 : 1))
  const max = chart.max ?? Math.max(step, Math.ceil((largest * 1.05) / step) * step)
  const x = (value: number): number => LABEL_WIDTH + (PLOT_WIDTH * Math.max(0, Math.min(value, max))) / max
  const legend = (chart.series?.length ?? 0) > 1
  const both = chart.baseline !== undefined && chart.goal !== undefined
  const top = 48 + (chart.subtitle === undefined ? 0 : 16) + (legend ? 22 : 0) + (both ? 14 : 0)
  const parts: string[] = []
  let y = top
  const rows: string[] = []
  for (const bar of chart.bars) {
    if (bar.group !== undefined) {
      rows.push(`<text x="12" y="${y + 15}" class="group">${xml(bar.group)}</text>`)
      y += ROW
    }
    rows.push(`<text x="${LABEL_WIDTH - 8}" y="${y + 15}" text-anchor="end">${xml(bar.label)}</text>`)
    let at = 0
    for (const segment of bar.segments) {
      const value = Math.max(0, segment.value)
      const fill =
        bar.isBaseline === true && bar.segments.length === 1 ? BASELINE_COLOUR : (PALETTE[segment.series % PALETTE.length] ?? '#000')
      rows.push(
        `<rect x="${x(at).toFixed(1)}" y="${y + (ROW - BAR) / 2}" width="${(x(at + value) - x(at)).toFixed(1)}" height="${BAR}" fill="${fill}"><title>${xml(`${bar.label}: ${segment.value}`)}</title></rect>`,
      )
      at += value
    }
    if (bar.note !== undefined) rows.push(`<text x="${(x(at) + 6).toFixed(1)}" y="${y + 15}" class="note">${xml(bar.note)}</text>`)
    y += ROW
  }
  const bottom = y + 6
  // Axis, ticks and grid.
  parts.push(`<line x1="${LABEL_WIDTH}" y1="${top - 4}" x2="${LABEL_WIDTH}" y2="${bottom}" class="axis"/>`)
  parts.push(`<line x1="${LABEL_WIDTH}" y1="${bottom}" x2="${LABEL_WIDTH + PLOT_WIDTH}" y2="${bottom}" class="axis"/>`)
  for (let tick = 0; tick <= max + step / 1000; tick += step) {
    const at = x(tick).toFixed(1)
    parts.push(`<line x1="${at}" y1="${top - 4}" x2="${at}" y2="${bottom}" class="grid"/>`)
    parts.push(`<line x1="${at}" y1="${bottom}" x2="${at}" y2="${bottom + 4}" class="axis"/>`)
    parts.push(`<text x="${at}" y="${bottom + 16}" text-anchor="middle" class="tick">${tickLabel(tick, step)}</text>`)
  }
  parts.push(`<text x="${LABEL_WIDTH + PLOT_WIDTH / 2}" y="${bottom + 34}" text-anchor="middle">${xml(chart.axis)}</text>`)
  // The reference lines under the bars' notes, so that the notes stay readable.
  for (const [reference, cls] of [
    [chart.baseline, 'baseline'],
    [chart.goal, 'goal'],
  ] as const) {
    if (reference === undefined) continue
    const at = x(reference.value).toFixed(1)
    parts.push(`<line x1="${at}" y1="${cls === 'goal' && both ? top - 22 : top - 8}" x2="${at}" y2="${bottom}" class="${cls}"/>`)
    // With both lines, the goal's label one line higher, so that close lines keep legible labels.
    const labelY = cls === 'goal' && both ? top - 25 : top - 11
    parts.push(`<text x="${at}" y="${labelY}" text-anchor="middle" class="${cls}-label">${xml(reference.label)}</text>`)
  }
  parts.push(...rows)
  let height = bottom + 54
  for (const line of chart.footnotes ?? []) {
    parts.push(`<text x="12" y="${height}" class="foot">${xml(line)}</text>`)
    height += 15
  }
  const header = [`<text x="12" y="22" class="title">${xml(chart.title)}</text>`]
  if (chart.subtitle !== undefined) header.push(`<text x="12" y="40" class="foot">${xml(chart.subtitle)}</text>`)
  if (legend) {
    let lx = LABEL_WIDTH
    const ly = top - 30
    for (const [i, name] of (chart.series ?? []).entries()) {
      header.push(`<rect x="${lx}" y="${ly - 10}" width="12" height="12" fill="${PALETTE[i % PALETTE.length] ?? '#000'}"/>`)
      header.push(`<text x="${lx + 16}" y="${ly}" class="note">${xml(name)}</text>`)
      lx += 24 + name.length * 6.5
    }
  }
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height + 4}" viewBox="0 0 ${WIDTH} ${height + 4}" font-family="Helvetica, Arial, sans-serif" font-size="12">`,
    '<style>',
    '.title{font-size:15px;font-weight:bold}.group{font-weight:bold}.note{font-size:11px;paint-order:stroke;stroke:#fff;stroke-width:3px}.tick{font-size:11px;fill:#444}',
    '.foot{font-size:11px;fill:#555}.axis{stroke:#333}.grid{stroke:#e4e4e4}',
    `.baseline{stroke:${BASELINE_COLOUR};stroke-dasharray:4 3;stroke-width:1.5}.baseline-label{font-size:11px;fill:${BASELINE_COLOUR}}`,
    '.goal{stroke:#c0392b;stroke-dasharray:6 3;stroke-width:1.5}.goal-label{font-size:11px;fill:#c0392b}',
    '</style>',
    `<rect width="${WIDTH}" height="${height + 4}" fill="#fff"/>`,
    ...header,
    ...parts,
    '</svg>',
    '',
  ].join('\n')
}
