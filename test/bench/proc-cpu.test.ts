import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { describe, expect, it } from 'vitest'
import { parseProcStat, sampleTreesUs, treeTicks, type ProcStat } from '../../bench/proc-cpu.js'

const stat = (pid: number, ppid: number, own: number, reaped = 0): ProcStat => ({
  pid,
  ppid,
  utime: own,
  stime: 0,
  cutime: reaped,
  cstime: 0,
})

describe('parseProcStat', () => {
  it('counts the fields after the last parenthesis, whatever the command name holds', () => {
    const line = '4242 (a (b) c) S 17 4242 4242 0 -1 4194560 100 0 0 0 31 7 5 2 20 0 1 0 1058289 3133440 407 18446744073709551615'
    expect(parseProcStat(line)).toEqual({ pid: 4242, ppid: 17, utime: 31, stime: 7, cutime: 5, cstime: 2 })
  })

  it('refuses what is not a stat line', () => {
    expect(() => parseProcStat('nonsense')).toThrow(/not a \/proc/)
    expect(() => parseProcStat('12 (x) S 1 2')).toThrow(/no field 14/)
  })
})

describe('treeTicks', () => {
  it('sums a root and its descendants, not its neighbours', () => {
    const stats = [stat(1, 0, 1000), stat(10, 1, 5, 3), stat(11, 10, 7), stat(12, 10, 11), stat(20, 1, 500)]
    expect(treeTicks(stats, [10])).toBe(5 + 3 + 7 + 11)
    expect(treeTicks(stats, [11, 12])).toBe(18)
  })

  it('counts a process once when two roots reach it', () => {
    const stats = [stat(10, 1, 5), stat(11, 10, 7)]
    expect(treeTicks(stats, [10, 11, 10])).toBe(12)
  })

  it('keeps counting a child that ended between two samples: in its parent, once reaped', () => {
    const before = [stat(10, 1, 5), stat(11, 10, 7)]
    // The child worked 4 more ticks, ended and was reaped: its 11 ticks are now the parent's.
    const after = [stat(10, 1, 6, 11)]
    expect(treeTicks(after, [10]) - treeTicks(before, [10])).toBe(1 + 4)
  })

  it('is 0 for a root that is not there', () => {
    expect(treeTicks([stat(10, 1, 5)], [99])).toBe(0)
  })
})

describe('sampleTreesUs', () => {
  it('reads a real tree: a shell whose child burned CPU and ended counts that CPU', async () => {
    // The child burns 300 ms of its own CPU time (not of the clock), then the shell reaps it and waits.
    const burn = 'const end = process.cpuUsage().user + 300000; while (process.cpuUsage().user < end);'
    const shell = spawn('sh', ['-c', `"${process.execPath}" -e '${burn}'; echo done; sleep 30`], { stdio: ['ignore', 'pipe', 'ignore'] })
    try {
      const [chunk] = (await once(shell.stdout, 'data')) as [Buffer]
      expect(chunk.toString()).toContain('done')
      const { tree, other } = sampleTreesUs({ tree: [shell.pid ?? -1], other: [] })
      expect(tree).toBeGreaterThanOrEqual(280_000)
      expect(other).toBe(0)
    } finally {
      shell.kill('SIGKILL')
    }
  })
})
