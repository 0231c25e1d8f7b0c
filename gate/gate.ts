/**
 * `createGate`: the gate as a `node:http` request listener. Builds the guard core from
 * `service`, the rules, the OAuth clients and the cookies from one configuration, and
 * routes each `/_gate/*` request to its endpoint.
 *
 * @module
 */
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http'
import { createRequire } from 'node:module'
import { DEFAULT_CACHE_TTL, nearestKey, type GuardCore } from '../src/adapter-kit.js'
import { group, InvalidOptionError, type SharedCache, VootError } from '../src/index.js'
import { createRedisCache } from '../redis/index.js'
import { jsonAnswer, writeAnswer, type Answer } from './answer.js'
import { createCheckFlow, createCheckHandler, type CheckFlow, type CheckHandler, type CheckRecord } from './check.js'
import { GateConfigError, ProblemList, type GateConfigProblem } from './config-problem.js'
import { readGateSettings } from './config-read.js'
import type { CompiledRule, GateConfig, GateSettings } from './config-types.js'
import { createDecisionLog, type DecisionLogOutput } from './decision-log.js'
import { createForbiddenPage } from './forbidden.js'
import { createGateMetrics } from './metrics.js'
import { createWhoami } from './whoami.js'
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
  /** The check endpoints' handler, for listeners of other protocols (the FastCGI authorizer of `startGateServer`). */
  readonly check: CheckHandler
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
  /** Where a decision log with `decisions: stdout` or `stderr` writes. Default: the process's streams. */
  readonly output?: DecisionLogOutput
}

/** A configuration read and built, nothing connected yet. */
export interface Built {
  readonly settings: GateSettings
  readonly flow: CheckFlow
  readonly core: GuardCore
  readonly rules: readonly CompiledRule[]
  readonly oauth: GateOAuth | undefined
}

/** Adds the error of a factory that refused an option to `problems`, under `section`; returns the option's path. */
function refused(problems: ProblemList, section: string, error: unknown): string[] {
  if (error instanceof InvalidOptionError) {
    const option = error.option.replace(/^\(options\)$/, '')
    const path = option === '' ? [section] : [section, ...option.split('.')]
    // The reading may have said it already (a missing baseUrl): once is enough.
    if (!problems.covers(path)) problems.add(path, error.message.replace(/^options\.[^:]*: /, ''))
    return path.slice(1)
  }
  if (error instanceof VootError) {
    if (!problems.covers([section])) problems.add([section], error.message)
    return []
  }
  throw error
}

/** Where a refused option stands in for itself so that checking goes on: never served (the configuration is refused). */
const STAND_IN: Readonly<Record<string, unknown>> = { baseUrl: 'http://127.0.0.1/' }

/** `options` without the option at `path` (or with its stand-in), so that the factory can say what else it refuses. */
function without(options: Readonly<Record<string, unknown>>, path: readonly string[]): Record<string, unknown> {
  const [head, ...rest] = path
  if (head === undefined) return { ...options }
  const inner = options[head]
  if (rest.length > 0 && typeof inner === 'object' && inner !== null) {
    return { ...options, [head]: without(inner as Record<string, unknown>, rest) }
  }
  if (rest.length === 0 && head in STAND_IN) return { ...options, [head]: STAND_IN[head] }
  return Object.fromEntries(Object.entries(options).filter(([key]) => key !== head))
}

/**
 * Makes the check flow from `service`. The resolver's factory throws at the first option it
 * refuses: each refused option is recorded, taken out (or stood in for), and the factory
 * asked again, so that one run reports every refused option and the rules are still
 * checked against a resolver (against the default roles when `roles` itself is refused).
 */
