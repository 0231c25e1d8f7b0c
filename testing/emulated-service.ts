/**
 * One emulated group service: its data, tokens, faults, rate limit, request log, group
 * endpoints, authorization server and console, answering the requests of its own path
 * prefix. The emulator serves one of them at the root, or several side by side, each under
 * `/<name>` (`startEmulator({ services })`), and nothing is shared between them: a token one
 * service issued is unknown to the others.
 *
 * @module
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import { InvalidArgumentError, InvalidOptionError } from '../src/index.js'
import { rejectUnknownKeys } from '../src/internal.js'
import { INTERNAL_ERROR, writeAnswer } from './answer.js'
import { identifyCaller } from './bearer-auth.js'
import { createConsoleRoutes, CONSOLE_PATH } from './console/console-routes.js'
import { validateEmulatorData, type EmulatorData } from './data/data.js'
import { dialectRoutes, serviceTitle, type EmulatorDialect } from './group-service/dialect.js'
import { FaultRegistry, type FaultController } from './group-service/faults.js'
import { createGroupService } from './group-service/group-service.js'
import { createRateLimiter, type RateLimiter } from './group-service/rate-limiter.js'
import { createOAuthServer, type OAuthServer } from './oauth-server/oauth-server.js'
import { RequestLog, type RecordedRequest } from './request-log.js'
import { TokenStore } from './token-store.js'

/**
 * Options of {@link EmulatorService.issueToken}.
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
 * Options of {@link EmulatorService.issueClientToken}.
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
 * One group service the emulator serves, with its authorization server: the emulator
 * itself (one service at the root), or one of several (`emulator.service('surf')`).
 *
 * @example
 * ```ts
 * const surf = emulator.service('surf')
 * const res = await fetch(`${surf.baseUrl}/me/groups`, { headers: { authorization: `Bearer ${surf.issueToken('alice')}` } })
 * ```
 */
export interface EmulatorService {
  /**
   * Base URL of the group endpoints, no trailing slash: with the `/groups` prefix
   * (Dataporten dialect), or the service's root (OpenConext dialect, which serves at the
   * root): the bare origin, or `<origin>/<name>` for one of several services.
   */
  readonly baseUrl: string
  /** The dialect served. */
  readonly dialect: EmulatorDialect
  /**
   * Base URL of the authorization server, no trailing slash: its issuer. The origin, or
   * `<origin>/<name>` for one of several services.
   */
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
  /**
   * Requests received so far (group endpoints and authorization server), oldest first. Never
   * contains a token. For one of several services, its own requests, with their paths
   * within the service (without `/<name>`).
   */
  readonly requests: readonly RecordedRequest[]
  /**
   * Requests whose pathname equals `path` (as received, or decoded segment by segment);
   * all requests without `path`. Paths are within the service, as in {@link EmulatorService.requests}.
   */
  count(path?: string): number
  /** Clears {@link EmulatorService.requests} and the counters. */
  resetLog(): void
  /** Fault injection for the group endpoints (a fault's `path` is within the service). */
  readonly faults: FaultController
  /**
   * The rate limit in force (per client address), `undefined` for none; set it to change it
   * (`{ limit, windowMs }`, or `undefined`), as the console does.
   */
  rateLimit: { limit: number; windowMs: number } | undefined
  /** The authorization server at {@link EmulatorService.authUrl} (discovery, flows, JWKS, key rotation). */
  readonly oauth: OAuthServer
}

/** What one service is made of, its options checked. */
export interface ServiceSetup {
  readonly dialect: EmulatorDialect
  readonly data: EmulatorData
  readonly latency: number
  readonly rateLimit: { limit: number; windowMs: number } | undefined
  readonly now: () => number
  readonly console: boolean
  /** `''` for the emulator's one service, `'/surf'` for one of several. */
  readonly prefix: string
}

/** A running service: its public face, its console's address, and its request handler. */
export interface EmulatedService {
  readonly face: () => EmulatorService
  readonly consoleUrl: string | undefined
  /** Answers one request; `rawUrl` is within the service (its prefix taken off). */
  handle(req: IncomingMessage, res: ServerResponse, rawUrl: string): Promise<void>
}

/** Every key of {@link IssueTokenOptions} and {@link IssueClientTokenOptions}. */
const ISSUE_KEYS: readonly (keyof IssueTokenOptions)[] = ['scopes', 'expiresIn', 'clientId']
const DEFAULT_EXPIRES_IN = 8 * 60 * 60
const DEFAULT_USER_SCOPES = ['openid', 'userid', 'profile', 'groups']
const DEFAULT_CLIENT_SCOPES = ['groups']
/** The roles the console offers, lowest first: Dataporten's, and OpenConext's (with `prospect`, an invitee). */
const DATAPORTEN_ROLES = ['member', 'admin', 'owner'] as const
const OPENCONEXT_ROLES = ['prospect', 'member', 'manager', 'admin', 'owner'] as const

