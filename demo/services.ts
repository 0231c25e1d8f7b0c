/**
 * The demo of several group services (`npm start -- --services feide,openconext`): one
 * emulator serving Feide (Dataporten) under /feide and SURFconext (OpenConext) under
 * /openconext, each with its own tokens, and an Express app whose one route admits a Feide
 * admin of one group or a SURFconext admin of another (`createServiceResolvers`). The
 * emulator's tokens are opaque, not JWTs, so a request names its token's service in a
 * header; the token goes to that service alone, never tried on the other. The story's
 * `curl` lines are data too, so that a test replays exactly what a newcomer pastes.
 *
 * @module
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import express from 'express'
import { anyOf, createServiceResolvers, group, InvalidOptionError, type ServiceResolvers } from 'voot-guard'
import { createGuard } from 'voot-guard/express'
import { ORG_ID, PROJECT_BOARD_GROUP_ID, startEmulator, type Emulator } from 'voot-guard/testing'
import { withPortFallback } from '../cli/port-fallback.js'
import { curlCommand } from './curl-command.js'

/** The services the demo serves, as `--services` names them (and the emulator's paths). */
export const DEMO_SERVICES = ['feide', 'openconext'] as const

/** One of {@link DEMO_SERVICES}. */
export type DemoService = (typeof DEMO_SERVICES)[number]

/** The header a request names its token's service in. */
export const SERVICE_HEADER = 'X-Group-Service'

/** One line of the story: a request to the app, and the status it gets. */
export interface DemoServicesCurlLine {
  readonly description: string
  readonly expectedStatus: number
  readonly command: string
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
}

/** A running demo of several services. */
export interface DemoServices {
  readonly appUrl: string
  readonly emulator: Emulator
  readonly curlLines: readonly DemoServicesCurlLine[]
  /** What the demo prints. */
  readonly guide: string
  /** Stops the app and the emulator. Safe to call more than once. */
  close(): Promise<void>
}

/** Options of {@link startDemoServices}. */
export interface DemoServicesOptions {
  /** The app's port; default 3000, or any free port when it is taken. */
  readonly port?: number
  /** The emulator's port; default 4000, or any free port when it is taken. */
  readonly emulatorPort?: number
}

const NAMES: Readonly<Record<DemoService, string>> = { feide: 'Feide', openconext: 'SURFconext' }
const ROUTE = '/api/board'

/** The app: one route, a Feide admin of {@link ORG_ID} or a SURFconext admin of the project board. */
function boardApp(services: ServiceResolvers): express.Express {
  const guard = createGuard({
    services,
    // The emulator's tokens are opaque: the request says which service issued its token.
    // Without a name, no service is chosen and none is asked (401).
    getToken: (req) => {
      const header = req.get('authorization')
      if (header === undefined || !header.startsWith('Bearer ')) return undefined
      const named = req.get(SERVICE_HEADER)
      const service = DEMO_SERVICES.find((each) => each === named)
      return { token: header.slice('Bearer '.length), service }
    },
  })
  const app = express()
  app.get(ROUTE, guard.require(anyOf(group(ORG_ID, 'admin'), group(PROJECT_BOARD_GROUP_ID, 'admin'))), (req, res) => {
    res.json({ message: 'Welcome to the board', groupId: req.voot?.decision.groupId })
  })
  return app
}

/** The story's lines for an app at `appUrl`, with a token per service and user. */
export function demoServicesCurlLines(
  appUrl: string,
  tokens: Readonly<Record<DemoService, Readonly<Record<string, string>>>>,
): DemoServicesCurlLine[] {
  const url = `${appUrl}${ROUTE}`
  const line = (description: string, expectedStatus: number, headers: Record<string, string>): DemoServicesCurlLine => ({
    description,
    expectedStatus,
    url,
    headers,
    command: curlCommand('GET', url, headers),
  })
  // `named`: the service the request names (default the token's own), or none.
  const as = (service: DemoService, user: string, named: DemoService | null = service) => ({
    Authorization: `Bearer ${tokens[service][user] ?? ''}`,
    ...(named === null ? {} : { [SERVICE_HEADER]: named }),
  })
  return [
    line('alice at Feide, an employee (admin) of example.org: 200', 200, as('feide', 'alice')),
    line('alice at SURFconext, an admin of the project board: 200', 200, as('openconext', 'alice')),
    line('bob at Feide, a student: a plain member of example.org, not an admin: 403', 403, as('feide', 'bob')),
    line(`alice's Feide token without ${SERVICE_HEADER}: no service chosen, none asked: 401`, 401, as('feide', 'alice', null)),
    line(
      "alice's Feide token said to be SURFconext's: it goes to SURFconext alone, which refuses it: 401",
      401,
      as('feide', 'alice', 'openconext'),
    ),
  ]
}

