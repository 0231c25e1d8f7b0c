/**
 * What the commands that ask a group service (`groups`, `check`) share: the common options,
 * `--help`, our own dispatcher, the token read from the environment and redacted from all
 * output once read, and one error report.
 *
 * @module
 */
import { Agent, type Dispatcher } from 'undici'
import { DEFAULT_TIMEOUT, MAX_TIMEOUT } from '../src/internal.js'
import { baseUrlArgument, integerArgument, parseCommandArguments, type OptionSpecs, type Parsed } from './arguments.js'
import { reportError, type ReportContext } from './error-report.js'
import { EXIT_OK } from './exit-codes.js'
import { redactingIo, type CliIo } from './io.js'
import { tokenFromEnvironment } from './token-source.js'

/**
 * The options every upstream command takes.
 */
export const UPSTREAM_OPTIONS = {
  'base-url': { type: 'string' },
  timeout: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies OptionSpecs

/**
 * What {@link runUpstreamCommand} hands the command's own work.
 */
export interface UpstreamCall<V> {
  /** The parsed arguments. */
  readonly values: V
  readonly baseUrl: string
  readonly timeout: number
  /** Whether `--json` was given. */
  readonly json: boolean
  /**
   * Our own dispatcher, destroyed when the command ends: a graceful close would wait for a
   * hanging call to time out after the user has pressed Ctrl-C.
   */
  readonly dispatcher: Dispatcher
  /** Reads `VOOT_TOKEN`; from then on the token is redacted from everything written. */
  token(): string
  /** Where to write (redacting once the token was read). */
  out(): CliIo
  /** Registers something to close when the command ends, before the dispatcher goes. */
  onClose(close: () => Promise<void>): void
}

/**
 * Runs an upstream command: parses `args`, answers `--help`, and reports any error
 * (exit code 2) with the token redacted.
 */
export async function runUpstreamCommand<const O extends typeof UPSTREAM_OPTIONS>(
  args: readonly string[],
  io: CliIo,
  spec: { command: string; help: string; options: O; report?: Omit<ReportContext, 'command' | 'json'> },
  work: (call: UpstreamCall<Parsed<O>>) => Promise<number>,
): Promise<number> {
  let json = false
  let safeIo = io
  const closers: (() => Promise<void>)[] = []
  const dispatcher = new Agent()
  try {
    const values = parseCommandArguments(args, spec.options)
    const common = values as Parsed<typeof UPSTREAM_OPTIONS>
    if (common.help === true) {
      io.stdout.write(spec.help)
      return EXIT_OK
    }
    json = common.json === true
    return await work({
      values,
      json,
      baseUrl: baseUrlArgument(common['base-url'], io.env),
      timeout: integerArgument('timeout', common.timeout, { fallback: DEFAULT_TIMEOUT, min: 1, max: MAX_TIMEOUT }),
      dispatcher,
      token() {
        const token = tokenFromEnvironment(io.env)
        safeIo = redactingIo(io, token)
        return token
      },
      out: () => safeIo,
      onClose: (close) => closers.push(close),
    })
  } catch (error) {
    return reportError(error, safeIo, { ...spec.report, command: spec.command, json })
  } finally {
    for (const close of closers) await close()
    await dispatcher.destroy()
  }
}
