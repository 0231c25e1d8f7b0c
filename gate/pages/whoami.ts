/**
 * `GET /_gate/whoami`: who the gate takes the person asking for (a session's user, or an
 * access token), and, for each rule of the host it is asked on, whether they pass it, in
 * words. JSON when `Accept` asks for it. A rule the group service cannot settle right now is
 * "unknown", never "no"; a page never lists a group that no rule names.
 *
 * @module
 */
import type { IncomingMessage } from 'node:http'
import { extractBearerToken, InvalidTokenError, TokenMissingError } from '../../src/index.js'
import { type GuardCore } from '../../src/adapter-kit.js'
import { requiredText } from '../../src/internal.js'
import { jsonAnswer, type Answer } from '../http/answer.js'
import { browserOrigin } from '../http/browser-origin.js'
import type { CompiledRule, GateSettings } from '../config/types.js'
import { escapeHtml, htmlPage, pageLinks, wantsHtml } from './page-html.js'
import { hostMatches, isKnownHost } from '../policy/rules.js'
import { isServiceOfGate, type ServiceRouter } from '../policy/service-route.js'
import type { GateSignIns } from '../session/oauth-clients.js'
import { otherServiceReason } from '../policy/service-words.js'
import type { SessionCookies } from '../session/session.js'
import type { TrustCheck } from '../http/trusted-proxies.js'

/** What whoami says of one rule for the person asking. */
export interface WhoamiRule {
  readonly id: string
  readonly methods: readonly string[] | null
  readonly path: string
  /** What the rule requires, in words. */
  readonly requires: string
  /** `pass`, `fail`, `signin` (credentials needed to tell), `unknown` (the group service did not answer). */
  readonly outcome: 'pass' | 'fail' | 'signin' | 'unknown'
  /** The decision's reason for `fail` (`not_member`, `role_too_low`, ...). */
  readonly reason?: string
  /**
   * For `other_service`: where the rule's groups are and which service the person came
   * with, in words (never with `denials: generic`).
   */
  readonly detail?: string
}

/** What whoami needs of the gate. */
export interface WhoamiDependencies {
  readonly core: GuardCore
  readonly rules: readonly CompiledRule[]
  readonly settings: GateSettings
  readonly trusted: TrustCheck
  readonly cookies: SessionCookies | undefined
  /** With several group services: which one a token goes to, and what they are called. */
  readonly router?: ServiceRouter | undefined
  /**
   * The sign-ins (`oauth`): a bearer token's user is its userinfo `sub`, as the check sends
   * it to the app, so that whoami and the app's `X-Voot-User` give one answer.
   */
  readonly signIns?: GateSignIns | undefined
}

const OUTCOME_WORDS: Readonly<Record<WhoamiRule['outcome'], string>> = {
  pass: 'you pass',
  fail: 'you do not pass',
  signin: 'sign in to find out',
  unknown: 'unknown right now: the group service did not answer',
}

/** What a rule requires, in the 403's words ("a group requirement" with `denials: generic`). */
export function requirementWords(rule: CompiledRule, generic: boolean): string {
  if (rule.decision === 'anyone') return 'anyone, without signing in'
  if (rule.decision.kind === 'authenticated') return 'any signed-in user'
  if (generic) return 'a group requirement'
  return requiredText(rule.decision).replace(/^This resource requires /, '')
}

