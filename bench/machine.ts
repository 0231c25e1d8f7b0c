/**
 * How busy the machine was around a run: figures from a machine shared with other work
 * (or a VM whose host is busy) are noisy, and the table says so.
 *
 * @module
 */
import { readFileSync } from 'node:fs'
import { loadavg } from 'node:os'

/** CPU counters of the whole machine (Linux `/proc/stat`), or `undefined` elsewhere. */
export interface CpuCounters {
  readonly total: number
  readonly steal: number
  readonly idle: number
}

/** Reads the machine-wide CPU counters. */
export function cpuCounters(): CpuCounters | undefined {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0] ?? ''
    const fields = line.trim().split(/\s+/).slice(1).map(Number)
    const [user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0] = fields
    return { total: user + nice + system + idle + iowait + irq + softirq + steal, steal, idle: idle + iowait }
  } catch {
    return undefined
  }
}

/** Share of CPU time the hypervisor took away between two readings (0–1). */
export function stealShare(before: CpuCounters | undefined, after: CpuCounters | undefined): number {
  if (before === undefined || after === undefined || after.total === before.total) return Number.NaN
  return (after.steal - before.steal) / (after.total - before.total)
}

/** The 1-minute load average. */
export function load1(): number {
  return loadavg()[0] ?? Number.NaN
}
