/**
 * `createGate`: the gate as a `node:http` request listener. Builds the guard core from
 * `service`, the rules, the OAuth clients and the cookies from one configuration, and
 * routes each `/_gate/*` request to its endpoint.
 *
 * @module
 */
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http'
import type { GuardCore, SharedCache } from '../src/adapter-kit.js'
import { DEFAULT_CACHE_TTL } from '../src/internal.js'
import { jsonAnswer, writeAnswer, type Answer } from './http/answer.js'
import { createCheckHandler, type CheckFlow, type CheckHandler } from './front/check.js'
import type { CheckRecord } from './ops/check-record.js'
import { GateConfigError, ProblemList, type GateConfigProblem } from './config/problem.js'
import { readGateSettings } from './config/read.js'
import type { CompiledRule, GateConfig, GateSettings } from './config/types.js'
import { createDecisionLog, type DecisionLogOutput } from './ops/decision-log.js'
import { createForbiddenPage } from './pages/forbidden.js'
import { createGateMetrics, type GateMetrics } from './ops/metrics.js'
import { createWhoami } from './pages/whoami.js'
import { createGateOAuth, type GateOAuth, type GateSignIns } from './session/oauth-clients.js'
import { buildCheckFlow, closeResolvers, healthOf, refused, verifyResolvers } from './build-flow.js'
import type { ServiceRouter } from './policy/service-route.js'
import { AUTH_REQUEST_PATH, EXT_AUTHZ_PREFIX } from './http/original-request.js'
import { compileRules, isKnownHost, isRedirectHost } from './policy/rules.js'
import { createSessionCookies } from './session/session.js'
import { createGateSessionEnds } from './session/session-ends.js'
import type { SignOutList } from './session/sign-out-list.js'
import { createSignInHandlers } from './sign-in/sign-in.js'
import { createBackchannelLogout } from './sign-in/backchannel-logout.js'
import { createTrustCheck } from './http/trusted-proxies.js'
import { checkFixtures } from './policy-tests/fixture-check.js'
import { redisConnection, type RedisConnection } from './redis-connection.js'

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
  /**
   * The configuration as read (durations in ms, defaults filled in).
   *
   * @internal
   */
  readonly settings: GateSettings
  /**
   * The check endpoints' handler, for listeners of other protocols (the FastCGI authorizer of `startGateServer`).
   *
   * @internal
   */
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

/**
 * What a gate takes over from the gate it replaces (`startGateServer`'s reload): the
 * metrics' counters, so that a SIGHUP does not set them back to zero, and the sign-out
 * list, so that it does not open a session signed out before it.
 *
 * @example
 * ```ts
 * const carried = { metrics: createGateMetrics(), signOuts: createSignOutList(Date.now) }
 * const next = createGateCarrying(config, options, carried)
 * ```
 */
export interface GateCarried {
  readonly metrics: GateMetrics
  /** The sessions signed out before their end: a reload must not open one again. */
  readonly signOuts?: SignOutList
}

/** A configuration read and built, nothing connected yet. */
export interface Built {
  readonly settings: GateSettings
  readonly flow: CheckFlow
  readonly core: GuardCore
  readonly rules: readonly CompiledRule[]
  /** The sign-in of each service that signs people in; empty when none does. */
  readonly signIns: GateSignIns
  /** With several services, which one a check's token goes to. */
  readonly router: ServiceRouter | undefined
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
    refused(problems, ['redis'], error)
  }
  const { flow, router } = buildCheckFlow(problems, settings, { ...extra, ...(shared === undefined ? {} : { sharedCache: shared }) })
  const signIns = signInsOf(problems, settings)
  const { core } = flow
  const rules = compileRules(settings.rules, core, problems, settings.services?.groupPrefixes)
  checkFixtures(settings, core, problems)
  if (problems.items.length > 0) {
    void closeResolvers(core)
    throw new GateConfigError(problems.items)
  }
  return { settings, flow, core, rules, signIns, router }
}

/** The OAuth clients of each service that signs people in (the one service's under `undefined`). */
function signInsOf(problems: ProblemList, settings: GateSettings): GateSignIns {
  const signIns = new Map<string | undefined, GateOAuth>()
  const each =
    settings.services === undefined
      ? [{ name: undefined, section: ['oauth'], oauth: settings.oauth, service: settings.service }]
      : settings.services.list.map((one) => ({
          name: one.name,
          section: ['services', one.name, 'oauth'],
          oauth: one.oauth,
          service: one.service,
        }))
  for (const { name, section, oauth, service } of each) {
    if (oauth === undefined) continue
    try {
      const ttl = (service['cache'] as { ttl?: number } | undefined)?.ttl ?? DEFAULT_CACHE_TTL
      signIns.set(name, createGateOAuth(oauth, ttl))
    } catch (error) {
      refused(problems, section, error)
    }
  }
  return signIns
}

