#!/usr/bin/env node
/**
 * The `voot-guard` executable: runs the CLI on the process's arguments and exits with its
 * code. Everything else lives in `cli/`, where tests run it in-process.
 *
 * @module
 */
import { runCli } from '../cli/index.js'

const stop = new AbortController()
const onSignal = (signal: NodeJS.Signals): void => {
  // A second Ctrl-C while closing gets Node's default: exit at once.
  process.off('SIGINT', onSignal)
  process.off('SIGTERM', onSignal)
  stop.abort(signal)
}
process.on('SIGINT', onSignal)
process.on('SIGTERM', onSignal)

const code = await runCli(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
  signal: stop.signal,
})
process.off('SIGINT', onSignal)
process.off('SIGTERM', onSignal)
process.exitCode = code
