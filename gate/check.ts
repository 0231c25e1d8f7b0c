/**
 * The check endpoints (`auth-request`, `forward-auth`, `ext-authz`): from the proxy's
 * headers to the original request, its rule, its credentials (a bearer token, else the
 * session cookie), and the guard core's decision, rendered for what that proxy can pass on.
 *
 * @module
 */
import type { IncomingMessage } from 'node:http'
import { extractBearerToken, ForbiddenError, InvalidTokenError, TokenMissingError, UpstreamError } from '../src/index.js'
import { authorizationOf, quoteHeaderValue, type Credentials, type GuardCore, type HttpErrorAnswer } from '../src/adapter-kit.js'
import { fromContract, type Answer } from './answer.js'
import type { CompiledRule, GateSettings } from './config-types.js'
import type { GateMetrics } from './metrics.js'
import type { GateOAuth } from './oauth-clients.js'
import { isBrowserRequest, originalRequest, type CheckProtocol, type OriginalRequest } from './original-request.js'
import { normalisePath } from './path-normalise.js'
import { matchRule } from './rules.js'
import type { GateSession, SessionCookies } from './session.js'
import type { TrustCheck } from './trusted-proxies.js'

/** What the check endpoints need. */
export interface CheckDependencies {
  readonly core: GuardCore
  readonly rules: readonly CompiledRule[]
  readonly settings: GateSettings
  readonly trusted: TrustCheck
  readonly cookies: SessionCookies | undefined
  readonly oauth: GateOAuth | undefined
  readonly metrics: GateMetrics
  readonly now: () => number
}

/** Answers one check request; synchronously when the cache already knows. */
export type CheckHandler = (protocol: CheckProtocol, req: IncomingMessage, url: string) => Answer | Promise<Answer>

/** Milliseconds before its expiry at which a session's access token is no longer used. */
const EXPIRY_MARGIN = 5_000

/** Creates the handler of the check endpoints. */
export function createCheckHandler(deps: CheckDependencies): CheckHandler {
  const { core, rules, settings, trusted, cookies, oauth, metrics, now } = deps
  const realm = `Bearer realm=${quoteHeaderValue(core.realm)}`
  const contract = (error: unknown): HttpErrorAnswer => core.answer(error) as HttpErrorAnswer
  const MISSING = contract(new TokenMissingError(realm))
  // The refusals that depend on nothing of the request, answered as they are: made once.
  const MISSING_ANSWER = fromContract(MISSING)
  const FORBIDDEN_PATH_ANSWER = fromContract(
    contract(new ForbiddenError('The request path is ambiguous (dot segments, "//", encoded "/" or "\\", or invalid encoding)')),
  )
  const NO_RULE_ANSWER = fromContract(contract(new ForbiddenError('No rule of the gate allows this request')))
  const userHeader = settings.headers.user.toLowerCase()
  const ruleHeader = settings.headers.rule.toLowerCase()
  const tokenHeader = settings.headers.token?.toLowerCase()

  function allowed(rule: CompiledRule, user: string, token: string | undefined): Answer {
    const headers: Record<string, string> = { [userHeader]: user, [ruleHeader]: rule.id, 'cache-control': 'no-store' }
    if (tokenHeader !== undefined) headers[tokenHeader] = token ?? ''
    return { status: 200, headers }
  }

  function signInLocation(original: OriginalRequest): string {
    const back = `${original.scheme}://${original.authority}${original.target}`
    return `${original.scheme}://${original.authority}/_gate/signin?rd=${encodeURIComponent(back)}`
  }

  /** A refusal as the protocol can pass it on: a 401 sends a browser to sign in, when the gate can sign people in. */
  function refused(protocol: CheckProtocol, answer: HttpErrorAnswer, req: IncomingMessage, original: OriginalRequest): Answer {
    if (answer.status === 401 && oauth !== undefined && isBrowserRequest(req, original)) {
      const location = signInLocation(original)
      // nginx's auth_request passes on 2xx, 401 and 403 only; its error_page 401 reads this Location.
      if (protocol === 'auth-request') return fromContract(answer, { location })
      return { status: 302, headers: { location, 'cache-control': 'no-store' } }
    }
    // A malformed header is 401 for nginx, whose auth_request would turn a 400 into a 500.
    if (protocol === 'auth-request' && answer.status === 400) return fromContract(answer, undefined, 401)
    return fromContract(answer)
  }

  function counted(protocol: CheckProtocol, answer: Answer): Answer {
    metrics.check(protocol, answer.status)
    return answer
  }

  function userOf(session: GateSession | undefined, bearer: string | undefined): string | Promise<string> {
    if (session !== undefined) return session.sub
    if (oauth === undefined || bearer === undefined) return ''
    return oauth.subjectOf(bearer)
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

  return function check(protocol, req, url) {
    if (!trusted(req.socket.remoteAddress)) return counted(protocol, MISSING_ANSWER)
    const original = originalRequest(protocol, req, url)
    if (original === undefined) return counted(protocol, MISSING_ANSWER)
    const path = normalisePath(original.target)
    if (path === undefined) return counted(protocol, FORBIDDEN_PATH_ANSWER)
    const rule = matchRule(rules, original.method, original.host, path)
    if (rule === undefined) return counted(protocol, NO_RULE_ANSWER)
    if (rule.decision === 'anyone') return counted(protocol, allowed(rule, '', undefined))

    const authorization = authorizationOf(req)
    let credentials: Credentials
    let session: GateSession | undefined
    if (authorization !== undefined) {
      credentials = { authorization }
    } else {
      session = cookies?.readSession(req.headers.cookie, original)
      // An expired session goes to /_gate/signin, which refreshes it where it can set the cookie.
      if (session === undefined || (session.expiresAt !== undefined && session.expiresAt - EXPIRY_MARGIN <= now())) {
        return counted(protocol, refused(protocol, MISSING, req, original))
      }
      credentials = { token: { token: session.accessToken, ...(session.expiresAt === undefined ? {} : { expiresAt: session.expiresAt }) } }
    }

    const finish = (): Answer | Promise<Answer> => {
      // Allowed: a header the core accepted, so the token reads as it did there.
      const bearer = session === undefined && typeof authorization === 'string' ? extractBearerToken(authorization) : undefined
      const token = session?.accessToken ?? bearer
      const user = userOf(session, bearer)
      if (typeof user === 'string') return counted(protocol, allowed(rule, user, token))
      return user.then(
        (sub) => counted(protocol, allowed(rule, sub, token)),
        (error: unknown) => counted(protocol, refused(protocol, userinfoFailure(error), req, original)),
      )
    }
    const decided = core.authorizeNow(credentials, rule.decision)
    if (!(decided instanceof Promise)) return finish()
    return decided.then(finish, (error: unknown) => {
      const answer = core.answer(error)
      if (answer === undefined) throw error
      return counted(protocol, refused(protocol, answer, req, original))
    })
  }
}
