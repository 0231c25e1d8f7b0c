/**
 * The check endpoints (`auth-request`, `forward-auth`, `ext-authz`): from the proxy's
 * headers to the original request, its rule, its credentials (a bearer token, else the
 * session cookie), and the decision of the kit's flow (`createGuardFlow`, as every adapter
 * runs it), rendered for what that proxy can pass on.
 *
 * @module
 */
import { extractBearerToken, ForbiddenError, InvalidTokenError, TokenMissingError, UpstreamError } from '../../src/index.js'
import {
  authorizationOf,
  createGuardFlow,
  quoteHeaderValue,
  type FoundToken,
  type FrameworkIO,
  type GuardFlow,
  type GuardOptions,
  type GuardStep,
  type HttpErrorAnswer,
  type Refusal,
} from '../../src/adapter-kit.js'
import { requiredText } from '../../src/internal.js'
import { fromContract, jsonAnswer, type Answer } from '../http/answer.js'
import type { CompiledRule, GateSettings } from '../config/types.js'
import type { CheckRecord } from '../ops/check-record.js'
import type { GateMetrics } from '../ops/metrics.js'
import type { GateSignIns } from '../session/oauth-clients.js'
import { isServiceOfGate, type ServiceRouter } from '../policy/service-route.js'
import { isBrowserRequest, originalRequest, type CheckProtocol, type OriginalRequest, type ProxyRequest } from '../http/original-request.js'
import { normalisePath } from '../http/path-normalise.js'
import { isKnownHost, matchRule } from '../policy/rules.js'
import { otherServiceText } from '../policy/service-words.js'
import type { GateSession, SessionCookies } from '../session/session.js'
import type { TrustCheck } from '../http/trusted-proxies.js'

/** What the gate knows of a check when it answers: the request, and what it read of it so far. */
interface CheckSoFar {
  readonly protocol: CheckProtocol
  readonly req: ProxyRequest
  /** `performance.now()` when the check began; 0 when nobody observes checks. */
  readonly started: number
  readonly original?: OriginalRequest | undefined
  readonly rule?: CompiledRule | undefined
}

/** A check on its way through the kit's flow: the request and what the gate read of it. */
interface CheckInput extends CheckSoFar {
  readonly original: OriginalRequest
  readonly rule: CompiledRule
  /** The original request's path, normalised (what the rules and the services' routes match). */
  readonly path: string
  /** The `Authorization` header(s); `undefined` when the request has none, and then {@link session} is set. */
  readonly authorization: string | readonly string[] | undefined
  readonly session: GateSession | undefined
  /**
   * What the flow's read of the credentials ({@link checkToken}) found, kept for the answer
   * and the record: the token, and with several services, the service it goes to. Both
   * stay `undefined` when the read refused the credentials.
   */
  token: string | undefined
  service: string | undefined
  /**
   * Set when the bearer token goes to no service: its host and path are routed to none of
   * the gate's and it names no issuer of theirs. It was sent nowhere and not judged, so it
   * is not answered as an invalid one.
   */
  unrouted: boolean
}

/** How a check handler answers an allowed check and a refused one; handed to the flow with each check. */
interface CheckAnswers {
  allowed(input: CheckInput): CheckResult
  refused(input: CheckInput, refusal: Refusal): Answer
}

type CheckResult = Answer | Promise<Answer>

/** A refusal, answered by the check handler. */
const refuse = (refusal: Refusal, input: CheckInput, answers: CheckAnswers): Answer => answers.refused(input, refusal)

/** The gate's input and output for the kit's flow. */
const CHECK_IO: FrameworkIO<CheckInput, CheckAnswers, undefined, CheckResult> = {
  // The flow reads credentials through `checkToken` (a header, else the session) instead.
  authorization: (input) => input.authorization,
  allow: (_context, input, answers) => answers.allowed(input),
  respond: refuse,
  // A gate always answers the proxy: there is no framework to hand a refusal on to.
  delegate: refuse,
  // Outside the HTTP contract (a bug): the listener answers 500.
  fail: (error) => Promise.reject(error),
}

/**
 * A check's credentials: the bearer token of its `Authorization` header, else its session's
 * access token and expiry; with several services, and the service it goes to (the
 * session's, or the one `router` routes the bearer token to).
 */
