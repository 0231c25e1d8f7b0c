/**
 * Stopping a server process the benchmark or a test started (nginx, Apache httpd, Caddy):
 * SIGTERM, SIGKILL if it has not exited 5 s later. No side effects on import.
 *
 * @module
 */
import type { ChildProcess } from 'node:child_process'

/** Stops `child` and waits for it to exit; at once when it has exited already (by a code or a signal). */
export async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise((resolve) => child.once('exit', resolve))
  child.kill('SIGTERM')
  const timer = setTimeout(() => child.kill('SIGKILL'), 5_000)
  await exited
  clearTimeout(timer)
}
