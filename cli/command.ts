/**
 * The shape of one `voot-guard` command.
 *
 * @module
 */
import type { CliIo } from './io.js'

/**
 * One command of the `voot-guard` CLI.
 */
export interface Command {
  /** What follows `voot-guard` on the command line. */
  readonly name: string
  /** One line for the list of commands. */
  readonly summary: string
  /** The full `--help` text. */
  readonly help: string
  /** Runs the command with the arguments after its name; resolves with the exit code. */
  run(args: readonly string[], io: CliIo): Promise<number>
}
