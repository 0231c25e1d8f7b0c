/**
 * `voot-guard emulator`: runs the built-in emulator of a VOOT group service and its
 * authorization server until Ctrl-C, and prints its addresses and a token per user.
 *
 * @module
 */
import { InvalidArgumentError } from '../src/index.js'
import { INSTALLED_INVOCATION } from './invocation.js'
import type { Emulator, EmulatorDialect, EmulatorService } from '../testing/index.js'
import { integerArgument, parseCommandArguments } from './arguments.js'
import type { Command } from './command.js'
import { reportError } from './error-report.js'
import { EXIT_OK } from './exit-codes.js'
import { isAddressInUse, withPortFallback } from './port-fallback.js'
import { shellQuote } from './shell-quote.js'
import { commandStopSignal, untilAborted } from './stop-signal.js'
import { exposedHostWarning, isLoopbackListenHost } from './listen-host.js'
import { formatFields, formatTable } from './table.js'
import { printable } from './terminal-text.js'
import { runFault, runMembers, runSessions } from './emulator-control.js'

/**
 * The port the emulator prefers when `--port` is not given.
 */
export const EMULATOR_PREFERRED_PORT = 4000

const OPTIONS = {
  port: { type: 'string' },
  host: { type: 'string' },
  data: { type: 'string' },
  dialect: { type: 'string' },
  services: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const

const HELP = `Usage: voot-guard emulator [--port N] [--host H] [--dialect D | --services LIST] [--data FILE] [--json]
       voot-guard emulator members add|set|remove --user U --group G [--role R] [--active true|false]
         [--not-before ISO] [--not-after ISO] [--url URL] [--service NAME]
       voot-guard emulator fault slow|500|429|down [--user U] [--ms N] [--url URL] [--service NAME]
       voot-guard emulator fault clear [--id N] [--url URL] [--service NAME]
       voot-guard emulator sessions end <user> [--url URL] [--service NAME]

Runs an emulator of a VOOT group service and of its OAuth 2.0 / OpenID Connect
authorization server, for development and tests. It prints its addresses and a ready-made
personal token for every user of the data set, and runs until Ctrl-C (SIGINT) or SIGTERM.
Not for production: tokens live in memory only, and anyone who reaches it gets tokens.
Its console, at /_emulator/ (loopback clients only), shows the tokens and changes
memberships, faults and the rate limit; so do \`members\` and \`fault\` from a shell
(\`voot-guard emulator members --help\`). With --data, the file is read again when it changes.

Options:
  --port N       port to listen on (default: ${EMULATOR_PREFERRED_PORT}, or any free port when ${EMULATOR_PREFERRED_PORT} is taken; 0 = any)
  --host H       address to listen on (default: 127.0.0.1; any other than loopback prints a
                 warning: whoever reaches it gets tokens)
  --dialect D    the service to play: dataporten (default; Feide/Dataporten's groups API
                 under /groups, also /groups/v1) or openconext (SURFconext's OpenConext-voot
                 at the root: /me/groups, URN ids, roles prospect < member < manager < admin < owner)
  --services L   several group services at once, each under /<name> with its own tokens
                 and OAuth server: NAME=DIALECT,... (such as feide=dataporten,surf=openconext;
                 a bare dialect is its own name), each with its dialect's built-in data
  --data FILE    a JSON data set (groups, group types, users, clients) instead of the
                 built-in one of the dialect (alice, bob, carol, dave, erin, frank); not with --services
  --json         print {"baseUrl","authUrl","dialect","tokens":{user: token}} as one JSON line
                 (with --services: {"services":{name: that}})
  -h, --help     show this help
`

/**
 * The `emulator` command.
 */
export const emulatorCommand: Command = {
  name: 'emulator',
  summary: 'run the built-in group service emulator and print a token per demo user',
  help: HELP,
  async run(args, io) {
    // Subcommands that change a running emulator.
    if (args[0] === 'members') return runMembers(args.slice(1), io)
    if (args[0] === 'fault') return runFault(args.slice(1), io)
    if (args[0] === 'sessions') return runSessions(args.slice(1), io)
    let json = false
    let emulator: Emulator | undefined
    // Without a signal from the caller, the process's own SIGINT/SIGTERM stop the emulator.
    const { signal: stopped, dispose } = commandStopSignal(io.signal)
    try {
      const values = parseCommandArguments(args, OPTIONS)
      if (values.help === true) {
        io.stdout.write(HELP)
        return EXIT_OK
      }
      json = values.json === true
      const port = values.port === undefined ? undefined : integerArgument('port', values.port, { fallback: 0, min: 0, max: 65_535 })
      // Loaded only here: `check` and `groups` need none of the emulator's code.
      const { EMULATOR_DIALECTS, startEmulator, watchDataFile } = await import('../testing/internal.js')
      const dialect = dialectArgument(EMULATOR_DIALECTS, values.dialect)
      const services = values.services === undefined ? undefined : servicesArgument(EMULATOR_DIALECTS, values.services)
      if (services !== undefined && (values.dialect !== undefined || values.data !== undefined)) {
        throw new InvalidArgumentError('--services gives each service its dialect and built-in data: not with --dialect or --data')
      }
      // Before binding: the warning matters even when the address then fails to bind.
      if (values.host !== undefined && !isLoopbackListenHost(values.host)) io.stderr.write(exposedHostWarning(values.host))
      const start = (listenOn: number): Promise<Emulator> =>
        startEmulator({
          port: listenOn,
          ...(services === undefined ? { dialect } : { services }),
          ...(values.host === undefined ? {} : { host: values.host }),
          ...(values.data === undefined ? {} : { data: values.data }),
        })
      try {
        emulator = port === undefined ? await withPortFallback(EMULATOR_PREFERRED_PORT, start) : await start(port)
      } catch (error) {
        if (isAddressInUse(error)) throw new InvalidArgumentError(`--port ${port}: the address is in use (--port 0 picks a free port)`)
        throw error
      }
      const running = emulator
      const invocation = io.invocation ?? INSTALLED_INVOCATION
      if (services === undefined) {
        const tokens = tokensOf(running)
        io.stdout.write(
          json
            ? `${JSON.stringify({ baseUrl: running.baseUrl, authUrl: running.authUrl, dialect: running.dialect, tokens })}\n`
            : [
                RUNNING,
                '',
                formatService(running, { tokens, consoleUrl: running.consoleUrl, dataFile: values.data, invocation }),
                STOP,
              ].join('\n'),
        )
      } else {
        const each = running.serviceNames.map((name) => {
          const service = running.service(name)
          return { name, service, tokens: tokensOf(service) }
        })
        io.stdout.write(
          json
            ? `${JSON.stringify({
                services: Object.fromEntries(
                  each.map(({ name, service, tokens }) => [
                    name,
                    { baseUrl: service.baseUrl, authUrl: service.authUrl, dialect: service.dialect, tokens },
                  ]),
                ),
              })}\n`
            : [
                `voot-guard emulator is running (stand-ins for ${each.length} VOOT group services, each under its own path; not for production)`,
                '',
                formatFields([['console', consoleNote(running.consoleUrl, "every service, a link to each one's own")]]).trimEnd(),
                '',
                // Each service's own console is under its path (`/<name>/_emulator/`), beside its endpoints.
                ...each.map(
                  ({ name, service, tokens }) =>
                    `== ${name}\n\n${formatService(service, { tokens, consoleUrl: serviceConsoleUrl(running.consoleUrl, name), invocation })}`,
                ),
                STOP,
              ].join('\n'),
        )
      }
      // A data file is read again when it changes; a bad one leaves the data in force.
      const unwatch =
        values.data === undefined
          ? undefined
          : watchDataFile(
              values.data,
              (data) => {
                running.replaceData(data)
                if (!json) io.stdout.write(`Data file read again: ${data.users.length} users, ${data.groups.length} groups.\n`)
              },
              (error) =>
                io.stderr.write(
                  `voot-guard emulator: the data file changed but was not taken (the data in force stays): ${error.message}\n`,
                ),
            )
      await untilAborted(stopped)
      unwatch?.()
      await emulator.close()
      if (!json) io.stdout.write('Emulator stopped.\n')
      return EXIT_OK
    } catch (error) {
      await emulator?.close()
      return reportError(error, io, { command: 'emulator', json })
    } finally {
      dispose()
    }
  },
}

function dialectArgument(EMULATOR_DIALECTS: readonly EmulatorDialect[], text: string | undefined): EmulatorDialect {
  if (text === undefined) return 'dataporten'
  const dialect = EMULATOR_DIALECTS.find((each) => each === text.trim().toLowerCase())
  if (dialect === undefined) throw new InvalidArgumentError(`--dialect must be one of ${EMULATOR_DIALECTS.join(', ')}`)
  return dialect
}

/** A personal token for each user of the data set of `emulator` (or of one of its services). */
function tokensOf(emulator: EmulatorService): Record<string, string> {
  return Object.fromEntries(emulator.data.users.map((user) => [user.id, emulator.issueToken(user.id)]))
}

/** `--services`: `NAME=DIALECT` pairs, comma-separated (a bare dialect names itself). */
function servicesArgument(EMULATOR_DIALECTS: readonly EmulatorDialect[], text: string): Record<string, { dialect: EmulatorDialect }> {
  const services: Record<string, { dialect: EmulatorDialect }> = {}
  for (const item of text.split(',').map((each) => each.trim())) {
    const [name = '', given = name] = item.split('=').map((each) => each.trim())
    const dialect = EMULATOR_DIALECTS.find((each) => each === given.toLowerCase())
    if (name === '' || dialect === undefined) {
      throw new InvalidArgumentError(
        `--services takes NAME=DIALECT,... with dialects ${EMULATOR_DIALECTS.join(', ')} (got "${printable(item)}")`,
      )
    }
    if (name in services) throw new InvalidArgumentError(`--services names "${printable(name)}" twice`)
    services[name] = { dialect }
  }
  return services
}

/** The first line of the emulator's output. */
const RUNNING = 'voot-guard emulator is running (a stand-in VOOT group service; not for production)'

/** The last line of its output, once however many services it serves. */
const STOP = 'Stop with Ctrl-C.\n'

/** The console's address with what it is for, or that there is none. */
function consoleNote(url: string | undefined, what: string): string {
  return url === undefined ? 'none' : `${url}   (${what}; loopback clients only)`
}

/** The console of one of several services, under its path beside the index at `/_emulator/`. */
function serviceConsoleUrl(indexUrl: string | undefined, name: string): string | undefined {
  return indexUrl === undefined ? undefined : new URL(`/${name}/_emulator/`, indexUrl).href
}

/** The dialect, and where its group endpoints are: the root or a path (one of several services is under its name). */
function dialectNote(emulator: EmulatorService): string {
  const path = new URL(emulator.baseUrl).pathname.replace(/\/+$/, '')
  const where = path === '' ? 'at the root' : `under ${path}`
  return emulator.dialect === 'openconext' ? `openconext (SURFconext OpenConext-voot, ${where})` : `dataporten (Feide/Dataporten, ${where})`
}

/** One service's addresses, console, tokens and a try-it block. */
function formatService(
  emulator: EmulatorService,
  shown: {
    readonly tokens: Readonly<Record<string, string>>
    readonly consoleUrl: string | undefined
    readonly dataFile?: string | undefined
    readonly invocation: string
  },
): string {
  const { tokens, consoleUrl, dataFile, invocation } = shown
  const users = emulator.data.users
  const firstGroup = users.flatMap((user) => user.memberships)[0]?.groupId
  return [
    formatFields([
      ['base URL', `${emulator.baseUrl}   (--base-url, VOOT_BASE_URL)`],
      ['dialect', dialectNote(emulator)],
      ['auth URL', `${emulator.authUrl}   (OpenID Connect discovery: ${emulator.authUrl}/.well-known/openid-configuration)`],
      ['console', consoleNote(consoleUrl, 'memberships, faults, tokens, last calls')],
      ['data', dataFile ?? `built-in demo data (${emulator.dialect === 'openconext' ? 'SURFconext-style URN groups' : 'example.org'})`],
    ]).trimEnd(),
    '',
    'Personal tokens with the groups scope, valid 8 hours, forgotten when the emulator stops:',
    '',
    formatTable(
      ['USER', 'NAME', 'TOKEN'],
      users.map((user) => [user.id, user.name, tokens[user.id] ?? '']),
    ).trimEnd(),
    '',
    'Try (emulator tokens are throwaway; keep real ones out of your shell history):',
    `  export VOOT_BASE_URL=${shellQuote(emulator.baseUrl)}`,
    `  export VOOT_TOKEN=${shellQuote(tokens[users[0]?.id ?? ''] ?? '<token>')}`,
    `  ${invocation} groups`,
    ...(firstGroup === undefined ? [] : [`  ${invocation} check --group ${printable(shellQuote(firstGroup))}`]),
    '',
  ].join('\n')
}