/**
 * Checks `latency` and `rateLimit` of one service; `where` is how the options name them
 * (`''`, or `'services.surf.'`).
 */
export function checkServiceOptions(where: string, latency: unknown, rateLimit: unknown): void {
  if (typeof latency !== 'number' || !Number.isFinite(latency) || latency < 0) {
    throw new InvalidOptionError(`${where}latency`, 'must be a non-negative number of milliseconds')
  }
  if (rateLimit === undefined) return
  if (typeof rateLimit !== 'object' || rateLimit === null)
    throw new InvalidOptionError(`${where}rateLimit`, 'must be an object { limit, windowMs }')
  rejectUnknownKeys(`${where}rateLimit.`, rateLimit, ['limit', 'windowMs'])
  try {
    createRateLimiter(rateLimit as { limit: number; windowMs: number })
  } catch (error) {
    // The limiter names rateLimit.limit or rateLimit.windowMs; a service's needs its name too.
    if (error instanceof InvalidOptionError && where !== '')
      throw new InvalidOptionError(`${where}${error.option}`, error.message.replace(/^[^:]*: /, ''))
    throw error
  }
}

/**
 * Creates one service at `origin` + `setup.prefix`. `origin` is the server's (`http://127.0.0.1:4000`).
 */
export function createEmulatedService(setup: ServiceSetup, origin: string): EmulatedService {
  const { data, dialect, latency, now, prefix } = setup
  const routes = dialectRoutes(dialect)
  const root = `${origin}${prefix}`
  let rateLimit: { limit: number; windowMs: number } | undefined
  let limiter: RateLimiter | undefined
  const setRateLimit = (setting: { limit: number; windowMs: number } | undefined): void => {
    // Throws InvalidOptionError naming rateLimit.limit or rateLimit.windowMs.
    limiter = setting === undefined ? undefined : createRateLimiter({ ...setting, now })
    rateLimit = setting === undefined ? undefined : { limit: setting.limit, windowMs: setting.windowMs }
  }
  setRateLimit(setup.rateLimit)

  const tokens = new TokenStore(now)
  const log = new RequestLog()
  const faults = new FaultRegistry()
  const groupService = createGroupService({ data, routes, tokens, faults, latency, now, limiter: () => limiter })
  const service = serviceTitle(dialect, prefix.slice(1))
  const authorizationServer = createOAuthServer({ data, tokens, issuer: root, now, service })
  const defaultClientId = (): string => data.clients[0]?.clientId ?? 'emulator-client'
  // One token per user for the console's page, issued when it first shows the user.
  const consoleTokens = new Map<string, string>()
  const consoleRoutes = !setup.console
    ? undefined
    : createConsoleRoutes(
        {
          service,
          data,
          faults,
          roles: dialect === 'openconext' ? OPENCONEXT_ROLES : DATAPORTEN_ROLES,
          endSessions: (user) => authorizationServer.endSessions(user),
          tokenOf(user) {
            let token = consoleTokens.get(user)
            if (token === undefined || tokens.lookup(token) === undefined) {
              token = tokens.issue({
                userId: user,
                clientId: defaultClientId(),
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
        () => `${root}${routes.basePath}`,
        `${prefix}${CONSOLE_PATH}`,
      )

  const handleOtherRequest = async (req: IncomingMessage, res: ServerResponse, rawUrl: string, entry: { user?: string }): Promise<void> => {
    const caller = identifyCaller(req.headers.authorization, tokens)
    if (caller.kind === 'token' && caller.record.userId !== undefined) entry.user = caller.record.userId
    // Only origin-form targets: '//host/x' or an absolute URL must not turn into another origin.
    const url = rawUrl.startsWith('/') && URL.canParse(origin + rawUrl) ? new URL(origin + rawUrl) : undefined
    const handled =
      url !== undefined && (((await consoleRoutes?.handle(req, res, url)) ?? false) || (await authorizationServer.handle(req, res, url)))
    if (handled || res.headersSent || res.destroyed) return
    // Any other path is answered as the dialect's service answers one it does not serve
    // (OpenConext, at the root: Spring Security's 401 without a valid token; Dataporten: 404).
    const query = url?.searchParams ?? new URLSearchParams()
    writeAnswer(res, routes.unknownRoute({ method: req.method ?? 'GET', query, caller, data, now: now() }))
  }

  const face = (): EmulatorService => ({
    baseUrl: `${root}${routes.basePath}`,
    authUrl: root,
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
    oauth: authorizationServer,
  })

  return {
    face,
    consoleUrl: consoleRoutes === undefined ? undefined : `${root}${CONSOLE_PATH}/`,
    async handle(req, res, rawUrl) {
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
    },
  }
}
