/**
 * The emulator: one loopback HTTP server with the group endpoints of a dialect (Dataporten's
 * under `/groups` and `/groups/v1`, or OpenConext's at the root) and the authorization
 * server beside them, plus the controls a test needs (tokens, faults, latency, a rate
 * limit, a request log and an injectable clock).
 *
 * @module
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { InvalidArgumentError, InvalidOptionError } from '../src/index.js'
import { rejectUnknownKeys } from '../src/adapter-kit.js'
import { INTERNAL_ERROR, NOT_FOUND, writeAnswer } from './answer.js'
import { identifyCaller } from './bearer-auth.js'
import { loadEmulatorData } from './data/data-file.js'
import { validateEmulatorData, type EmulatorData } from './data/data.js'
import { defaultData } from './data/default-data.js'
import { dialectRoutes, type EmulatorDialect } from './group-service/dialect.js'
import { FaultRegistry, type FaultController } from './group-service/faults.js'
import { createGroupService } from './group-service/group-service.js'
import { createOAuthServer, type OAuthServer } from './oauth-server/oauth-server.js'
import { openConextData } from './data/openconext-data.js'
import { createRateLimiter, type RateLimiter } from './group-service/rate-limiter.js'
import { RequestLog, type RecordedRequest } from './request-log.js'
import { TokenStore } from './token-store.js'
import { createConsoleRoutes, CONSOLE_PATH } from './console/console-routes.js'

/**
 * Options of {@link startEmulator}.
 *
 * @example
 * ```ts
 * await startEmulator({ data: './groups.json', latency: 20, rateLimit: { limit: 100, windowMs: 1000 } })
 * await startEmulator({ dialect: 'openconext' }) // SURFconext's routes at the root, URN ids, five roles
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
}

/** Every key of {@link EmulatorOptions}. */
const OPTION_KEYS: readonly (keyof EmulatorOptions)[] = ['dialect', 'port', 'host', 'data', 'latency', 'rateLimit', 'now', 'console']
/** Every key of {@link IssueTokenOptions} and {@link IssueClientTokenOptions}. */
const ISSUE_KEYS: readonly (keyof IssueTokenOptions)[] = ['scopes', 'expiresIn', 'clientId']

/**
 * Options of {@link Emulator.issueToken}.
 *
 * @example
 * ```ts
 * emulator.issueToken('alice', { scopes: ['openid', 'userid'], expiresIn: 60 })
 * ```
 */
export interface IssueTokenOptions {
  /** Default `['openid', 'userid', 'profile', 'groups']`. */
  scopes?: string[]
  /** Lifetime in seconds. Default 28 800 (8 hours, as the real service). */
  expiresIn?: number
  /** Default: the data set's first client, else `'emulator-client'`. */
  clientId?: string
}

/**
 * Options of {@link Emulator.issueClientToken}.
 *
 * @example
 * ```ts
 * emulator.issueClientToken({ clientId: 'demo-service' })
 * ```
 */
export interface IssueClientTokenOptions {
  /** Default `['groups']` (a client token never reads `me/*`, whatever its scopes). */
  scopes?: string[]
  /** Lifetime in seconds. Default 28 800. */
  expiresIn?: number
  /** Default: the data set's first client, else `'emulator-client'`. */
  clientId?: string
}

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
export interface Emulator {
  /**
   * Base URL of the group endpoints, no trailing slash: with the `/groups` prefix
   * (Dataporten dialect), or the bare origin (OpenConext dialect, which serves at the root).
   */
  readonly baseUrl: string
  /** The dialect served. */
  readonly dialect: EmulatorDialect
  /** Base URL of the authorization server (same server, no path). */
  readonly authUrl: string
  /** The data served. Live: changes take effect on the next request. */
  readonly data: EmulatorData
  /**
   * Replaces the data served with a validated copy of `next`, in place (`data` stays the
   * same object). Throws `InvalidArgumentError` naming the bad field, and keeps the data in force.
   */
  replaceData(next: EmulatorData): void
  /** The tokens the group endpoints and the authorization server accept. */
  readonly tokens: TokenStore
  /** Issues a personal token for a user of the data set; throws for an unknown user. */
  issueToken(userId: string, options?: IssueTokenOptions): string
  /** Issues a client-only token (client credentials style, no user). */
  issueClientToken(options?: IssueClientTokenOptions): string
  /** Revokes a token: the group endpoints answer 401 for it from now on. */
  revokeToken(token: string): void
  /** Requests received so far (group endpoints and authorization server), oldest first. Never contains a token. */
  readonly requests: readonly RecordedRequest[]
  /**
   * Requests whose pathname equals `path` (as received, or decoded segment by segment);
   * all requests without `path`.
   */
  count(path?: string): number
  /** Clears {@link Emulator.requests} and the counters. */
  resetLog(): void
  /** Fault injection for the group endpoints. */
  readonly faults: FaultController
  /**
   * The rate limit in force (per client address), `undefined` for none; set it to change it
   * (`{ limit, windowMs }`, or `undefined`), as the console does.
   */
  rateLimit: { limit: number; windowMs: number } | undefined
  /** The console's address (`<authUrl>/_emulator/`), or `undefined` with `console: false`. */
  readonly consoleUrl: string | undefined
  /** The authorization server at {@link Emulator.authUrl} (discovery, flows, JWKS, key rotation). */
  readonly oauth: OAuthServer
  /** Stops the server, destroying open and hanging connections. Resolves once closed. */
  close(): Promise<void>
}

