/**
 * The parent side of benchmark processes: starts a compiled child (see `build.ts`), pinned
 * to a CPU when the machine allows it, and talks to it over IPC.
 *
 * @module
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { pinning } from './cpus.js'

/** A running child process. */
export interface Child<Ready> {
  /** What the child announced when it was ready (ports, tokens, ...). */
  readonly ready: Ready
  readonly pid: number
  /** Sends a command and resolves with the child's answer. */
  call<T = unknown>(command: string, argument?: unknown): Promise<T>
  /** CPU time (user + system, and each, µs) and wall time (ns) of the child now. */
  cpu(): Promise<CpuSample>
  /** Stops the child and waits for it to exit. */
  stop(): Promise<void>
}

/** A CPU-time sample of a child. */
export interface CpuSample {
  readonly cpuUs: number
  readonly userUs: number
  readonly systemUs: number
  readonly wallNs: bigint
}

/** Options of {@link startChild}. */
export interface StartChildOptions {
  /** Arguments after the script. */
  args?: readonly string[]
  /** Extra Node options (e.g. `--expose-gc`). */
  nodeOptions?: readonly string[]
  /** CPU to pin the child to (ignored without `taskset` or with one CPU). */
  cpu?: number
  /** Run at the lowest scheduling class (`chrt --idle`); ignored where `chrt` is missing. */
  idlePriority?: boolean
}

const live = new Set<ChildProcess>()
// A child busy in synchronous work does not notice the IPC channel closing: kill them all
// when this process ends, however it ends.
const killAll = (): void => {
  for (const child of live) child.kill('SIGKILL')
}
process.once('exit', killAll)
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.once(signal, () => {
    killAll()
    process.exit(128 + (signal === 'SIGINT' ? 2 : signal === 'SIGTERM' ? 15 : 1))
  })
}

/** Starts `<script>` (relative to this compiled module, e.g. `./servers/express.js`) and waits for its `ready` message. */
export function startChild<Ready>(script: string, options: StartChildOptions = {}): Promise<Child<Ready>> {
  const path = fileURLToPath(new URL(script, import.meta.url))
  const nodeArgs = [...(options.nodeOptions ?? []), path, ...(options.args ?? [])]
  const pin = options.cpu === undefined ? undefined : pinning(options.cpu)
  let [command, args] = pin === undefined ? [process.execPath, nodeArgs] : ['taskset', ['-c', pin, process.execPath, ...nodeArgs]]
  if (options.idlePriority === true) [command, args] = ['chrt', ['--idle', '0', command, ...args]]
  const child = spawn(command, args, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
  live.add(child)
  let nextId = 1
  const pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>()
  let exited = false
  const exit = new Promise<void>((resolve) => {
    child.once('exit', () => {
      exited = true
      live.delete(child)
      for (const { reject } of pending.values()) reject(new Error(`${script} exited`))
      pending.clear()
      resolve()
    })
  })

  return new Promise<Child<Ready>>((resolveReady, rejectReady) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      rejectReady(new Error(`${script} did not become ready within 60 s`))
    }, 60_000)
    child.once('exit', (code) => {
      clearTimeout(timer)
      rejectReady(new Error(`${script} exited with code ${code} before it was ready`))
    })
    child.on('message', (message: { id: number; result?: unknown; error?: string }) => {
      if (message.id === 0) {
        clearTimeout(timer)
        resolveReady(handle(message.result as Ready))
        return
      }
      const waiter = pending.get(message.id)
      if (waiter === undefined) return
      pending.delete(message.id)
      if (message.error !== undefined) waiter.reject(new Error(`${script}: ${message.error}`))
      else waiter.resolve(message.result)
    })
  })

  function handle(ready: Ready): Child<Ready> {
    const call = <T>(command: string, argument?: unknown): Promise<T> => {
      if (exited) return Promise.reject(new Error(`${script} has exited`))
      const id = nextId++
      return new Promise<T>((resolve, reject) => {
        pending.set(id, { resolve: resolve as (value: unknown) => void, reject })
        child.send({ id, command, argument })
      })
    }
    return {
      ready,
      pid: child.pid ?? -1,
      call,
      async cpu() {
        const sample = await call<{ user: number; system: number; wallNs: string }>('cpu')
        return { cpuUs: sample.user + sample.system, userUs: sample.user, systemUs: sample.system, wallNs: BigInt(sample.wallNs) }
      },
      async stop() {
        if (!exited) {
          child.disconnect()
          const killer = setTimeout(() => child.kill('SIGKILL'), 5_000)
          await exit
          clearTimeout(killer)
        }
      },
    }
  }
}