/**
 * The problems of a configuration, its policy tests left out (empty when the gate would
 * build it): what the command's `--check` and `--test` report before running the tests
 * with their own per-test output. Users call {@link checkGateConfig}, which runs them too.
 *
 * @internal
 */
export async function configProblems(config: unknown): Promise<readonly GateConfigProblem[]> {
  try {
    const built = buildGate(config, () => undefined)
    await closeResolvers(built.core)
    return []
  } catch (error) {
    if (error instanceof GateConfigError) return error.problems
    throw error
  }
}

/**
 * Creates a gate from a configuration (the content of `gate.yaml`, parsed). Invalid
 * configurations throw a {@link GateConfigError} listing every problem. The gate has its
 * own counters and sign-out list; `startGateServer` carries them over a reload.
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
  return createGateCarrying(config, options, undefined)
}

/**
 * {@link createGate}, taking over what the gate it replaces had (`carried`): what
 * `startGateServer` does on each reload.
 *
 * @internal
 */
export function createGateCarrying(config: GateConfig, options: GateOptions, carried: GateCarried | undefined): Gate {
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
  const { settings, flow, core, rules, signIns, router } = built
  const now = Date.now
  const trusted = createTrustCheck(settings.trustedProxies)
  const metrics = carried?.metrics ?? createGateMetrics()
  const sessionEnds = createGateSessionEnds({
    maxAge: settings.cookie.maxAge,
    now,
    tier: redis?.sessionEnds,
    log: warn,
    ...(carried?.signOuts === undefined ? {} : { list: carried.signOuts }),
  })
  const cookies = settings.cookie.secrets.length > 0 ? createSessionCookies(settings.cookie, now, sessionEnds) : undefined
  const decisions =
    settings.log === undefined
      ? undefined
      : createDecisionLog(settings.log, {
          output: options.output ?? process,
          secrets: [...settings.cookie.secrets, ...(settings.redis === undefined ? [] : [settings.redis.secret])],
        })
  const observe = decisions === undefined ? undefined : (record: CheckRecord) => decisions.record(record)
  const checkNow = createCheckHandler({ flow, rules, settings, trusted, cookies, signIns, router, metrics, now, observe })
  const check: typeof checkNow =
    decisions === undefined ? checkNow : (protocol, req, url) => decisions.run(() => checkNow(protocol, req, url))
  const whoami = createWhoami({ core, rules, settings, trusted, cookies, router, signIns })
  // The page decides a refused request again to say why; the proxy's check of it was logged
  // and counted already: this one is neither (one check, one log line, one count).
  const recheck = createCheckHandler({ flow, rules, settings, trusted, cookies, signIns, router, now })
  const forbidden = createForbiddenPage(recheck, cookies)
  const browser =
    signIns.size === 0 || cookies === undefined
      ? undefined
      : createSignInHandlers({
          core,
          signIns,
          router,
          cookies,
          trusted,
          isRedirectHost: (host) => isRedirectHost(rules, settings.redirectHosts, host),
          isServedHost: (host) => !settings.strictHosts || isKnownHost(rules, settings.redirectHosts, host),
          metrics,
          now,
          log: warn,
        })
  // Sessions are needed to end any: without cookie secrets there are none.
  const backchannelLogout = cookies === undefined ? undefined : createBackchannelLogout({ signIns, ends: sessionEnds, metrics, log: warn })
  let closing = false

  const ready = (async () => {
    await redisConnected
    await verifyResolvers(core)
  })()
  ready.catch(() => {})

  let readiness: Promise<boolean> | undefined
  function isReady(): Promise<boolean> {
    if (readiness !== undefined) return readiness
    const current = verifyResolvers(core, AbortSignal.timeout(5_000)).then(
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
          jsonAnswer(ok ? 200 : 503, { status: ok ? 'ready' : 'group service unreachable', groupService: healthOf(core) }),
        )
      case '/_gate/metrics':
        return {
          status: 200,
          headers: { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' },
          body: metrics.render(healthOf(core), decisions?.dropped),
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
      case '/_gate/backchannel-logout':
        if (backchannelLogout === undefined) return NOT_FOUND
        if (method !== 'POST') return notAllowed('POST')
        return backchannelLogout(req)
      case '/_gate/whoami':
        if (method !== 'GET' && method !== 'HEAD') return notAllowed('GET')
        return whoami(req, new URLSearchParams(query))
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
    // The gate reads no request body but a back-channel logout's: Node discards an unread one when the answer ends.
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
      await closeResolvers(core)
      sessionEnds.close()
      await redis?.quit()
    },
  }
}
