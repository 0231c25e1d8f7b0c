/**
 * CPU placement. On a small machine the load generator and the server must not take
 * turns on one core, or the figures measure the scheduler: the parent (load generator,
 * emulator) stays on CPU 0 and the server under test gets CPU 1 to itself.
 *
 * @module
 */
import { execFileSync } from 'node:child_process'
import { cpus } from 'node:os'

// The machine's CPUs, not this process's: once this process is pinned to one CPU,
// `availableParallelism()` says 1 and every child would land on that same CPU.
const MACHINE_CPUS = cpus().length

/** CPU of the server under test. */
export const SERVER_CPU = 1
/** CPU of the load generator (this process) and of the emulator. */
export const LOAD_CPU = 0

let available: boolean | undefined

function canPin(): boolean {
  if (available === undefined) {
    try {
      execFileSync('taskset', ['-p', String(process.pid)], { stdio: 'ignore' })
      available = MACHINE_CPUS >= 2
    } catch {
      available = false
    }
  }
  return available
}

/** The `taskset -c` list for `cpu`, or `undefined` when pinning is not possible here. */
export function pinning(cpu: number): string | undefined {
  return canPin() ? String(cpu % MACHINE_CPUS) : undefined
}

/** Pins this process (all its threads) to `cpu`; returns whether it could. */
export function pinSelf(cpu: number): boolean {
  const list = pinning(cpu)
  if (list === undefined) return false
  try {
    execFileSync('taskset', ['-a', '-p', '-c', list, String(process.pid)], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}

/**
 * `--realtime`: every process of the run (the load generator, the servers under test, the
 * emulators; not the idle spinners) runs at a real-time priority (`SCHED_RR` 1, all threads), so that other work on a shared machine cannot make them
 * wait for a time slice each time a request wakes them. Without it, with other processes
 * runnable on both cores, the server waited on every wake-up, ran a few per cent of the
 * time with cold caches, and its CPU per request doubled and swung from round to round
 * (see BENCHMARKS.md, "Inside servers"). Opt-in: for the length of a run it leaves other
 * work on the two cores only what the kernel's real-time throttling keeps for it (5 %).
 */
export const REALTIME = process.argv.includes('--realtime')

/** Moves every thread of `pid` to `SCHED_RR` 1 (with `--realtime`); returns whether it did. */
export function raisePriority(pid: number): boolean {
  if (!REALTIME) return false
  try {
    execFileSync('chrt', ['-a', '-r', '-p', '1', String(pid)], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}