function formatGuide(appUrl: string, emulator: Emulator, lines: readonly DemoServicesCurlLine[]): string {
  const service = (name: DemoService) => emulator.service(name)
  return [
    'Two group services in one app: Feide and SURFconext (see docs/services/several.md)',
    '',
    `  app                 ${appUrl}`,
    ...DEMO_SERVICES.flatMap((name) => [
      `  ${`${NAMES[name]} groups`.padEnd(19)} ${service(name).baseUrl}`,
      `  ${`${NAMES[name]} OAuth`.padEnd(19)} ${service(name).authUrl}`,
    ]),
    `  console             ${emulator.consoleUrl ?? '(none)'}   (a section per service)`,
    '',
    `GET ${ROUTE} admits either:`,
    `  a Feide admin of ${ORG_ID} (an employee), or`,
    `  a SURFconext admin of ${PROJECT_BOARD_GROUP_ID}`,
    `Each service issues its own tokens. A request names its token's service in ${SERVICE_HEADER},`,
    'and the token goes to that service alone: it is never tried on the other.',
    '',
    ...lines.flatMap((line) => [`  # ${line.description}`, `  ${line.command}`, '']),
    'Stop with Ctrl-C.',
    '',
  ].join('\n')
}

/**
 * Starts the emulator of both services and the app on them, and returns the story to print.
 *
 * @throws {@link InvalidOptionError} for an invalid port; the listen error when a port given
 *   explicitly is taken.
 * @example
 * ```ts
 * const demo = await startDemoServices()
 * process.stdout.write(demo.guide)
 * ```
 */
export async function startDemoServices(options: DemoServicesOptions = {}): Promise<DemoServices> {
  for (const name of ['port', 'emulatorPort'] as const) {
    const port = options[name]
    if (port !== undefined && (!Number.isInteger(port) || port < 0 || port > 65_535)) {
      throw new InvalidOptionError(name, 'must be an integer from 0 to 65535')
    }
  }
  const startOn = (port: number): Promise<Emulator> =>
    startEmulator({ port, services: { feide: { dialect: 'dataporten' }, openconext: { dialect: 'openconext' } } })
  const emulator = options.emulatorPort === undefined ? await withPortFallback(4000, startOn) : await startOn(options.emulatorPort)
  const services = createServiceResolvers({
    services: {
      feide: { baseUrl: emulator.service('feide').baseUrl },
      openconext: { baseUrl: emulator.service('openconext').baseUrl },
    },
    groupPrefixes: { 'fc:': 'feide', 'urn:collab:': 'openconext' },
  })
  const server: Server = createServer(boardApp(services))
  try {
    const listenOn = (port: number): Promise<void> =>
      new Promise((resolve, reject) => {
        server.once('error', reject)
        server.listen(port, '127.0.0.1', () => {
          server.off('error', reject)
          resolve()
        })
      })
    await (options.port === undefined ? withPortFallback(3000, listenOn) : listenOn(options.port))
  } catch (error) {
    await services.close()
    await emulator.close()
    throw error
  }
  const appUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const tokenOf = (name: DemoService, user: string): [string, string] => [user, emulator.service(name).issueToken(user)]
  const tokens = {
    feide: Object.fromEntries([tokenOf('feide', 'alice'), tokenOf('feide', 'bob')]),
    openconext: Object.fromEntries([tokenOf('openconext', 'alice')]),
  }
  const curlLines = demoServicesCurlLines(appUrl, tokens)
  let closing: Promise<void> | undefined
  return {
    appUrl,
    emulator,
    curlLines,
    guide: formatGuide(appUrl, emulator, curlLines),
    close() {
      closing ??= (async () => {
        const closed = new Promise<void>((resolve) => server.close(() => resolve()))
        // Keep-alive connections (curl, browsers) would hold server.close() open.
        server.closeAllConnections()
        await closed
        await services.close()
        await emulator.close()
      })()
      return closing
    },
  }
}
