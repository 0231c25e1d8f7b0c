/**
 * `createGate`: the gate as a `node:http` request listener. Builds the guard core from
 * `service`, the rules, the OAuth clients and the cookies from one configuration, and
 * routes each `/_gate/*` request to its endpoint.
 *
 * @module
 */
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http'
import { createRequire } from 'node:module'
import { DEFAULT_CACHE_TTL, type GuardCore } from '../src/adapter-kit.js'
import { InvalidOptionError, type SharedCache, VootError } from '../src/index.js'
import { createRedisCache } from '../redis/index.js'
import { jsonAnswer, writeAnswer, type Answer } from './answer.js'
import { createCheckFlow, createCheckHandler, type CheckFlow } from './check.js'
import { GateConfigError, ProblemList, type GateConfigProblem } from './config-problem.js'
import { readGateSettings } from './config-read.js'
import type { CompiledRule, GateConfig, GateSettings } from './config-types.js'
import { createGateMetrics } from './metrics.js'
import { createGateOAuth, type GateOAuth } from './oauth-clients.js'
import { AUTH_REQUEST_PATH, EXT_AUTHZ_PREFIX } from './original-request.js'
import { compileRules, isKnownHost, isRedirectHost } from './rules.js'
import { createSessionCookies } from './session.js'
import { createSignInHandlers } from './sign-in.js'
import { createTrustCheck } from './trusted-proxies.js'

/**
 * A running gate: mount `listener` on a `node:http` server (or let `voot-guard gate` do it).
 *
 * @example
 * ```ts
 * const gate = createGate(config)
 * const server = http.createServer(gate.listener).listen(4181, '127.0.0.1')
 * await gate.ready
 * ```
 */
export interface Gate {
  /** The request listener serving every `/_gate/*` endpoint. */
  readonly listener: RequestListener
  /**
   * Settles once the gate can serve: Redis connected (when configured) and the group
   * service answered like one. Rejects with the reason otherwise; the gate still serves
   * (answering 503 while the group service is down) and `/_gate/readyz` says so.
   */
  readonly ready: Promise<void>
  /** The configuration as read (durations in ms, defaults filled in). */
  readonly settings: GateSettings
  /** Stops answering ready, releases the resolver and the Redis connection. */
  close(): Promise<void>
}

/**
 * Options of {@link createGate} that a configuration file cannot hold.
 *
 * @example
 * ```ts
 * createGate(config, { logger: console })
 * ```
 */
export interface GateOptions {
  /** Where operator messages go (anything with `warn`). Default: `console`. */
  readonly logger?: { warn(message: string): void }
}

interface Built {
  readonly settings: GateSettings
  readonly flow: CheckFlow
  readonly core: GuardCore
  readonly rules: readonly CompiledRule[]
  readonly oauth: GateOAuth | undefined
}

/** Adds the error of a factory that refused an option to `problems`, under `section`. */
function refused(problems: ProblemList, section: string, error: unknown): void {
  if (error instanceof InvalidOptionError) {
    const option = error.option.replace(/^\(options\)$/, '')
    const path = option === '' ? [section] : [section, ...option.split('.')]
    problems.add(path, error.message.replace(/^options\.[^:]*: /, ''))
    return
  }
  if (error instanceof VootError) {
    problems.add([section], error.message)
    return
  }
  throw error
}

/** Reads and builds everything but the network connections; throws {@link GateConfigError}. */
function build(config: unknown, sharedCache: (redis: GateSettings['redis']) => SharedCache | undefined): Built {
  const problems = new ProblemList()
  const settings = readGateSettings(config, problems)
  if (settings === undefined) throw new GateConfigError(problems.items)
  let shared: SharedCache | undefined
  try {
    shared = sharedCache(settings.redis)
  } catch (error) {
    refused(problems, 'redis', error)
  }
  let flow: CheckFlow | undefined
  try {
    const options = { ...settings.service, realm: 'voot-gate', ...(shared === undefined ? {} : { sharedCache: shared }) }
    flow = createCheckFlow(options)
  } catch (error) {
    refused(problems, 'service', error)
  }
  let oauth: GateOAuth | undefined
  if (settings.oauth !== undefined) {
    try {
      const ttl = (settings.service['cache'] as { ttl?: number } | undefined)?.ttl ?? DEFAULT_CACHE_TTL
      oauth = createGateOAuth(settings.oauth, ttl)
    } catch (error) {
      refused(problems, 'oauth', error)
    }
  }
  const core = flow?.core
  const rules = core === undefined ? [] : compileRules(settings.rules, core, problems)
  if (problems.items.length > 0 || flow === undefined || core === undefined) {
    void core?.resolver.close()
    throw new GateConfigError(problems.items)
  }
  return { settings, flow, core, rules, oauth }
}