function checkToken(input: CheckInput, router: ServiceRouter | undefined): FoundToken {
  const { session } = input
  if (session === undefined) {
    const token = extractBearerToken(input.authorization)
    const service = router?.bearer(input.original.host, input.path, token)
    input.token = token
    input.service = service
    if (router === undefined) return token
    if (service === undefined) {
      input.unrouted = true
      // Stops the flow before any call; the check answers it with its own code (`no_service`).
      throw new InvalidTokenError('The token goes to no group service')
    }
    return { token, service }
  }
  const { accessToken: token, expiresAt, service } = session
  input.token = token
  input.service = service
  if (router === undefined && expiresAt === undefined) return token
  return { token, ...(expiresAt === undefined ? {} : { expiresAt }), ...(service === undefined ? {} : { service }) }
}

/** The flow the check endpoints run, over a guard core made from `options` (the gate's `service`). */
export type CheckFlow = GuardFlow<CheckInput, CheckAnswers, undefined, CheckResult>

/**
 * Creates the gate's flow and, with it, its guard core; options as `createGuardCore`'s.
 * With several services (`options.services`), `router` says which one a bearer token goes to.
 *
 * @example
 * ```ts
 * const flow = createCheckFlow({ baseUrl: 'https://groups-api.example.org/groups', realm: 'voot-gate' })
 * compileRules(settings.rules, flow.core, problems)
 * ```
 */
export function createCheckFlow(options: GuardOptions, router?: ServiceRouter): CheckFlow {
  return createGuardFlow({ ...options, getToken: (input: CheckInput) => checkToken(input, router) }, CHECK_IO)
}

/** What the check endpoints need. */
export interface CheckDependencies {
  readonly flow: CheckFlow
  readonly rules: readonly CompiledRule[]
  readonly settings: GateSettings
  readonly trusted: TrustCheck
  /** Where a request's session is read (the policy tests hand the session of a test). */
  readonly cookies: Pick<SessionCookies, 'readSession'> | undefined
  /** The sign-ins: a browser refused for want of credentials is sent to sign in when there is one. */
  readonly signIns: GateSignIns
  /** With several services, which one a check's token goes to. */
  readonly router: ServiceRouter | undefined
  /** Where checks are counted; `undefined`: not counted (the forbidden page's second look at a check already counted). */
  readonly metrics?: GateMetrics | undefined
  readonly now: () => number
  /** Told of every check as it is answered (the decision log and the policy tests listen). */
  readonly observe?: ((record: CheckRecord) => void) | undefined
}

/** Answers one check request; synchronously when the cache already knows. */
export type CheckHandler = (protocol: CheckProtocol, req: ProxyRequest, url: string) => Answer | Promise<Answer>

/** Milliseconds before its expiry at which a session's access token is no longer used. */
const EXPIRY_MARGIN = 5_000

const NON_ASCII = /[^\u0000-\u007f]/

