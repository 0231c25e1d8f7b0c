/**
 * `voot-guard emulator members ...`, `voot-guard emulator fault ...` and
 * `voot-guard emulator sessions end ...`: change a running
 * emulator from a shell, through the JSON endpoints of its console (`/_emulator/api/`), as
 * the console's page does.
 *
 * @module
 */
import { InvalidArgumentError } from '../src/index.js'
import { parseCommandArguments } from './arguments.js'
import type { CliIo as CommandIo } from './io.js'
import { reportError } from './error-report.js'
import { EXIT_ERROR, EXIT_OK } from './exit-codes.js'

/** Where a running emulator is looked for without `--url` (or `VOOT_EMULATOR_URL`). */
export const DEFAULT_EMULATOR_URL = 'http://127.0.0.1:4000'

const MEMBER_OPTIONS = {
  url: { type: 'string' },
  service: { type: 'string' },
  user: { type: 'string' },
  group: { type: 'string' },
  role: { type: 'string' },
  active: { type: 'string' },
  'not-before': { type: 'string' },
  'not-after': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const

const FAULT_OPTIONS = {
  url: { type: 'string' },
  service: { type: 'string' },
  user: { type: 'string' },
  ms: { type: 'string' },
  id: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const

export const MEMBERS_HELP = `Usage: voot-guard emulator members add|set|remove --user U --group G [--role R]
         [--active true|false] [--not-before ISO] [--not-after ISO] [--url URL] [--service NAME]

Changes a membership in a running emulator (its console's JSON endpoint): add one, set its
role, dates or active flag, or remove it. The next call to the group service sees it.

  --url URL   the emulator (default: VOOT_EMULATOR_URL, else ${DEFAULT_EMULATOR_URL})
  --service NAME   the service, when the emulator serves several (startEmulator({ services }))
  --role R    the role (add: default member)
  --not-before, --not-after ISO   dates such as 2026-12-01T00:00:00Z; "" removes one
`

const SESSION_OPTIONS = {
  url: { type: 'string' },
  service: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const

export const SESSIONS_HELP = `Usage: voot-guard emulator sessions end <user> [--url URL] [--service NAME]

Ends a user's sessions at a running emulator's authorization server: each client registered
with a backchannelLogoutUri is sent a Logout Token (OpenID Connect Back-Channel Logout 1.0),
one per session of the user, or one naming the user when the emulator knows of none. Prints
which clients were told and what they answered.

  --url URL   the emulator (default: VOOT_EMULATOR_URL, else ${DEFAULT_EMULATOR_URL})
  --service NAME   the service, when the emulator serves several (startEmulator({ services }))
`

export const FAULT_HELP = `Usage: voot-guard emulator fault slow|500|429|down [--user U] [--ms N] [--url URL] [--service NAME]
       voot-guard emulator fault clear [--id N] [--url URL] [--service NAME]

Switches a fault of a running emulator's group service on, for everyone or one user:
slow (each answer waits --ms, default 2000), 500, 429 (with Retry-After: 5) or down (the
connection is reset). clear switches one off (--id, as the console lists them) or all.

  --url URL   the emulator (default: VOOT_EMULATOR_URL, else ${DEFAULT_EMULATOR_URL})
  --service NAME   the service, when the emulator serves several (startEmulator({ services }))
`

/** Where the command goes: `--url` and `--service`. */
interface Target {
  readonly url?: string | undefined
  readonly service?: string | undefined
}

/** A service's name, as `startEmulator({ services })` takes it: its path segment. */
const SERVICE_NAME = /^[a-z][a-z0-9-]{0,31}$/

async function post(io: CommandIo, target: Target, path: string, body: object): Promise<number> {
  const { service } = target
  if (service !== undefined && !SERVICE_NAME.test(service)) {
    throw new InvalidArgumentError('--service: a service name (lower-case letters, digits and -, starting with a letter)')
  }
  // One of several services keeps its console under its own path.
  const consolePath = service === undefined ? '/_emulator' : `/${service}/_emulator`
  const url = `${(target.url ?? io.env['VOOT_EMULATOR_URL'] ?? DEFAULT_EMULATOR_URL).replace(/\/+$/, '')}${consolePath}/api/${path}`
  let response: Response
  try {
    response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(10_000),
    })
  } catch {
    throw new InvalidArgumentError(`No emulator answers at ${url} (start one with \`voot-guard emulator\`, or give --url)`)
  }
  const answer = (await response.json().catch(() => undefined)) as { message?: unknown } | undefined
  const message = typeof answer?.message === 'string' ? answer.message : `the emulator answered ${response.status}`
  if (!response.ok) {
    io.stderr.write(`voot-guard emulator: ${message}\n`)
    return EXIT_ERROR
  }
  io.stdout.write(`${message}\n`)
  return EXIT_OK
}

/** `members add|set|remove ...`. */
export async function runMembers(args: readonly string[], io: CommandIo): Promise<number> {
  try {
    const [action, ...rest] = args
    if (action === undefined || action === '--help' || action === '-h') {
      io.stdout.write(MEMBERS_HELP)
      return action === undefined ? EXIT_ERROR : EXIT_OK
    }
    if (action !== 'add' && action !== 'set' && action !== 'remove') throw new InvalidArgumentError('members: add, set or remove')
    const values = parseCommandArguments(rest, MEMBER_OPTIONS)
    if (values.user === undefined || values.group === undefined) throw new InvalidArgumentError('members: --user and --group are needed')
    if (values.active !== undefined && values.active !== 'true' && values.active !== 'false')
      throw new InvalidArgumentError('--active: true or false')
    return await post(io, values, 'members', {
      action,
      user: values.user,
      group: values.group,
      ...(values.role === undefined ? {} : { role: values.role }),
      ...(values.active === undefined ? {} : { active: values.active === 'true' }),
      ...(values['not-before'] === undefined ? {} : { notBefore: values['not-before'] }),
      ...(values['not-after'] === undefined ? {} : { notAfter: values['not-after'] }),
    })
  } catch (error) {
    return reportError(error, io, { command: 'emulator', json: false })
  }
}

/** `fault slow|500|429|down ...` and `fault clear ...`. */
export async function runFault(args: readonly string[], io: CommandIo): Promise<number> {
  try {
    const [which, ...rest] = args
    if (which === undefined || which === '--help' || which === '-h') {
      io.stdout.write(FAULT_HELP)
      return which === undefined ? EXIT_ERROR : EXIT_OK
    }
    const values = parseCommandArguments(rest, FAULT_OPTIONS)
    const number = (name: string, text: string | undefined): number | undefined => {
      if (text === undefined) return undefined
      if (!/^\d+$/.test(text)) throw new InvalidArgumentError(`--${name}: a whole number`)
      return Number(text)
    }
    const id = number('id', values.id)
    const ms = number('ms', values.ms)
    if (which === 'clear') return await post(io, values, 'faults', { action: 'clear', ...(id === undefined ? {} : { id }) })
    return await post(io, values, 'faults', {
      action: 'set',
      fault: which,
      ...(values.user === undefined ? {} : { user: values.user }),
      ...(ms === undefined ? {} : { ms }),
    })
  } catch (error) {
    return reportError(error, io, { command: 'emulator', json: false })
  }
}

/** `sessions end <user> ...`. */
export async function runSessions(args: readonly string[], io: CommandIo): Promise<number> {
  try {
    const [action, ...rest] = args
    if (action === undefined || action === '--help' || action === '-h') {
      io.stdout.write(SESSIONS_HELP)
      return action === undefined ? EXIT_ERROR : EXIT_OK
    }
    if (action !== 'end') throw new InvalidArgumentError('sessions: end <user>')
    const [user, ...options] = rest
    if (user === undefined || user.startsWith('-')) throw new InvalidArgumentError('sessions end: name the user, as in sessions end alice')
    const values = parseCommandArguments(options, SESSION_OPTIONS)
    return await post(io, values, 'sessions', { action: 'end', user })
  } catch (error) {
    return reportError(error, io, { command: 'emulator', json: false })
  }
}
