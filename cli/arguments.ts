/**
 * Command-line parsing for the `voot-guard` commands: strict `node:util` `parseArgs`, with
 * messages that say what to do, and the one rule that matters most: the token is never
 * an argument.
 *
 * @module
 */
import { parseArgs, type ParseArgsConfig } from 'node:util'
import { InvalidArgumentError } from '../src/index.js'
import { nearestKey } from '../src/internal.js'

/**
 * The options of one command, in `parseArgs` form.
 */
export type OptionSpecs = NonNullable<ParseArgsConfig['options']>

/** The values `parseCommandArguments` returns for option specs `O`. */
export type Parsed<O extends OptionSpecs> = ReturnType<
  typeof parseArgs<{ args: string[]; options: O; strict: true; allowPositionals: false }>
>['values']

/**
 * Why `--token` is refused, for the message and the help texts.
 */
export const TOKEN_FROM_ENVIRONMENT =
  'The token is read from the VOOT_TOKEN environment variable only, never from an argument:\n' +
  'a command line is saved in shell history and visible to other users in the process list.\n' +
  'For example:\n' +
  '  read -rs VOOT_TOKEN && export VOOT_TOKEN    # paste the token, then Enter (it is not echoed)'

/**
 * Parses `args` against `options` strictly: unknown options, missing values and positional
 * arguments are errors, and so is `--token` in any form (with a message explaining why).
 *
 * @throws {@link InvalidArgumentError} with a message fit for the terminal; it never
 *   repeats a positional argument, which could be a pasted token.
 */
export function parseCommandArguments<const O extends OptionSpecs>(args: readonly string[], options: O): Parsed<O> {
  if (hasTokenFlag(args)) throw new InvalidArgumentError(`--token is not accepted. ${TOKEN_FROM_ENVIRONMENT}`)
  try {
    return parseArgs({ args: [...args], options, strict: true, allowPositionals: false }).values
  } catch (error) {
    throw new InvalidArgumentError(parseFailure(error, options), { cause: error })
  }
}

/**
 * Whether `args` carry a `--token` flag (`--token X` or `--token=X`) before any `--`.
 */
export function hasTokenFlag(args: readonly string[]): boolean {
  for (const arg of args) {
    if (arg === '--') return false
    if (arg === '--token' || arg.startsWith('--token=')) return true
  }
  return false
}

/**
 * `args` without a bare `--token` flag (`--token` last, or followed by another long
 * option), and whether there was one. `voot-guard gate --explain` takes such a flag to mean
 * "the token in VOOT_TOKEN"; a `--token` with a value after it stays, and is refused.
 */
export function withoutBareTokenFlag(args: readonly string[]): { args: string[]; bare: boolean } {
  const rest: string[] = []
  let bare = false
  args.forEach((arg, index) => {
    const next = args[index + 1]
    if (arg === '--token' && (next === undefined || OPTION_NAME.test(next.split('=')[0] ?? ''))) bare = true
    else rest.push(arg)
  })
  return { args: rest, bare }
}

/** What a mistyped long option looks like (and a pasted token, in practice, does not). */
const OPTION_NAME = /^--[a-z][a-z0-9-]{0,23}$/

function parseFailure(error: unknown, options: OptionSpecs): string {
  const { code, message } = error as { code?: unknown; message?: unknown }
  if (code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL') {
    return 'unexpected argument: this command takes options only (a token goes in VOOT_TOKEN, not on the command line)'
  }
  // A base64url token may start with `-` or `--`: Node would then quote its start as an
  // unknown option. Only what looks like a mistyped option name is quoted back.
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && typeof message === 'string') {
    const option = /'([^']*)'/.exec(message)?.[1]
    if (option === undefined || !OPTION_NAME.test(option)) {
      return 'unknown option (not repeated: it could be a pasted token; a token goes in VOOT_TOKEN, not on the command line)'
    }
    return unknownOption(option, options)
  }
  // Node's messages for unknown options and missing values name only the option.
  if (typeof message === 'string' && typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS_')) {
    return message.split('. To specify a positional argument')[0] ?? message
  }
  return 'cannot parse the arguments'
}

/**
 * The message for an unknown long option: the command's own option it most likely
 * misspells, else the command's options; never an option of another command.
 */
function unknownOption(option: string, options: OptionSpecs): string {
  const flags = Object.keys(options).filter((name) => name !== 'help')
  const near = nearestKey(option.slice(2), flags)
  if (near !== undefined) return `Unknown option '${option}' (did you mean --${near}?)`
  return `Unknown option '${option}'; this command's options are ${flags.map((name) => `--${name}`).join(', ')}`
}

/**
 * Reads an integer option given as text.
 *
 * @throws {@link InvalidArgumentError} naming the flag when the text is not an integer in range.
 */
export function integerArgument(
  flag: string,
  text: string | undefined,
  { fallback, min, max }: { readonly fallback: number; readonly min: number; readonly max: number },
): number {
  if (text === undefined) return fallback
  const value = /^\d+$/.test(text.trim()) ? Number(text.trim()) : Number.NaN
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw new InvalidArgumentError(`--${flag} must be an integer from ${min} to ${max}`)
  }
  return value
}

/**
 * The group service's base URL: `--base-url`, else the `VOOT_BASE_URL` environment
 * variable. The groups client checks its form.
 *
 * @throws {@link InvalidArgumentError} when neither is set.
 */
export function baseUrlArgument(flag: string | undefined, env: Readonly<Record<string, string | undefined>>): string {
  const baseUrl = flag ?? env.VOOT_BASE_URL
  if (baseUrl === undefined || baseUrl === '') {
    throw new InvalidArgumentError(
      "--base-url is required (or set VOOT_BASE_URL): the group service's address, " +
        "such as https://groups-api.dataporten.no/groups (Feide, with its /groups prefix) or https://voot.surfconext.nl (SURFconext's, without one)",
    )
  }
  return baseUrl
}
