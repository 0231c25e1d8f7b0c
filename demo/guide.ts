/**
 * What the demo prints: the routes of the Express example, a token per demo user, and
 * `curl` lines that show each outcome of a guard. The lines are data too, so that the
 * smoke test can replay exactly what a newcomer would paste.
 *
 * @module
 */
import { CLONE_INVOCATION } from '../cli/invocation.js'
import { shellQuote } from '../cli/shell-quote.js'
import { curlCommand } from './curl-command.js'
import { formatTable } from '../cli/table.js'
import type { DemoDialect, DemoUserRequest } from './dialects.js'

/**
 * One `curl` line of the guide, with the request it makes as data.
 */
export interface DemoCurlLine {
  /** What the line shows, printed as a comment above it. */
  readonly description: string
  /** The status the app answers with. */
  readonly expectedStatus: number
  /** The shell command, ready to paste. */
  readonly command: string
  /** The URL the command requests (GET). */
  readonly url: string
  /** The request headers the command sends. */
  readonly headers: Readonly<Record<string, string>>
}

/**
 * What {@link demoGuide} lays out.
 */
export interface DemoGuideInput {
  readonly appUrl: string
  readonly baseUrl: string
  readonly authUrl: string
  /** A personal token per demo user, in the order to list them. */
  readonly tokens: Readonly<Record<string, string>>
  /** A token of alice's for which the emulator answers 500. */
  readonly faultToken: string
  /** The example served, as the guide names it. Default the Express example. */
  readonly example?: string
  /** The shared tier's Redis (`--redis`), and whether the demo started it. */
  readonly redis?: { readonly url: string; readonly started: boolean }
  /** What the dialect served shows: routes, users, the requests to try. */
  readonly dialect: DemoDialect
}

/**
 * The `curl` lines of the guide: an allow, a 403, a 401, a 503 with a fault injected, and
 * a 403 for a membership that has ended.
 */
export function demoCurlLines(input: DemoGuideInput): DemoCurlLine[] {
  const line = (description: string, expectedStatus: number, path: string, token?: string): DemoCurlLine => {
    const url = `${input.appUrl}${path}`
    const headers: Record<string, string> = token === undefined ? {} : { authorization: `Bearer ${token}` }
    const command = curlCommand('GET', url, token === undefined ? {} : { Authorization: `Bearer ${token}` })
    return { description, expectedStatus, command, url, headers }
  }
  const { allowed, refused, lesson } = input.dialect
  const userLine = (request: DemoUserRequest): DemoCurlLine[] => {
    const token = input.tokens[request.user]
    return token === undefined ? [] : [line(request.description, request.expectedStatus, request.path, token)]
  }
  return [
    ...userLine(allowed),
    ...userLine(refused),
    line('no token: 401 with a WWW-Authenticate challenge', 401, allowed.path),
    line(
      "a token of alice's for which the demo told the emulator to answer 500: the guard fails closed, 503 with Retry-After",
      503,
      allowed.path,
      input.faultToken,
    ),
    ...userLine(lesson),
  ]
}

/**
 * The text the demo prints.
 */
export function demoGuide(input: DemoGuideInput, curlLines: readonly DemoCurlLine[]): string {
  const users = Object.entries(input.tokens)
  const { routes, who, check } = input.dialect
  const checkToken = input.tokens[check.user]
  return [
    `voot-guard demo: ${input.example ?? 'the Express example (examples/express/app.ts)'} guarded by voot-guard,`,
    `asking the built-in emulator of a VOOT group service: ${input.dialect.service}.`,
    '',
    `  app        ${input.appUrl}`,
    `  emulator   ${input.baseUrl}   (OAuth/OpenID Connect at ${input.authUrl})`,
    ...(input.redis === undefined
      ? []
      : [
          `  redis      ${input.redis.url}   (the shared cache tier${input.redis.started ? '; a redis-server of the demo, gone when it stops' : ''})`,
        ]),
    '',
    'Routes:',
    formatTable(['ROUTE', 'ALLOWS'], routes).trimEnd().replace(/^/gm, '  '),
    '',
    'Tokens of the demo users (valid 8 hours; new ones at every start):',
    formatTable(
      ['USER', 'TOKEN', 'WHO'],
      [
        ...users.map(([user, token]) => [user, token, who[user] ?? '']),
        ['(fault)', input.faultToken, "alice's, but the emulator answers 500 for it"],
      ],
    )
      .trimEnd()
      .replace(/^/gm, '  '),
    '',
    'Try:',
    ...curlLines.flatMap((line) => [`  # ${line.description}`, `  ${line.command}`]),
    '',
    ...(checkToken === undefined
      ? []
      : [
          `${check.user}'s decision from the command line (exit code 0 allowed, 1 denied, 2 error):`,
          `  VOOT_TOKEN=${shellQuote(checkToken)} ${CLONE_INVOCATION} check --base-url ${shellQuote(input.baseUrl)} --group ${shellQuote(check.group)} --role ${shellQuote(check.role)}`,
          '',
        ]),
    ...(input.redis === undefined
      ? []
      : [
          'The answers the guard fetched are in Redis too, under keys that are HMACs of the tokens, and',
          'encrypted (another instance with the same secret would read them instead of asking):',
          `  redis-cli -u ${shellQuote(input.redis.url)} --scan --pattern 'vg:*'`,
          '',
        ]),
    'Stop with Ctrl-C.',
    '',
  ].join('\n')
}
