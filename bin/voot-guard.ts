#!/usr/bin/env node
/**
 * The `voot-guard` executable: runs the CLI on the process's arguments and exits with its
 * code. Everything else lives in `cli/`, where tests run it in-process.
 *
 * @module
 */
import { runCli } from '../cli/index.js'
import { invocationOf } from '../cli/invocation.js'
import { processStopSignal } from '../cli/stop-signal.js'

// SIGINT/SIGTERM stop a long-running command (the emulator) cleanly, within 5 s at most.
const stop = processStopSignal({ forceExitAfterMs: 5_000 })
const code = await runCli(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
  signal: stop.signal,
  invocation: invocationOf(import.meta.url),
})
stop.dispose()
process.exitCode = code
