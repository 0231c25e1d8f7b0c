/**
 * Debian's Apache httpd in the foreground with a configuration file of its own, never the
 * system service: started until a URL of it answers, stopped with SIGTERM (its children
 * with it). The gate's benchmark (`gate-apache.ts`) and its tests
 * (test/gate/support/apache.ts) run Apache this way. No side effects on import.
 *
 * @module
 */
import { spawn } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import { stopProcess } from './stop-process.js'

/** A running Apache httpd. */
export interface ForegroundApache {
  /** The parent's pid (its children are its own). */
  readonly pid: number
  /** What Apache printed, then its error log. */
  log(): Promise<string>
  /** SIGTERM (SIGKILL after 5 s): Apache stops its children and exits. */
  stop(): Promise<void>
}

/** Starts `binary -DFOREGROUND -f file` and waits (15 s at most) until `probe` answers at all. */
export async function startApacheForeground(
  binary: string,
  file: string,
  options: { probe: string; errorLog: string },
): Promise<ForegroundApache> {
  // A process group of its own: prefork's and event's parent signals its whole group when it stops.
  const child = spawn(binary, ['-DFOREGROUND', '-f', file], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, LANG: 'C' },
    detached: true,
  })
  let output = ''
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()))
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()))
  const log = async () => `${output}${await readFile(options.errorLog, 'utf8').catch(() => '')}`
  const deadline = Date.now() + 15_000
  for (;;) {
    if (child.exitCode !== null) throw new Error(`apache2 exited with ${child.exitCode}:\n${await log()}`)
    const up = await fetch(options.probe).then(
      () => true,
      () => false,
    )
    if (up) break
    if (Date.now() > deadline) {
      child.kill('SIGKILL')
      throw new Error(`apache2 did not answer ${options.probe}:\n${await log()}`)
    }
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  return {
    pid: child.pid ?? -1,
    log,
    stop: () => stopProcess(child),
  }
}
