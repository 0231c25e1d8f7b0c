import { describe, expect, it } from 'vitest'
import { renderBarChart } from '../../bench/chart-svg.js'

/** The widths of the bars' rectangles (the legend's squares and the background have none of interest). */
function barWidths(svg: string): number[] {
  return [...svg.matchAll(/<rect x="[\d.]+" y="[\d.]+" width="([\d.]+)" height="14"/g)].map((match) => Number(match[1]))
}

describe('renderBarChart', () => {
  it('draws bars in proportion to their values on one axis, stacked segments end to end', () => {
    const svg = renderBarChart({
      title: 't',
      axis: 'µs per request',
      max: 10,
      bars: [
        { label: 'a', segments: [{ value: 5, series: 0 }] },
        {
          label: 'b',
          segments: [
            { value: 2, series: 0 },
            { value: 3, series: 1 },
          ],
        },
      ],
    })
    const [a, b1, b2] = barWidths(svg)
    expect(a).toBeCloseTo(2.5 * (b1 ?? 0), 1)
    expect((b1 ?? 0) + (b2 ?? 0)).toBeCloseTo(a ?? 0, 1)
    expect(svg).toContain('µs per request')
  })

  it('marks the baseline and the goal with labelled lines where their values are', () => {
    const svg = renderBarChart({
      title: 't',
      axis: 'x',
      max: 2,
      bars: [{ label: 'a', segments: [{ value: 1, series: 0 }] }],
      baseline: { value: 1, label: 'bare = 1' },
      goal: { value: 0.5, label: 'goal' },
    })
    const line = (cls: string): number => Number(new RegExp(`<line x1="([\\d.]+)"[^>]*class="${cls}"`).exec(svg)?.[1])
    expect(line('baseline')).toBeGreaterThan(line('goal'))
    expect(line('baseline') - line('goal')).toBeCloseTo(line('goal') - Number(/<line x1="([\d.]+)"[^>]*class="axis"/.exec(svg)?.[1]), 1)
    expect(svg).toContain('>bare = 1<')
    expect(svg).toContain('>goal<')
  })

  it('labels ticks with as many decimals as their step, so that no two read alike', () => {
    const svg = renderBarChart({ title: 't', axis: 'x', max: 1.25, bars: [{ label: 'a', segments: [{ value: 1, series: 0 }] }] })
    const ticks = [...svg.matchAll(/class="tick">([^<]+)</g)].map((match) => match[1])
    expect(ticks).toEqual(['0.00', '0.25', '0.50', '0.75', '1.00', '1.25'])
  })

  it('escapes text and keeps the document well formed', () => {
    const svg = renderBarChart({ title: 'a < b & "c"', axis: 'x', bars: [{ label: '<script>', segments: [{ value: 1, series: 0 }] }] })
    expect(svg).not.toContain('<script>')
    expect(svg).toContain('&lt;script&gt;')
    expect(svg).toContain('a &lt; b &amp; &quot;c&quot;')
    expect(svg.startsWith('<svg')).toBe(true)
    expect(svg.trimEnd().endsWith('</svg>')).toBe(true)
  })

  it('draws a negative segment as nothing, and the next segment from where the bar stands', () => {
    const svg = renderBarChart({
      title: 't',
      axis: 'x',
      max: 4,
      bars: [
        { label: 'a', segments: [{ value: 4, series: 0 }] },
        {
          label: 'b',
          segments: [
            { value: -1, series: 1 },
            { value: 2, series: 0 },
          ],
        },
      ],
    })
    const [whole, negative, rest] = barWidths(svg)
    expect(negative).toBe(0)
    expect(rest).toBeCloseTo((whole ?? 0) / 2, 1)
  })
})