function checkFlowOf(problems: ProblemList, service: Readonly<Record<string, unknown>>, extra: Record<string, unknown>): CheckFlow {
  let options: Record<string, unknown> = { ...service }
  const seen = new Set<string>()
  for (;;) {
    try {
      return createCheckFlow({ ...options, ...extra, realm: 'voot-gate' })
    } catch (error) {
      const path = refused(problems, 'service', error)
      const key = path.join('.')
      // An error that names no option, or one already taken out: check on with the stand-ins alone.
      if (path.length === 0 || seen.has(key)) return createCheckFlow({ ...STAND_IN, realm: 'voot-gate' })
      seen.add(key)
      options = without(options, path)
    }
  }
}

/** Checks the fixtures' group ids and roles against the resolver, as a rule's are. */
function checkFixtures(settings: GateSettings, core: GuardCore, problems: ProblemList): void {
  const { roles } = core.resolver
  for (const memberships of settings.policy.fixtures.values()) {
    for (const membership of memberships) {
      try {
        core.prepare(group(membership.groupId))
      } catch (error) {
        if (!(error instanceof VootError)) throw error
        problems.add(membership.path, error.message)
        continue
      }
      if (membership.role !== '' && !roles.includes(membership.role)) {
        problems.add(
          membership.path,
          `unknown role ${JSON.stringify(membership.role)}: the resolver's roles are ${roles.join(' < ')}`,
          nearestKey(membership.role, roles),
        )
      }
    }
  }
}

/**
 * Reads and builds everything but the network connections; throws {@link GateConfigError}
 * with every problem found. Each part is checked even when an earlier one has problems.
 * `extra` are resolver options a file cannot hold (the policy tests' `dispatcher`).
 */
export function buildGate(
  config: unknown,
  sharedCache: (redis: GateSettings['redis']) => SharedCache | undefined,
  extra: Record<string, unknown> = {},
): Built {
  const problems = new ProblemList()
  const settings = readGateSettings(config, problems)
  let shared: SharedCache | undefined
  try {
    shared = problems.items.length === 0 ? sharedCache(settings.redis) : undefined
  } catch (error) {
    refused(problems, 'redis', error)
  }
  const flow = checkFlowOf(problems, settings.service, { ...extra, ...(shared === undefined ? {} : { sharedCache: shared }) })
  let oauth: GateOAuth | undefined
  if (settings.oauth !== undefined) {
    try {
      const ttl = (settings.service['cache'] as { ttl?: number } | undefined)?.ttl ?? DEFAULT_CACHE_TTL
      oauth = createGateOAuth(settings.oauth, ttl)
    } catch (error) {
      refused(problems, 'oauth', error)
    }
  }
  const { core } = flow
  const rules = compileRules(settings.rules, core, problems)
  checkFixtures(settings, core, problems)
  if (problems.items.length > 0) {
    void core.resolver.close()
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
    const built = buildGate(config, () => undefined)
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
    built = buildGate(config, (settings) => {
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
  const decisions =
    settings.log === undefined
      ? undefined
      : createDecisionLog(settings.log, {
          output: options.output ?? process,
          secrets: [...settings.cookie.secrets, ...(settings.redis === undefined ? [] : [settings.redis.secret])],
        })
  const observe = decisions === undefined ? undefined : (record: CheckRecord) => decisions.record(record)
  const checkNow = createCheckHandler({ flow, rules, settings, trusted, cookies, oauth, metrics, now, observe })
  const check: typeof checkNow =
    decisions === undefined ? checkNow : (protocol, req, url) => decisions.run(() => checkNow(protocol, req, url))
  const whoami = createWhoami({ core, rules, settings, trusted, cookies })
  const forbidden = createForbiddenPage(checkNow, cookies)
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
          body: metrics.render(core.resolver.health(), decisions?.dropped),
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
      case '/_gate/whoami':
        if (method !== 'GET' && method !== 'HEAD') return notAllowed('GET')
        return whoami(req)
      case '/_gate/forbidden':
        // Any method: Caddy's handle_response asks with the refused request's own.
        return forbidden(req, url)
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
    check: (protocol, req, url) => check(protocol, req, url),
    async close() {
      closing = true
      await decisions?.close()
      await core.resolver.close()
      await redis?.quit()
    },
  }
}