/**
 * Checks a configuration without starting anything: the problems (empty when it is valid).
 *
 * @example
 * ```ts
 * for (const problem of await checkGateConfig(config)) console.error(formatConfigProblem(problem))
 * ```
 */
export async function checkGateConfig(config: unknown): Promise<readonly GateConfigProblem[]> {
  try {
    const built = build(config, () => undefined)
    await built.core.resolver.close()
    return []
  } catch (error) {
    if (error instanceof GateConfigError) return error.problems
    throw error
  }
}

interface RedisConnection {
  readonly cache: SharedCache
  /** Connects the client: called once the configuration is accepted, so a refused one opens nothing. */
  connect(): Promise<void>
  quit(): Promise<void>
}

function redisConnection(redis: NonNullable<GateSettings['redis']>, warn: (message: string) => void): RedisConnection {
  // node-redis is an optional peer dependency, loaded only when `redis` is configured.
  const { createClient } = createRequire(import.meta.url)('redis') as typeof import('redis')
  const client = createClient({ url: redis.url })
  const cache = createRedisCache({ client, secret: redis.secret, ...(redis.prefix === undefined ? {} : { prefix: redis.prefix }) })
  let reported = false
  client.on('error', (error: unknown) => {
    if (!reported)
      warn(`gate: Redis: ${error instanceof Error ? error.message : 'error'} (answers are asked of the group service meanwhile)`)
    reported = true
  })
  return {
    cache,
    connect: () =>
      client.connect().then(() => {
        reported = false
      }),
    async quit() {
      await cache.close()
      if (client.isOpen) await client.quit().catch(() => client.destroy())
    },
  }
}

/**
 * Creates a gate from a configuration (the content of `gate.yaml`, parsed). Invalid
 * configurations throw a {@link GateConfigError} listing every problem.
 *
 * @example
 * ```ts
 * import { createServer } from 'node:http'
 * import { createGate } from 'voot-guard/gate'
 *
 * const gate = createGate({
 *   service: { baseUrl: 'https://groups-api.dataporten.no/groups' },
 *   rules: [
 *     { path: '/admin/**', require: { group: 'fc:org:example.org', role: 'admin' } },
 *     { allow: 'signed-in' },
 *   ],
 * })
 * createServer(gate.listener).listen(4181, '127.0.0.1')
 * ```
 */