/** Creates the handler of the check endpoints. */
export function createCheckHandler(deps: CheckDependencies): CheckHandler {
  const { flow, rules, settings, trusted, cookies, signIns, router, metrics, now, observe } = deps
  const { core } = flow
  const realm = `Bearer realm=${quoteHeaderValue(core.realm)}`
  const contract = (error: unknown): HttpErrorAnswer => core.answer(error) as HttpErrorAnswer
  const MISSING = contract(new TokenMissingError(realm))
  // The refusals that depend on nothing of the request, answered as they are: made once.
  const MISSING_ANSWER = fromContract(MISSING)
  const FORBIDDEN_PATH_ANSWER = fromContract(
    contract(
      new ForbiddenError(
        'The request path is ambiguous (dot segments, "//", encoded "/" or "\\", control or invisible characters, a segment ending in a space or a dot, or invalid encoding)',
      ),
    ),
  )
  const NO_RULE_ANSWER = fromContract(contract(new ForbiddenError('No rule of the gate allows this request')))
  const UNKNOWN_HOST_ANSWER = fromContract(contract(new ForbiddenError('The gate serves no such host')))
  const HOST_MISMATCH_ANSWER = fromContract(
    contract(new ForbiddenError('The request names another host than the one the proxy routed it by')),
  )
  // A good token sent where no service is routed: not `invalid_token` (a client would throw the
  // token away), and no `error` in the challenge: the token was not judged.
  const NO_SERVICE_ANSWER = jsonAnswer(
    401,
    {
      error: 'no_service',
      error_description:
        'This host is routed to no group service of the gate, and the token names none: it was sent to none and not judged',
    },
    { 'www-authenticate': realm },
  )
  const userHeader = settings.headers.user.toLowerCase()
  const ruleHeader = settings.headers.rule.toLowerCase()
  const serviceHeader = settings.headers.service.toLowerCase()
  const tokenHeader = settings.headers.token?.toLowerCase()

  /** `service`: the group service the user came with (several services), so that the app tells a Feide alice from a SURFconext one. */
  function allowed(rule: CompiledRule, user: string, token: string | undefined, service = ''): Answer {
    const headers: Record<string, string> = {
      [userHeader]: user,
      [ruleHeader]: rule.id,
      [serviceHeader]: service,
      'cache-control': 'no-store',
    }
    if (tokenHeader !== undefined) headers[tokenHeader] = token ?? ''
    return { status: 200, headers }
  }

  function signInLocation(original: OriginalRequest): string {
    const back = `${original.scheme}://${original.authority}${original.target}`
    return `${original.scheme}://${original.authority}/_gate/signin?rd=${encodeURIComponent(back)}`
  }

  /** A refusal as the protocol can pass it on: a 401 sends a browser to sign in, when the gate can sign people in. */
  function refused(protocol: CheckProtocol, answer: HttpErrorAnswer, req: ProxyRequest, original: OriginalRequest): Answer {
    if (answer.status === 401 && signIns.size > 0 && isBrowserRequest(req, original)) {
      const location = signInLocation(original)
      // nginx's auth_request passes on 2xx, 401 and 403 only; its error_page 401 reads this Location.
      if (protocol === 'auth-request') return fromContract(answer, { location })
      return { status: 302, headers: { location, 'cache-control': 'no-store' } }
    }
    // A malformed header is 401 for nginx, whose auth_request would turn a 400 into a 500.
    if (protocol === 'auth-request' && answer.status === 400) return fromContract(answer, undefined, 401)
    return fromContract(answer)
  }

  function counted(check: CheckSoFar | CheckInput, answer: Answer, reason: string, user = ''): Answer {
    metrics?.check(check.protocol, answer.status)
    if (observe !== undefined) {
      const { protocol, req, original, rule, started } = check
      // The service the token went to: none when the check ended before its credentials were read.
      const service = router === undefined ? undefined : 'service' in check ? (check.service ?? null) : null
      observe({
        protocol,
        req,
        original,
        rule,
        answer,
        reason,
        user,
        ms: performance.now() - started,
        ...(service === undefined ? {} : { service }),
      })
    }
    return answer
  }

  /** The code of why a refusal was refused: a denial's reason, else the error's code. */
  function reasonOf(error: unknown): string {
    const { reason, code } = error as { reason?: unknown; code?: unknown }
    return typeof reason === 'string' ? reason : typeof code === 'string' ? code : 'error'
  }

  /** The user's `sub`: the session's, else userinfo's of the bearer token's service, when it signs people in. */
  function userOf(input: CheckInput): string | Promise<string> {
    if (input.session !== undefined) return input.session.sub
    const { token, service } = input
    if (token === undefined || signIns.size === 0) return ''
    const oauth = signIns.get(service)
    return oauth === undefined ? '' : oauth.subjectOf(token)
  }

  function userinfoFailure(error: unknown): HttpErrorAnswer {
    const status = (error as { status?: unknown }).status
    if (status === 401) {
      return contract(
        new InvalidTokenError('The access token is invalid or expired', {
          headers: { 'www-authenticate': `${realm}, error="invalid_token"` },
        }),
      )
    }
    return contract(new UpstreamError('ERR_UPSTREAM_NETWORK', 'userinfo failed', { headers: { 'retry-after': '5' }, retryAfter: 5 }))
  }

  const answers: CheckAnswers = {
    allowed(input) {
      // Allowed, so the flow read the credentials: the token is the one it decided on.
      const { protocol, rule, token } = input
      const service = input.service ?? ''
      const user = userOf(input)
      if (typeof user === 'string') return counted(input, allowed(rule, user, token, service), 'allowed', user)
      return user.then(
        (sub) => counted(input, allowed(rule, sub, token, service), 'allowed', sub),
        (error: unknown) =>
          counted(input, refused(protocol, userinfoFailure(error), input.req, input.original), `userinfo_${reasonOf(error)}`),
      )
    },
    refused: (input, { error, answer }) => {
      if (input.unrouted) return counted(input, NO_SERVICE_ANSWER, 'no_service')
      const reason = reasonOf(error)
      const worded = reason === 'other_service' ? otherServiceAnswer(input, error) : undefined
      return counted(input, refused(input.protocol, worded ?? answer, input.req, input.original), reason, input.session?.sub)
    },
  }

  // The `other_service` refusals' words, per rule and service the request came with: made once each.
  const otherServiceWords = new Map<CompiledRule, Map<string, HttpErrorAnswer>>()

  /**
   * A refusal for `other_service` that says where the rule's groups are and where the
   * request came from; `undefined` (the core's answer stands) when denials are generic: the
   * core's words are then not the requirement's, and neither are these.
   */
  function otherServiceAnswer(input: CheckInput, error: unknown): HttpErrorAnswer | undefined {
    const { rule, service } = input
    const { services } = core
    if (services === undefined || router === undefined || service === undefined || rule.decision === 'anyone') return undefined
    if ((error as Error).message !== requiredText(rule.decision)) return undefined
    const credentials = input.session === undefined ? 'bearer' : 'session'
    const forRule = otherServiceWords.get(rule) ?? new Map<string, HttpErrorAnswer>()
    otherServiceWords.set(rule, forRule)
    const key = `${credentials} ${service}`
    let made = forRule.get(key)
    if (made === undefined) {
      const words = otherServiceText({ services, router }, rule.decision, service, credentials)
      made = contract(new ForbiddenError(words, { reason: 'other_service' }))
      forRule.set(key, made)
    }
    return made
  }

  // Each rule's step, made once (the flow validates its requirement again, from memory).
  const steps = new Map<CompiledRule, GuardStep<CheckInput, CheckAnswers, undefined, CheckResult>>()
  for (const rule of rules) {
    if (rule.decision === 'anyone') continue
    const { requirementAt } = rule
    // A rule with parameters: the requirement of this path, worked out per request (an id
    // made too long by the path is the contract's 403, without a call).
    const requirement =
      requirementAt === undefined ? rule.decision : flow.core.computedRequirement((input: CheckInput) => requirementAt(input.path))
    steps.set(rule, flow.guard(requirement, false))
  }

  return function check(protocol, req, url) {
    const started = observe === undefined ? 0 : performance.now()
    if (!trusted(req.socket.remoteAddress)) return counted({ protocol, req, started }, MISSING_ANSWER, 'untrusted_peer')
    const original = originalRequest(protocol, req, url)
    if (original === undefined) return counted({ protocol, req, started }, MISSING_ANSWER, 'no_original_request')
    // The proxy's routing and the gate's judging must name one host, or a client picks the looser rules.
    if (original.routedHost !== undefined && original.routedHost !== original.host) {
      return counted({ protocol, req, started, original }, HOST_MISMATCH_ANSWER, 'host_mismatch')
    }
    if (settings.strictHosts && !isKnownHost(rules, settings.redirectHosts, original.host)) {
      return counted({ protocol, req, started, original }, UNKNOWN_HOST_ANSWER, 'unknown_host')
    }
    const path = normalisePath(original.target)
    if (path === undefined) return counted({ protocol, req, started, original }, FORBIDDEN_PATH_ANSWER, 'ambiguous_path')
    const rule = matchRule(rules, original.method, original.host, path)
    if (rule === undefined) return counted({ protocol, req, started, original }, NO_RULE_ANSWER, 'no_rule')
    // An app that normalises Unicode (NFKC: "/ａdmin" is "/admin") must not be reached on a
    // path that another rule guards: both readings have to find the same rule.
    if (NON_ASCII.test(path) && matchRule(rules, original.method, original.host, path.normalize('NFKC')) !== rule) {
      return counted({ protocol, req, started, original }, FORBIDDEN_PATH_ANSWER, 'ambiguous_path')
    }
    const step = steps.get(rule)
    if (step === undefined) return counted({ protocol, req, started, original, rule }, allowed(rule, '', undefined), 'anyone')

    const authorization = authorizationOf(req)
    let session: GateSession | undefined
    if (authorization === undefined) {
      session = cookies?.readSession(req.headers.cookie, original)
      // A session names the service it signed in with, and it must be one of the gate's:
      // else (the configuration changed since) it signs in again, its token sent nowhere.
      if (session !== undefined && !isServiceOfGate(router, session.service)) session = undefined
      // An expired session goes to /_gate/signin, which refreshes it where it can set the cookie.
      if (session === undefined || (session.expiresAt !== undefined && session.expiresAt - EXPIRY_MARGIN <= now())) {
        const why = session === undefined ? 'no_credentials' : 'session_expired'
        return counted({ protocol, req, started, original, rule }, refused(protocol, MISSING, req, original), why)
      }
    }
    // The step's promise settles with the answer (a promise of one is followed through).
    const input: CheckInput = {
      protocol,
      req,
      started,
      original,
      rule,
      path,
      authorization,
      session,
      token: undefined,
      service: undefined,
      unrouted: false,
    }
    return step(input, answers, undefined) as CheckResult
  }
}
