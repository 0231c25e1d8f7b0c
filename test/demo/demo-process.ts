/**
 * `npm start` in a child process, as a person runs it: the script's own command (`node
 * --env-file=demo/tsx.env --import tsx demo/start.ts`, run with this Node) without the tsx
 * launcher process: that launcher relays Ctrl-C to its child and, when the child takes more
 * than 30 ms to acknowledge it (a loaded CI machine), kills it and exits 130, which would
 * make a test flaky without saying anything about the demo. The child gets its own process
 * group, like a terminal's foreground job, so that Ctrl-C signals the whole group.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))

/** package.json's scripts. */
export const MANIFEST = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  scripts: Record<string, string>
}
/** `npm start`'s arguments to node. */
export const START_ARGUMENTS = (MANIFEST.scripts.start ?? '').split(' ').slice(1)

/** Whether a process of the group `pid` leads is still alive. */
export function groupAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0)
    return true
  } catch {
    return false
  }
}

/** A demo started by {@link startDemoProcess}. */
export interface DemoProcess {
  readonly child: ChildProcess
  /** Everything it printed so far, stdout and stderr. */
  output(): string
  /** Sends Ctrl-C to its group and resolves to how it exited; rejects after 5 s without an exit. */
  interrupt(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>
}

/** Starts `npm start -- <args>` and resolves once it printed `Stop with Ctrl-C` (within 15 s). */
export async function startDemoProcess(args: readonly string[]): Promise<DemoProcess> {
  const child = spawn(process.execPath, [...START_ARGUMENTS, ...args], { cwd: ROOT, detached: true, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (output += chunk))
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (output += chunk))
  const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>
  const started: DemoProcess = {
    child,
    output: () => output,
    async interrupt() {
      process.kill(-(child.pid ?? 0), 'SIGINT')
      let timer: NodeJS.Timeout | undefined
      const [code, signal] = await Promise.race([
        exited,
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`no exit within 5 s of SIGINT:\n${output}`)), 5_000)
        }),
      ]).finally(() => clearTimeout(timer))
      return { code, signal }
    },
  }
  const deadline = Date.now() + 15_000
  while (!output.includes('Stop with Ctrl-C')) {
    if (Date.now() > deadline || child.exitCode !== null) {
      stopDemoProcess(child)
      throw new Error(`the guide did not appear:\n${output}`)
    }
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
  return started
}

/** Kills the group of `child` if it is still running (only a group a test started). */
export function stopDemoProcess(child: ChildProcess | undefined): void {
  if (child?.pid !== undefined && groupAlive(child.pid)) process.kill(-child.pid, 'SIGKILL')
}
