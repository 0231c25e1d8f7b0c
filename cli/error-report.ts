/**
 * Turning an error into what the terminal (and a script reading `--json`) should see, and
 * the exit code that goes with it.
 *
 * @module
 */
import { misconfigurationHint } from '../src/internal.js'
import {
  AbortedError,
  InsufficientScopeError,
  InvalidArgumentError,
  InvalidGroupIdError,
  InvalidOptionError,
  InvalidTokenError,
  UpstreamError,
  VootError,
} from '../src/index.js'
import { EXIT_ERROR } from './exit-codes.js'
import type { CliIo } from './io.js'
import { printable } from './terminal-text.js'

/**
 * An error as the CLI reports it.
 */
export interface CliErrorReport {
  /** A `VootErrorCode`, or `ERR_INTERNAL` for an error the CLI did not expect. */
  readonly code: string
  readonly message: string
  /** The group service's HTTP status, when it answered. */
  readonly upstreamStatus?: number
  /** Whether the arguments were at fault (the help is worth a look). */
  readonly usage: boolean
}

// Factory option names as the CLI spells them.
const FLAG_OF_OPTION: Readonly<Record<string, string>> = {
  baseUrl: '--base-url',
  timeout: '--timeout',
  roles: '--roles',
  port: '--port',
  host: '--host',
  data: '--data',
}

/**
 * Describes an error in the terminal's terms: the token is called `VOOT_TOKEN`, options
 * are called by their flags, and an upstream failure says that the answer is unknown.
 */
export function describeCliError(error: unknown): CliErrorReport {
  if (error instanceof InvalidTokenError) {
    return {
      code: error.code,
      message: 'the group service rejected the token in VOOT_TOKEN: it is unknown, expired or revoked (HTTP 401)',
      upstreamStatus: 401,
      usage: false,
    }
  }
  if (error instanceof InsufficientScopeError) {
    return {
      code: error.code,
      message: `${error.message} (HTTP 403). Is VOOT_TOKEN a client-credentials token, or one without the groups scope?`,
      upstreamStatus: 403,
      usage: false,
    }
  }
  if (error instanceof UpstreamError) {
    const status = error.upstreamStatus === undefined ? '' : ` (HTTP ${error.upstreamStatus})`
    const cause = causeCode(error.cause)
    // The same hint the resolver's misconfiguration warning gives (a 404 on me/groups, HTML, ...).
    const hint = misconfigurationHint(error, undefined)
    return {
      code: error.code,
      message: `${error.message}${status}${cause === undefined ? '' : ` [${cause}]`}${hint === undefined ? '' : `. Hint: ${hint.hint}`}`,
      ...(error.upstreamStatus === undefined ? {} : { upstreamStatus: error.upstreamStatus }),
      usage: false,
    }
  }
  if (error instanceof AbortedError) return { code: error.code, message: 'interrupted before the group service answered', usage: false }
  if (error instanceof InvalidOptionError) {
    const flag = FLAG_OF_OPTION[error.option]
    const message = flag === undefined ? error.message : `${flag}: ${error.message.replace(/^options\.[\w.]+: /, '')}`
    return { code: error.code, message, usage: true }
  }
  if (error instanceof InvalidArgumentError || error instanceof InvalidGroupIdError) {
    return { code: error.code, message: error.message, usage: true }
  }
  if (error instanceof VootError) return { code: error.code, message: error.message, usage: false }
  return { code: 'ERR_INTERNAL', message: error instanceof Error ? error.message : String(error), usage: false }
}

/** The `code` of a network error under an upstream failure (ECONNREFUSED, ENOTFOUND, ...). */
function causeCode(cause: unknown): string | undefined {
  for (let depth = 0; depth < 3 && typeof cause === 'object' && cause !== null; depth++) {
    const { code } = cause as { code?: unknown }
    if (typeof code === 'string' && /^E[A-Z_]+$/.test(code)) return code
    cause = (cause as { cause?: unknown }).cause
  }
  return undefined
}

/**
 * Reports an error: a line on stderr (with a pointer to the help for usage errors), and
 * with `json` also `{"error": {"code", "message", "upstreamStatus"?}}` on stdout, so that a
 * script piping `--json` output always gets JSON. Returns {@link EXIT_ERROR}.
 */
export function reportError(error: unknown, io: CliIo, context: ReportContext): number {
  const report = describeCliError(error)
  const unknown = error instanceof UpstreamError && context.upstreamMeansUnknown === true
  const note = unknown ? '\nThe answer is unknown: neither allowed nor denied. Try again later.' : ''
  const hint = report.usage ? `\nRun "voot-guard ${context.command} --help" for usage.` : ''
  io.stderr.write(`voot-guard ${context.command}: ${report.message.split('\n').map(printable).join('\n')}${note}${hint}\n`)
  if (context.json === true) {
    const { usage: _usage, ...body } = report
    io.stdout.write(`${JSON.stringify({ ...context.jsonFields, error: body })}\n`)
  }
  return EXIT_ERROR
}

/**
 * What {@link reportError} needs to know about the command that failed.
 */
export interface ReportContext {
  /** The command's name, for the message and the pointer to its help. */
  readonly command: string
  /** Also write the error as JSON to stdout. */
  readonly json?: boolean
  /** Fields written before `error` in the JSON, such as `{ outcome: 'error' }`. */
  readonly jsonFields?: Readonly<Record<string, unknown>>
  /** Say that an upstream failure leaves the answer unknown (for `check`). */
  readonly upstreamMeansUnknown?: boolean
}