const DEFAULT_EXPIRES_IN = 8 * 60 * 60
const DEFAULT_USER_SCOPES = ['openid', 'userid', 'profile', 'groups']
const DEFAULT_CLIENT_SCOPES = ['groups']
/** The roles the console offers, lowest first: Dataporten's, and OpenConext's (with `prospect`, an invitee). */
const DATAPORTEN_ROLES = ['member', 'admin', 'owner'] as const
const OPENCONEXT_ROLES = ['prospect', 'member', 'manager', 'admin', 'owner'] as const

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
 * ```
 */
export async function startEmulator(options: EmulatorOptions = {}): Promise<Emulator> {
  if (typeof options !== 'object' || options === null) throw new InvalidOptionError('(options)', 'must be an object')
  rejectUnknownKeys('', options, OPTION_KEYS)
  const { port = 0, host = '127.0.0.1', latency = 0, now = Date.now, dialect = 'dataporten' } = options
  // Throws for an unknown dialect, naming the option.
  const routes = dialectRoutes(dialect)
  if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new InvalidOptionError('port', 'must be an integer from 0 to 65535')
  if (typeof host !== 'string' || host === '') throw new InvalidOptionError('host', 'must be a non-empty string')
  if (typeof latency !== 'number' || !Number.isFinite(latency) || latency < 0) {
    throw new InvalidOptionError('latency', 'must be a non-negative number of milliseconds')
  }
  if (typeof now !== 'function') throw new InvalidOptionError('now', 'must be a function returning ms since the epoch')
  if (options.rateLimit !== undefined && (typeof options.rateLimit !== 'object' || options.rateLimit === null)) {
    throw new InvalidOptionError('rateLimit', 'must be an object { limit, windowMs }')
  }
  if (options.rateLimit !== undefined) rejectUnknownKeys('rateLimit.', options.rateLimit, ['limit', 'windowMs'])
  if (options.console !== undefined && typeof options.console !== 'boolean')
    throw new InvalidOptionError('console', 'must be true or false')
  let rateLimit: { limit: number; windowMs: number } | undefined
  let limiter: RateLimiter | undefined
  const setRateLimit = (setting: { limit: number; windowMs: number } | undefined): void => {
    // Throws InvalidOptionError naming rateLimit.limit or rateLimit.windowMs.
    limiter = setting === undefined ? undefined : createRateLimiter({ ...setting, now })
    rateLimit = setting === undefined ? undefined : { limit: setting.limit, windowMs: setting.windowMs }
  }
  setRateLimit(options.rateLimit)
  const data = await resolveData(options.data ?? (dialect === 'openconext' ? openConextData : defaultData))

  const tokens = new TokenStore(now)
  const log = new RequestLog()
  const faults = new FaultRegistry()
  const groupService = createGroupService({ data, routes, tokens, faults, latency, now, limiter: () => limiter })
  // Set once the server listens and knows its origin; the handler below closes over it first.
  // eslint-disable-next-line prefer-const
  let authorizationServer: OAuthServer | undefined
  let origin = ''
  // One token per user for the console's page, issued when it first shows the user.
  const consoleTokens = new Map<string, string>()
  const consoleRoutes =
    options.console === false
      ? undefined
      : createConsoleRoutes(
          {
            data,
            faults,
            roles: dialect === 'openconext' ? OPENCONEXT_ROLES : DATAPORTEN_ROLES,
            tokenOf(user) {
              let token = consoleTokens.get(user)
              if (token === undefined || tokens.lookup(token) === undefined) {
                token = tokens.issue({
                  userId: user,
                  clientId: data.clients[0]?.clientId ?? 'emulator-client',
                  scopes: DEFAULT_USER_SCOPES,
                  expiresIn: DEFAULT_EXPIRES_IN,
                })
                consoleTokens.set(user, token)
              }
              return token
            },
            requests: () => log.entries,
            get rateLimit() {
              return rateLimit ?? null
            },
            set rateLimit(setting) {
              setRateLimit(setting ?? undefined)
            },
          },
          () => origin,
          () => `${origin}${routes.basePath}`,
        )

  const handleOtherRequest = async (req: IncomingMessage, res: ServerResponse, rawUrl: string, entry: { user?: string }): Promise<void> => {
    const caller = identifyCaller(req.headers.authorization, tokens)
    if (caller.kind === 'token' && caller.record.userId !== undefined) entry.user = caller.record.userId
    // Only origin-form targets: '//host/x' or an absolute URL must not turn into another origin.
    const url = rawUrl.startsWith('/') && URL.canParse(origin + rawUrl) ? new URL(origin + rawUrl) : undefined
    const handled =
      url !== undefined &&
      (((await consoleRoutes?.handle(req, res, url)) ?? false) ||
        (authorizationServer !== undefined && (await authorizationServer.handle(req, res, url))))
    if (!handled && !res.headersSent && !res.destroyed) writeAnswer(res, NOT_FOUND)
  }

  const dispatch = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const rawUrl = req.url ?? '/'
    const entry = log.start(req.method ?? 'GET', rawUrl, now(), res)
    const connection = new AbortController()
    res.once('close', () => connection.abort())
    try {
      const queryStart = rawUrl.indexOf('?')
      if (routes.isServicePath(queryStart === -1 ? rawUrl : rawUrl.slice(0, queryStart))) {
        await groupService.handle(req, res, { rawUrl, entry, signal: connection.signal })
      } else {
        await handleOtherRequest(req, res, rawUrl, entry)
      }
    } catch {
      if (!res.headersSent) writeAnswer(res, INTERNAL_ERROR)
      else res.destroy()
    }
  }

  const server = createServer((req, res) => void dispatch(req, res))
  await listen(server, port, host)
  const address = server.address() as AddressInfo
  origin = `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`
  authorizationServer = createOAuthServer({ data, tokens, issuer: origin, now })

  const defaultClientId = (): string => data.clients[0]?.clientId ?? 'emulator-client'
  let closing: Promise<void> | undefined

  return {
    baseUrl: `${origin}${routes.basePath}`,
    authUrl: origin,
    dialect,
    data,
    replaceData(next) {
      const valid = validateEmulatorData(next)
      data.groups.splice(0, data.groups.length, ...valid.groups)
      data.groupTypes.splice(0, data.groupTypes.length, ...valid.groupTypes)
      data.users.splice(0, data.users.length, ...valid.users)
      data.clients.splice(0, data.clients.length, ...valid.clients)
    },
    tokens,
    issueToken(userId, issueOptions = {}) {
      rejectUnknownKeys('', issueOptions, ISSUE_KEYS)
      if (!data.users.some((user) => user.id === userId)) {
        throw new InvalidArgumentError(`issueToken: unknown user ${JSON.stringify(userId)}`)
      }
      return tokens.issue({
        userId,
        clientId: issueOptions.clientId ?? defaultClientId(),
        scopes: issueOptions.scopes ?? DEFAULT_USER_SCOPES,
        expiresIn: issueOptions.expiresIn ?? DEFAULT_EXPIRES_IN,
      })
    },
    issueClientToken(issueOptions = {}) {
      rejectUnknownKeys('', issueOptions, ISSUE_KEYS)
      return tokens.issue({
        clientId: issueOptions.clientId ?? defaultClientId(),
        scopes: issueOptions.scopes ?? DEFAULT_CLIENT_SCOPES,
        expiresIn: issueOptions.expiresIn ?? DEFAULT_EXPIRES_IN,
      })
    },
    revokeToken(token) {
      tokens.revoke(token)
    },
    get requests() {
      return log.entries
    },
    count(path) {
      return log.count(path)
    },
    resetLog() {
      log.reset()
    },
    faults,
    get rateLimit() {
      return rateLimit === undefined ? undefined : { ...rateLimit }
    },
    set rateLimit(setting) {
      if (setting !== undefined && (typeof setting !== 'object' || setting === null))
        throw new InvalidOptionError('rateLimit', 'must be an object { limit, windowMs }')
      setRateLimit(setting)
    },
    consoleUrl: consoleRoutes === undefined ? undefined : `${origin}${CONSOLE_PATH}/`,
    oauth: authorizationServer,
    close() {
      closing ??= new Promise<void>((resolve, reject) => {
        server.close((err) => (err === undefined ? resolve() : reject(err)))
        // Hanging and slow answers would keep server.close() waiting forever.
        server.closeAllConnections()
      })
      return closing
    },
  }
}

async function resolveData(data: EmulatorData | string): Promise<EmulatorData> {
  try {
    if (typeof data === 'string') return await loadEmulatorData(data)
    return validateEmulatorData(data)
  } catch (err) {
    throw new InvalidOptionError('data', (err as Error).message, { cause: err })
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
