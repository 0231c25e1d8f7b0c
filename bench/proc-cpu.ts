/**
 * CPU time of whole process trees from `/proc/<pid>/stat` (Linux), for servers the
 * benchmark does not write: nginx (master and worker), Apache httpd (parent and children),
 * and the Node children beside them, all read the same way.
 *
 * A tree's time is each live process's own time (`utime` + `stime`) plus the time of the
 * children it has already reaped (`cutime` + `cstime`): a child that ends between two
 * samples is counted once, first alive, then in its parent's reaped time. So an Apache
 * child that the parent stops and replaces in the middle of a round keeps counting.
 *
 * @module
 */
import { execFileSync } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'

/** The fields of one `/proc/<pid>/stat` line this module reads, in clock ticks. */
export interface ProcStat {
  readonly pid: number
  readonly ppid: number
  readonly utime: number
  readonly stime: number
  readonly cutime: number
  readonly cstime: number
}

/**
 * Parses a `/proc/<pid>/stat` line. The command name (field 2) is in parentheses and may
 * itself hold spaces and parentheses, so the fields are counted after its last `)`.
 */
export function parseProcStat(line: string): ProcStat {
  const close = line.lastIndexOf(')')
  const pid = Number.parseInt(line, 10)
  if (close < 0 || !Number.isInteger(pid)) throw new Error(`not a /proc/<pid>/stat line: ${line.slice(0, 80)}`)
  // After the name: field 3 (state) is index 0, so field n is index n - 3.
  const fields = line.slice(close + 2).split(' ')
  const field = (n: number): number => {
    const value = Number(fields[n - 3])
    if (!Number.isFinite(value)) throw new Error(`/proc/${pid}/stat has no field ${n}`)
    return value
  }
  return { pid, ppid: field(4), utime: field(14), stime: field(15), cutime: field(16), cstime: field(17) }
}

/**
 * The CPU ticks of the trees rooted at `roots` in `stats` (every process of the machine):
 * each root and its descendants, their own time and their reaped children's. A process is
 * counted once even when two roots share it.
 */
export function treeTicks(stats: readonly ProcStat[], roots: readonly number[]): number {
  const children = new Map<number, ProcStat[]>()
  const byPid = new Map<number, ProcStat>()
  for (const stat of stats) {
    byPid.set(stat.pid, stat)
    const siblings = children.get(stat.ppid)
    if (siblings === undefined) children.set(stat.ppid, [stat])
    else siblings.push(stat)
  }
  const seen = new Set<number>()
  let ticks = 0
  const pending = roots.map((pid) => byPid.get(pid)).filter((stat): stat is ProcStat => stat !== undefined)
  for (let stat = pending.pop(); stat !== undefined; stat = pending.pop()) {
    if (seen.has(stat.pid)) continue
    seen.add(stat.pid)
    ticks += stat.utime + stat.stime + stat.cutime + stat.cstime
    pending.push(...(children.get(stat.pid) ?? []))
  }
  return ticks
}

/** Every process's stat line now (processes that end while it reads are left out). */
export function readAllProcStats(): ProcStat[] {
  const stats: ProcStat[] = []
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      stats.push(parseProcStat(readFileSync(`/proc/${name}/stat`, 'utf8')))
    } catch {
      // Gone between the listing and the read.
    }
  }
  return stats
}

let ticksPerSecond: number | undefined

/** Clock ticks per second of `/proc`'s times (`getconf CLK_TCK`, 100 where it cannot be asked). */
export function clockTicksPerSecond(): number {
  if (ticksPerSecond === undefined) {
    try {
      ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100
    } catch {
      ticksPerSecond = 100
    }
  }
  return ticksPerSecond
}

/** CPU µs of each named group of process trees now, e.g. `{ proxy: [nginxPid], gate: [gatePid] }`. */
export function sampleTreesUs<Role extends string>(groups: Readonly<Record<Role, readonly number[]>>): Record<Role, number> {
  const stats = readAllProcStats()
  const usPerTick = 1e6 / clockTicksPerSecond()
  const sample = {} as Record<Role, number>
  for (const role of Object.keys(groups) as Role[]) sample[role] = treeTicks(stats, groups[role]) * usPerTick
  return sample
}
