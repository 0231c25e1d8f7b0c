import { describe, expect, it } from 'vitest'
import { warmStages, warmStagesRow } from '../../bench/suites/warm-stages.js'

const at = (p50: number) => ({ count: 1000, p10: p50, p50, p90: p50 })

describe('warmStages', () => {
  it('takes each step as the difference between the hooks cut before and after it, less the no-op', () => {
    const stages = warmStages({
      'no-op middleware': at(0.05),
      'stage: header': at(0.07),
      'stage: token': at(0.15),
      'stage: digest': at(0.39),
      // checkNow digests again: its decision is what is left once the digest is taken off.
      'stage: decision': at(0.6),
      'stage: core': at(0.63),
      'voot-guard': at(0.67),
    })
    expect(stages.header).toBeCloseTo(0.02)
    expect(stages.token).toBeCloseTo(0.08)
    expect(stages.digest).toBeCloseTo(0.24)
    expect(stages.decision).toBeCloseTo(0.21)
    expect(stages.core).toBeCloseTo(0.03)
    expect(stages.adapter).toBeCloseTo(0.04)
    expect(stages.guard).toBeCloseTo(0.62)
    const sum = stages.header + stages.token + stages.digest + stages.decision + stages.core + stages.adapter
    expect(sum).toBeCloseTo(stages.guard)
    expect(warmStagesRow('Fastify 5', stages, 0.4).result).toContain('the guard 0.62 µs; figure 1 in a loop 0.40 µs (1.55×)')
  })

  it('gives NaN for a step whose hook was not timed', () => {
    expect(warmStages({ 'no-op middleware': at(0.05), 'voot-guard': at(0.6) }).digest).toBeNaN()
  })
})
