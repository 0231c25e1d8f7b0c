import { describe, expect, it } from 'vitest'
import { comparePaths, roundOrder, summarisePath, type ProxyRound } from '../../bench/gate-proxies.js'

const round = (rps: number, proxy: number, gate: number, app: number, failures = 0): ProxyRound => ({
  rps,
  failures,
  us: { proxy, gate, app },
})

describe('summarisePath', () => {
  it('takes what the auth step adds round by round, then the median, per role and in all', () => {
    // Each round moves both sides alike (round 2 slow, round 3 fast for the proxy): a difference
    // of medians (15 − 12 = 3 µs for the proxy) would mix rounds, the median of differences does not.
    const alone = [round(100, 10, 0, 10), round(90, 30, 0, 10), round(50, 12, 0, 20)]
    const withAuth = [round(80, 15, 10, 11), round(70, 40, 11, 11), round(40, 13, 10, 21)]
    const summary = summarisePath(alone, withAuth)
    // Totals are medians of their own (16, 22, 12), not sums of the roles' medians.
    expect(summary.added).toEqual({ proxy: 5, gate: 10, app: 1, total: 16 })
    expect(summary.rps).toBe(70)
    expect(summary.aloneRps).toBe(90)
    expect(summary.rpsRatio).toBeCloseTo(70 / 90)
    expect(summary.cpu).toEqual({ proxy: 15, gate: 10, app: 11, total: 44 })
    expect(summary.aloneCpu.total).toBe(32)
    expect(summary.failures).toBe(0)
  })

  it('counts the failed requests of both sides', () => {
    expect(summarisePath([round(1, 1, 0, 1, 2)], [round(1, 1, 0, 1, 3)]).failures).toBe(5)
  })

  it('needs as many rounds of each side', () => {
    expect(() => summarisePath([round(1, 1, 0, 1)], [])).toThrow(/as many rounds/)
  })
})

describe('comparePaths', () => {
  it('divides the gate path by the module path: requests per second and the CPU each adds', () => {
    const gate = summarisePath([round(100, 10, 0, 10)], [round(80, 18, 10, 11)])
    const module = summarisePath([round(60, 40, 0, 12)], [round(50, 50, 0, 14)])
    expect(comparePaths(gate, module)).toEqual({ rps: 80 / 50, addedCpu: 19 / 12 })
  })
})

describe('roundOrder', () => {
  it('starts each round one configuration later', () => {
    expect(roundOrder(['a', 'b', 'c'], 0)).toEqual(['a', 'b', 'c'])
    expect(roundOrder(['a', 'b', 'c'], 1)).toEqual(['b', 'c', 'a'])
    expect(roundOrder(['a', 'b', 'c'], 4)).toEqual(['b', 'c', 'a'])
  })
})