export function createGate(config: GateConfig, options: GateOptions = {}): Gate {
  const logger = options.logger ?? console
  const warn = (message: string) => logger.warn(message)
  let redis: RedisConnection | undefined
  let built: Built
  try {
    built = build(config, (settings) => {
      if (settings === undefined) return undefined
      redis = redisConnection(settings, warn)
      return redis.cache
    })
  } catch (error) {
    // The tier was made, the configuration refused: what the tier opened is released.
    void redis?.quit()
    throw error
  }
  const redisConnected = redis?.connect()
  const { settings, flow, core, rules, oauth } = built
  const now = Date.now
  const trusted = createTrustCheck(settings.trustedProxies)
  const metrics = createGateMetrics()
  const cookies = settings.cookie.secrets.length > 0 ? createSessionCookies(settings.cookie, now) : undefined
  const check = createCheckHandler({ flow, rules, settings, trusted, cookies, oauth, metrics, now })
  const browser =
    oauth === undefined || cookies === undefined
      ? undefined
      : createSignInHandlers({
          core,
          oauth,
          cookies,
          trusted,
          isRedirectHost: (host) => isRedirectHost(rules, settings.redirectHosts, host),
          isServedHost: (host) => !settings.strictHosts || isKnownHost(rules, settings.redirectHosts, host),
          metrics,
          now,
          log: warn,
        })
  let closing = false

  const ready = (async () => {
    await redisConnected
    await core.resolver.verify()
  })()
  ready.catch(() => {})

  let readiness: Promise<boolean> | undefined
  function isReady(): Promise<boolean> {
    if (readiness !== undefined) return readiness
    const current = core.resolver.verify({ signal: AbortSignal.timeout(5_000) }).then(
      () => true,
      () => false,
    )
    readiness = current
    // One answer serves the probes of the next second; the timer is set once per answer.
    void current.finally(() => setTimeout(() => (readiness === current ? (readiness = undefined) : undefined), 1_000).unref())
    return current
  }

  const NOT_FOUND = jsonAnswer(404, { error: 'not_found', error_description: 'No such endpoint of the gate' })
  const notAllowed = (allow: string) => jsonAnswer(405, { error: 'method_not_allowed', error_description: `Use ${allow}` }, { allow })

  function route(req: IncomingMessage, url: string, path: string, query: string): Answer | Promise<Answer> {
    const method = req.method ?? 'GET'
    if (path === AUTH_REQUEST_PATH || path.startsWith(`${AUTH_REQUEST_PATH}/`)) return check('auth-request', req, url)
    if (path === '/_gate/forward-auth') return check('forward-auth', req, url)
    if (path === EXT_AUTHZ_PREFIX || path.startsWith(`${EXT_AUTHZ_PREFIX}/`)) return check('ext-authz', req, url)
    switch (path) {
      case '/_gate/healthz':
        return jsonAnswer(closing ? 503 : 200, { status: closing ? 'stopping' : 'ok' })
      case '/_gate/readyz':
        if (closing) return jsonAnswer(503, { status: 'stopping' })
        return isReady().then((ok) =>
          jsonAnswer(ok ? 200 : 503, { status: ok ? 'ready' : 'group service unreachable', groupService: core.resolver.health() }),
        )
      case '/_gate/metrics':
        return {
          status: 200,
          headers: { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' },
          body: metrics.render(core.resolver.health()),
        }
      case '/_gate/signin':
        if (browser === undefined) return NOT_FOUND
        if (method !== 'GET' && method !== 'HEAD') return notAllowed('GET')
        return browser.signIn(req, new URLSearchParams(query))
      case '/_gate/callback':
        if (browser === undefined) return NOT_FOUND
        if (method !== 'GET') return notAllowed('GET')
        return browser.callback(req, url)
      case '/_gate/signout':
        if (browser === undefined) return NOT_FOUND
        if (method !== 'POST') return notAllowed('POST')
        return browser.signOut(req, new URLSearchParams(query))
      default:
        return NOT_FOUND
    }
  }

  const failure = (res: ServerResponse, head: boolean) => (error: unknown) => {
    warn(`gate: unexpected failure: ${error instanceof Error ? `${error.name}: ${error.message}` : 'error'}`)
    if (!res.headersSent) writeAnswer(res, jsonAnswer(500, { error: 'server_error', error_description: 'The gate failed' }), head)
    else res.destroy()
  }

  const listener: RequestListener = (req, res) => {
    // The gate reads no request body: Node discards an unread one when the answer ends.
    const url = req.url ?? '/'
    const mark = url.indexOf('?')
    const path = mark === -1 ? url : url.slice(0, mark)
    const query = mark === -1 ? '' : url.slice(mark + 1)
    const head = req.method === 'HEAD'
    try {
      const answer = route(req, url, path, query)
      if (answer instanceof Promise) answer.then((done) => writeAnswer(res, done, head), failure(res, head))
      else writeAnswer(res, answer, head)
    } catch (error) {
      failure(res, head)(error)
    }
  }

  return {
    listener,
    ready,
    settings,
    async close() {
      closing = true
      await core.resolver.close()
      await redis?.quit()
    },
  }
}
