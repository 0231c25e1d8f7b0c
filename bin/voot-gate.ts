#!/usr/bin/env node
/**
 * The `voot-gate` executable: the gate alone, as `npm run package:gate` bundles it into one
 * program with Node inside (packaging/, DESIGN section 7). `voot-gate ARGS` is `voot-guard
 * gate ARGS`: the same command object (cli/gate-command.ts) runs, so options, output and exit
 * codes cannot drift apart; only `--version`, `--help` and the `--token` refusal, which
 * `voot-guard` handles before its commands, are handled here the same way.
 *
 * @module
 */
import { hasTokenFlag, TOKEN_FROM_ENVIRONMENT, withoutBareTokenFlag } from '../cli/arguments.js'
import { EXIT_ERROR, EXIT_OK } from '../cli/exit-codes.js'
import { gateCommand } from '../cli/gate-command.js'
import type { TextSink } from '../cli/io.js'
import { processStopSignal } from '../cli/stop-signal.js'
import { VERSION } from '../src/index.js'

const argv = process.argv.slice(2)

/** The gate command's help, with this program's name in its usage line. */
const stdout: TextSink = {
  write: (text: string) =>
    process.stdout.write(text === gateCommand.help ? text.replace('voot-guard gate --config', 'voot-gate --config') : text),
}

async function main(): Promise<number> {
  if (argv[0] === '--version' && argv.length === 1) {
    process.stdout.write(`${VERSION}\n`)
    return EXIT_OK
  }
  // As `voot-guard` refuses it for the gate: a token on a command line ends up in shell history.
  if (hasTokenFlag(withoutBareTokenFlag(argv).args)) {
    process.stderr.write(`voot-gate: --token is not accepted. ${TOKEN_FROM_ENVIRONMENT}\n`)
    return EXIT_ERROR
  }
  // SIGINT/SIGTERM stop the gate cleanly (answers under way finish), within 5 s at most.
  const stop = processStopSignal({ forceExitAfterMs: 5_000 })
  try {
    return await gateCommand.run(argv, { stdout, stderr: process.stderr, env: process.env, signal: stop.signal })
  } finally {
    stop.dispose()
  }
}

// No top-level await: the bundle is CommonJS, the one format a single executable's main script may be.
void main().then((code) => {
  process.exitCode = code
})
