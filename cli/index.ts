/**
 * The `voot-guard` command line: `emulator`, `groups`, `check` and `gate`. `runCli` runs one
 * invocation in-process and resolves with its exit code; `bin/voot-guard.ts` is a thin
 * wrapper around it.
 *
 * @module
 */
import { VERSION } from '../src/index.js'
import { hasTokenFlag, TOKEN_FROM_ENVIRONMENT, withoutBareTokenFlag } from './arguments.js'
import { checkCommand } from './check-command.js'
import type { Command } from './command.js'
import { emulatorCommand } from './emulator-command.js'
import { EXIT_ERROR, EXIT_OK } from './exit-codes.js'
import { gateCommand } from './gate-command.js'
import { groupsCommand } from './groups-command.js'
import type { CliIo } from './io.js'

export type { CliIo, TextSink } from './io.js'
export { EXIT_DENIED, EXIT_ERROR, EXIT_OK } from './exit-codes.js'

const COMMANDS: readonly Command[] = [emulatorCommand, groupsCommand, checkCommand, gateCommand]

const HELP = `Usage: voot-guard <command> [options]

Commands:
${COMMANDS.map((command) => `  ${command.name.padEnd(10)}${command.summary}`).join('\n')}

Run "voot-guard <command> --help" for a command's options.

${TOKEN_FROM_ENVIRONMENT}

Options:
  -h, --help      show this help
  --version       print the version
`

/**
 * Runs `voot-guard` with `argv` (the arguments after the program name) and resolves with
 * the exit code: 0 success or allowed, 1 denied (`check`), 2 error. Never rejects, never
 * exits the process, and never writes `VOOT_TOKEN` to `io`.
 */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  // Wherever it stands, even before the command: the reason matters more than the syntax.
  // `gate --explain` alone takes a bare `--token` (the token is then read from VOOT_TOKEN).
  if (hasTokenFlag(argv[0] === 'gate' ? withoutBareTokenFlag(argv).args : argv)) {
    io.stderr.write(`voot-guard: --token is not accepted. ${TOKEN_FROM_ENVIRONMENT}\n`)
    return EXIT_ERROR
  }
  const [first, ...rest] = argv
  if (first === undefined) {
    io.stderr.write(HELP)
    return EXIT_ERROR
  }
  if (first === '--help' || first === '-h' || first === 'help') {
    const topic = first === 'help' ? COMMANDS.find((command) => command.name === rest[0]) : undefined
    io.stdout.write(topic?.help ?? HELP)
    return EXIT_OK
  }
  if (first === '--version') {
    io.stdout.write(`${VERSION}\n`)
    return EXIT_OK
  }
  const command = COMMANDS.find((each) => each.name === first)
  if (command === undefined) {
    // Echo only what looks like a command name: the word could be a pasted token.
    const shown = /^-{0,2}[a-z][a-z-]{0,30}$/.test(first) ? ` "${first}"` : ''
    io.stderr.write(`voot-guard: unknown command${shown}. Commands: ${COMMANDS.map((each) => each.name).join(', ')}.\n`)
    io.stderr.write('Run "voot-guard --help" for usage.\n')
    return EXIT_ERROR
  }
  try {
    return await command.run(rest, io)
  } catch (error) {
    // Commands report their own errors; this is the last line for a bug in one of them.
    io.stderr.write(`voot-guard ${command.name}: unexpected failure: ${error instanceof Error ? error.name : 'error'}\n`)
    return EXIT_ERROR
  }
}
