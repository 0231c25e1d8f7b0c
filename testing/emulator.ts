/**
 * The emulator: one loopback HTTP server with the group endpoints of a dialect (Dataporten's
 * under `/groups` and `/groups/v1`, or OpenConext's at the root) and the authorization
 * server beside them, plus the controls a test needs (tokens, faults, latency, a rate
 * limit, a request log and an injectable clock); or several such services side by side,
 * each under its own path (`services`). One service is made in emulated-service.ts.
 *
 * @module
 */
import { createServer, type RequestListener, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { InvalidArgumentError, InvalidOptionError } from '../src/index.js'
import { rejectUnknownKeys } from '../src/internal.js'
import { INTERNAL_ERROR, NOT_FOUND, writeAnswer } from './answer.js'
import { createConsoleIndex } from './console/console-index.js'
import { CONSOLE_PATH } from './console/console-routes.js'
import { loadEmulatorData } from './data/data-file.js'
import { validateEmulatorData, type EmulatorData } from './data/data.js'
import { defaultData } from './data/default-data.js'
import { openConextData } from './data/openconext-data.js'
import {
  checkServiceOptions,
  createEmulatedService,
  type EmulatedService,
  type EmulatorService,
  type ServiceSetup,
} from './emulated-service.js'
import { dialectRoutes, type EmulatorDialect } from './group-service/dialect.js'

export type { EmulatorService, IssueClientTokenOptions, IssueTokenOptions } from './emulated-service.js'

/**
 * Options of {@link startEmulator}.
 *
 * @example
 * ```ts
 * await startEmulator({ data: './groups.json', latency: 20, rateLimit: { limit: 100, windowMs: 1000 } })
 * await startEmulator({ dialect: 'openconext' }) // SURFconext's routes at the root, URN ids, five roles
 * await startEmulator({ services: { feide: {}, surf: { dialect: 'openconext' } } }) // both, under /feide and /surf
 * ```
 */
export interface EmulatorOptions {
  /**
   * The real service to play. `'dataporten'` (default): the Feide/Dataporten groups API
   * under `/groups` (and `/groups/v1`). `'openconext'`: SURFconext's OpenConext-voot at the
   * root (`/me/groups`, `/me/groups/{id}`), whole groups with `sourceID`, Spring's error
   * bodies. It also picks the default data ({@link defaultData} or {@link openConextData}).
   */
  dialect?: EmulatorDialect
  /** Port to listen on. Default 0 (any free port). */
  port?: number
  /** Address to listen on. Default `'127.0.0.1'`. */
  host?: string
  /** A data set, or the path of a JSON file with one. Default: the dialect's ({@link defaultData} or {@link openConextData}). */
  data?: EmulatorData | string
  /** Milliseconds added to every group-endpoint answer. Default 0. */
  latency?: number
  /** Per client address: past `limit` requests in `windowMs`, answer 429 with an empty body and `Retry-After`. Default: none. */
  rateLimit?: { limit: number; windowMs: number }
  /** Clock for token expiry, dated memberships, the rate limit and log times. Default `Date.now`. */
  now?: () => number
  /**
   * The console at `/_emulator/` (a page, and JSON endpoints for scripts and `voot-guard
   * emulator members|fault`), served to loopback clients only. Default `true`.
   */
  console?: boolean
  /**
   * Several group services at once, by name, each under its own path `/<name>` of the one
   * server: its own dialect, data, tokens, faults, rate limit, request log, console and
   * authorization server (issuer `<origin>/<name>`). A token one service issued is unknown
   * to the others (401). `emulator.service(name)` gives each; the emulator's own members
   * are its first service's. With `services`, `dialect`, `data`, `latency` and `rateLimit`
   * are given per service. Names: lower-case letters, digits and `-`; at most 16 services.
   */
  services?: Readonly<Record<string, EmulatorServiceOptions>>
}

/** Every key of {@link EmulatorOptions}. */
const OPTION_KEYS: readonly (keyof EmulatorOptions)[] = [
  'dialect',
  'port',
  'host',
  'data',
  'latency',
  'rateLimit',
  'now',
  'console',
  'services',
]
/**
 * A running emulator.
 *
 * @example
 * ```ts
 * const emulator = await startEmulator()
 * const token = emulator.issueToken('alice')
 * const res = await fetch(`${emulator.baseUrl}/me/groups`, { headers: { authorization: `Bearer ${token}` } })
 * await emulator.close()
 * ```
 */
export interface Emulator extends EmulatorService {
  /** The console's address (`<origin>/_emulator/`), or `undefined` with `console: false`. */
  readonly consoleUrl: string | undefined
  /**
   * The names of the services, in the order of the `services` option; empty for an
   * emulator of one service (the emulator itself).
   */
  readonly serviceNames: readonly string[]
  /**
   * One of the services of `startEmulator({ services })`, by name.
   *
   * @throws {@link voot-guard!InvalidArgumentError} for a name the emulator does not serve
   *   (and for any name when it serves one service, without `services`).
   */
  service(name: string): EmulatorService
  /** Stops the server, destroying open and hanging connections. Resolves once closed. */
  close(): Promise<void>
}

/**
 * One service of {@link EmulatorOptions.services}: what a one-service emulator takes per
 * service.
 *
 * @example
 * ```ts
 * const surf: EmulatorServiceOptions = { dialect: 'openconext', latency: 20 }
 * ```
 */
export interface EmulatorServiceOptions {
  /** The real service to play, as {@link EmulatorOptions.dialect}. Default `'dataporten'`. */
  dialect?: EmulatorDialect
  /** Its data set, or the path of a JSON file with one. Default: the dialect's. */
  data?: EmulatorData | string
  /** Milliseconds added to every group-endpoint answer. Default 0. */
  latency?: number
  /** Its rate limit per client address, as {@link EmulatorOptions.rateLimit}. Default: none. */
  rateLimit?: { limit: number; windowMs: number }
}

/** Every key of {@link EmulatorServiceOptions}. */
const SERVICE_KEYS: readonly (keyof EmulatorServiceOptions)[] = ['dialect', 'data', 'latency', 'rateLimit']
/** A service's name: one path segment, and never the console's. */
const SERVICE_NAME = /^[a-z][a-z0-9-]{0,31}$/
/** Services of one emulator, at most. */
const MAX_SERVICES = 16

/**
 * Starts an emulator of a VOOT group service (and its authorization server) on loopback.
 *
 * @throws {@link voot-guard!InvalidOptionError} for an invalid option, including an invalid data set
 *   (the message names the bad field, such as `options.data: users[2].memberships[0].groupId: unknown group "x"`).
 * @example
 * ```ts
 * import { startEmulator } from 'voot-guard/testing'
 *
 * const emulator = await startEmulator()
 * const resolver = createMembershipResolver({ baseUrl: emulator.baseUrl })
 * await resolver.membership(emulator.issueToken('alice'), 'fc:org:example.org') // { basic: 'admin', ... }
 * await emulator.close()
 *
 * // Feide and SURFconext side by side, each its own tokens: http://127.0.0.1:<port>/feide/groups and /surf
 * const both = await startEmulator({ services: { feide: { dialect: 'dataporten' }, surf: { dialect: 'openconext' } } })
 * const surfToken = both.service('surf').issueToken('alice') // refused (401) by both.service('feide')
 * ```
 */
export async function startEmulator(options: EmulatorOptions = {}): Promise<Emulator> {
  if (typeof options !== 'object' || options === null) throw new InvalidOptionError('(options)', 'must be an object')
  rejectUnknownKeys('', options, OPTION_KEYS)
  const { port = 0, host = '127.0.0.1', now = Date.now } = options
  // Throws for an unknown dialect, naming the option.
  if (options.services === undefined) dialectRoutes(options.dialect ?? 'dataporten')
  if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new InvalidOptionError('port', 'must be an integer from 0 to 65535')
  if (typeof host !== 'string' || host === '') throw new InvalidOptionError('host', 'must be a non-empty string')
  if (options.services === undefined) checkServiceOptions('', options.latency ?? 0, options.rateLimit)
  if (typeof now !== 'function') throw new InvalidOptionError('now', 'must be a function returning ms since the epoch')
  if (options.console !== undefined && typeof options.console !== 'boolean')
    throw new InvalidOptionError('console', 'must be true or false')
  const showConsole = options.console !== false
  const setups =
    options.services === undefined
      ? [await serviceSetup('', options, { now, console: showConsole, prefix: '' })]
      : await servicesSetups(options, { now, console: showConsole })

  // Set once the server listens and knows its origin; the listener below closes over it first.
  // eslint-disable-next-line prefer-const
  let handle: RequestListener | undefined
  const server = createServer((req, res) => {
    if (handle === undefined) writeAnswer(res, INTERNAL_ERROR)
    else handle(req, res)
  })
  await listen(server, port, host)
  const address = server.address() as AddressInfo
  const origin = `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`
  const services = setups.map(([, setup]) => createEmulatedService(setup, origin))
  const names = options.services === undefined ? [] : setups.map(([name]) => name)
  handle =
    options.services === undefined
      ? (req, res) => void services[0]?.handle(req, res, req.url ?? '/')
      : routeByPrefix(names, services, showConsole)
  const [first] = services
  if (first === undefined) {
    // Not reached: the setups hold one service at least.
    server.close()
    throw new InvalidOptionError('services', 'must name at least one service')
  }

  // One face per service, so that `emulator.service('surf')` is the same object each time.
  const faces = services.map((service) => service.face())
  let closing: Promise<void> | undefined
  // The first service's face (its getters kept, so `requests` and `rateLimit` stay live), and the server's members.
  return Object.assign(first.face(), {
    consoleUrl: !showConsole ? undefined : `${origin}${CONSOLE_PATH}/`,
    serviceNames: names,
    service(name: string): EmulatorService {
      const at = names.indexOf(name)
      const service = at === -1 ? undefined : faces[at]
      if (service === undefined) {
        throw new InvalidArgumentError(
          `service: no service ${JSON.stringify(name)}${names.length === 0 ? ' (this emulator serves one, without `services`)' : ` (services: ${names.join(', ')})`}`,
        )
      }
      return service
    },
    close() {
      closing ??= new Promise<void>((resolve, reject) => {
        server.close((err) => (err === undefined ? resolve() : reject(err)))
        // Hanging and slow answers would keep server.close() waiting forever.
        server.closeAllConnections()
      })
      return closing
    },
  })
}

/** One service's setup from its options; `where` names them in errors (`''` or `'services.surf.'`). */
async function serviceSetup(
  where: string,
  options: EmulatorServiceOptions,
  shared: { readonly now: () => number; readonly console: boolean; readonly prefix: string },
): Promise<[string, ServiceSetup]> {
  const { dialect = 'dataporten', latency = 0 } = options
  try {
    dialectRoutes(dialect)
  } catch (error) {
    if (where === '') throw error
    throw new InvalidOptionError(`${where}dialect`, (error as Error).message.replace(/^[^:]*: /, ''))
  }
  checkServiceOptions(where, latency, options.rateLimit)
  const data = await resolveData(`${where}data`, options.data ?? (dialect === 'openconext' ? openConextData : defaultData))
  return [shared.prefix.slice(1), { dialect, data, latency, rateLimit: options.rateLimit, ...shared }]
}

/** The setups of `options.services`, each checked and named with its service. */
async function servicesSetups(
  options: EmulatorOptions,
  shared: { readonly now: () => number; readonly console: boolean },
): Promise<[string, ServiceSetup][]> {
  const { services } = options
  if (typeof services !== 'object' || services === null || Array.isArray(services)) {
    throw new InvalidOptionError('services', 'must be an object of services by name, such as { feide: { dialect: "dataporten" } }')
  }
  const given = (['dialect', 'data', 'latency', 'rateLimit'] as const).find((key) => options[key] !== undefined)
  if (given !== undefined) throw new InvalidOptionError(given, 'give it per service, in `services`, when there are several')
  const names = Object.keys(services)
  if (names.length === 0 || names.length > MAX_SERVICES) throw new InvalidOptionError('services', `must name 1 to ${MAX_SERVICES} services`)
  const setups: [string, ServiceSetup][] = []
  for (const name of names) {
    if (!SERVICE_NAME.test(name)) {
      throw new InvalidOptionError(
        `services.${name}`,
        'a service name is lower-case letters, digits and -, starting with a letter (it is its path)',
      )
    }
    const serviceOptions = services[name]
    if (typeof serviceOptions !== 'object' || serviceOptions === null) throw new InvalidOptionError(`services.${name}`, 'must be an object')
    rejectUnknownKeys(`services.${name}.`, serviceOptions, SERVICE_KEYS)
    setups.push(await serviceSetup(`services.${name}.`, serviceOptions, { ...shared, prefix: `/${name}` }))
  }
  return setups
}

/**
 * The request listener of several services: `/<name>/...` to the service of that name,
 * its prefix taken off; the console's index at `/_emulator/`; anything else a 404.
 */
function routeByPrefix(names: readonly string[], services: readonly EmulatedService[], showConsole: boolean): RequestListener {
  const index = showConsole
    ? createConsoleIndex(
        names.map((name, at) => {
          const face = services[at]?.face()
          return {
            name,
            dialect: face?.dialect ?? 'dataporten',
            baseUrl: face?.baseUrl ?? '',
            authUrl: face?.authUrl ?? '',
            consoleUrl: services[at]?.consoleUrl ?? '',
          }
        }),
      )
    : undefined
  return (req, res) => {
    const rawUrl = req.url ?? '/'
    const end = rawUrl.slice(1).search(/[/?]/)
    const name = end === -1 ? rawUrl.slice(1) : rawUrl.slice(1, end + 1)
    const at = rawUrl.startsWith('/') ? names.indexOf(name) : -1
    const service = services[at]
    if (service !== undefined) {
      const rest = rawUrl.slice(name.length + 1)
      void service.handle(req, res, rest.startsWith('/') ? rest : `/${rest}`)
      return
    }
    void (async () => {
      try {
        if (!((await index?.handle(req, res)) ?? false)) {
          req.resume()
          writeAnswer(res, NOT_FOUND)
        }
      } catch {
        if (!res.headersSent) writeAnswer(res, INTERNAL_ERROR)
        else res.destroy()
      }
    })()
  }
}

async function resolveData(option: string, data: EmulatorData | string): Promise<EmulatorData> {
  try {
    if (typeof data === 'string') return await loadEmulatorData(data)
    return validateEmulatorData(data)
  } catch (err) {
    throw new InvalidOptionError(option, (err as Error).message, { cause: err })
  }
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => {
      server.off('error', reject)
      resolve()
    })
  })
}