/** Creates the whoami endpoint. */
export function createWhoami(deps: WhoamiDependencies): (req: IncomingMessage) => Promise<Answer> {
  const { core, rules, settings, trusted, cookies, router, signIns } = deps

  /** A bearer token's user, as the check finds it (the same cached userinfo); empty when unknown. */
  async function bearerUser(token: string, service: string | undefined): Promise<string> {
    if (router !== undefined && service === undefined) return ''
    const oauth = signIns?.get(service)
    if (oauth === undefined) return ''
    return oauth.subjectOf(token).catch(() => '')
  }
  const generic = settings.service['denials'] === 'generic'
  // What each rule matches and needs, in words: made once, not per request.
  const worded = rules.map((rule) => ({
    rule,
    words: {
      id: rule.id,
      methods: rule.methods === undefined ? null : [...rule.methods],
      path: rule.glob ?? '/**',
      requires: requirementWords(rule, generic),
    },
  }))

  async function outcomeOf(
    rule: CompiledRule,
    token: string | undefined,
    service: string | undefined,
  ): Promise<Pick<WhoamiRule, 'outcome' | 'reason' | 'detail'>> {
    if (rule.decision === 'anyone') return { outcome: 'pass' }
    if (token === undefined) return { outcome: 'signin' }
    try {
      const { services } = core
      // With several services, the token's own service decides, as the check would; a token none is chosen for signs in.
      if (services !== undefined && service === undefined) return { outcome: 'signin' }
      const decision =
        services === undefined || service === undefined
          ? await core.resolver.check(token, rule.decision)
          : await services.check(token, rule.decision, { service })
      if (decision.allowed) return { outcome: 'pass' }
      // Not a missing membership: the rule's groups are on another service than the person's.
      if (decision.reason === 'other_service' && !generic && services !== undefined && router !== undefined && service !== undefined) {
        return { outcome: 'fail', reason: decision.reason, detail: otherServiceReason(services, router, rule.decision, service) }
      }
      return { outcome: 'fail', reason: decision.reason }
    } catch (error) {
      // A refused token is a sign-in; anything else (the group service down) is not known: never a "no".
      if (error instanceof InvalidTokenError || error instanceof TokenMissingError) return { outcome: 'signin' }
      return { outcome: 'unknown' }
    }
  }

  return async function whoami(req) {
    const origin = browserOrigin(req, trusted)
    if (origin === undefined) return jsonAnswer(400, { error: 'invalid_request', error_description: 'The request names no host' })
    if (settings.strictHosts && !isKnownHost(rules, settings.redirectHosts, origin.host)) {
      return jsonAnswer(403, { error: 'forbidden', error_description: 'The gate serves no such host' })
    }
    let token: string | undefined
    let service: string | undefined
    let user = ''
    let credentials: 'session' | 'bearer' | null = null
    if (req.headers.authorization !== undefined) {
      try {
        token = extractBearerToken(req.headers.authorization)
        service = router?.bearer(origin.host, '/', token)
        credentials = 'bearer'
      } catch {
        token = undefined
      }
      if (token !== undefined) user = await bearerUser(token, service)
    } else {
      const session = cookies?.readSession(req.headers.cookie, origin)
      // As the check: a session of a service the gate does not have is no session.
      if (session !== undefined && isServiceOfGate(router, session.service)) {
        token = session.accessToken
        service = session.service
        user = session.sub
        credentials = 'session'
      }
    }
    const mine = worded.filter(({ rule }) => rule.host === undefined || hostMatches(rule, origin.host))
    const described: WhoamiRule[] = await Promise.all(
      mine.map(async ({ rule, words }) => ({ ...words, ...(await outcomeOf(rule, token, service)) })),
    )
    if (!wantsHtml(req.headers.accept)) {
      return jsonAnswer(200, {
        host: origin.host,
        user,
        credentials,
        ...(router === undefined ? {} : { service: service ?? null }),
        rules: described,
      })
    }

    const through = router === undefined || service === undefined ? '' : ` with ${escapeHtml(router.labelOf(service))}`
    const who =
      credentials === 'session'
        ? `You are signed in as <strong>${escapeHtml(user)}</strong>${through}.`
        : credentials === 'bearer'
          ? user === ''
            ? 'You are using an access token (a bearer token); the gate does not know its user by name.'
            : `You are using an access token (a bearer token) of <strong>${escapeHtml(user)}</strong>${through}.`
          : `You are not signed in. <a href="/_gate/signin?rd=%2F_gate%2Fwhoami">Sign in</a>`
    const items = described
      .map((rule) => {
        const methods = rule.methods === null ? 'Any method' : rule.methods.join(', ')
        const reason = rule.reason === undefined ? '' : ` (${escapeHtml(rule.detail ?? rule.reason.replaceAll('_', ' '))})`
        const css = rule.outcome === 'pass' ? 'pass' : rule.outcome === 'fail' ? 'fail' : 'unknown'
        return `<li><strong>${escapeHtml(rule.id)}</strong>: ${escapeHtml(methods)} on <code>${escapeHtml(rule.path)}</code> needs ${escapeHtml(rule.requires)}. <span class="${css}">${escapeHtml(OUTCOME_WORDS[rule.outcome])}${reason}.</span></li>`
      })
      .join('\n')
    const list =
      described.length === 0
        ? '<p>No rule of the gate names this host: every request to it is refused.</p>'
        : `<ul class="rules">\n${items}\n</ul>`
    return htmlPage(
      200,
      `Who am I on ${origin.host}`,
      `<h1>Who am I on ${escapeHtml(origin.host)}</h1>
<p>${who}</p>
<h2>The rules of this site, in order (the first that matches a request decides)</h2>
${list}
${pageLinks(credentials === 'session')}`,
    )
  }
}
