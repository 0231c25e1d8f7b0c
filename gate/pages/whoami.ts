/**
 * `GET /_gate/whoami`: who the gate takes the person asking for (a session's user, or an
 * access token), and, for each rule of the host it is asked on, whether they pass it, in
 * words. JSON when `Accept` asks for it. A rule the group service cannot settle right now is
 * "unknown", never "no"; a page never lists a group that no rule names.
 *
 * A rule with parameters (`/courses/{course}/**`) requires a group that depends on the URL:
 * asked with `?path=/courses/INF1000/notes`, whoami names and checks the group that path
 * requires (`fc:fs:fs:emne:example.org:INF1000:1`), the one the check decides on; without a
 * path, or for a path the rule does not bind, it shows the rule as written and says that it
 * `depends` on the URL, without asking the group service about a template.
 *
 * @module
 */
import type { IncomingMessage } from 'node:http'
import { extractBearerToken, InvalidTokenError, TokenMissingError } from '../../src/index.js'
import { type GuardCore } from '../../src/adapter-kit.js'
import { requiredText } from '../../src/internal.js'
import { jsonAnswer, type Answer } from '../http/answer.js'
import { browserOrigin } from '../http/browser-origin.js'
import { normalisePath } from '../http/path-normalise.js'
import type { CompiledRule, GateSettings } from '../config/types.js'
import { escapeHtml, htmlPage, pageLinks, wantsHtml } from './page-html.js'
import { hostMatches, isKnownHost, requirementFor } from '../policy/rules.js'
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
  /**
   * `pass`, `fail`, `signin` (credentials needed to tell), `unknown` (the group service did
   * not answer), `depends` (a rule with parameters, asked without a path it binds: its group
   * is the URL's).
   */
  readonly outcome: 'pass' | 'fail' | 'signin' | 'unknown' | 'depends'
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
  depends: 'depends on the URL: its path names the group',
}

/**
 * What a rule requires, in the 403's words ("a group requirement" with `denials: generic`):
 * `required`, the requirement of one path (a rule with parameters: its ids filled in), else
 * the rule as written.
 */
export function requirementWords(rule: CompiledRule, generic: boolean, required: CompiledRule['decision'] = rule.decision): string {
  if (required === 'anyone') return 'anyone, without signing in'
  if (required.kind === 'authenticated') return 'any signed-in user'
  if (generic) return 'a group requirement'
  return requiredText(required).replace(/^This resource requires /, '')
}

/** The path whoami is asked about (`?path=`): `undefined` without one, `null` for one the check would refuse. */
function askedPath(query: URLSearchParams): string | null | undefined {
  const asked = query.getAll('path')
  if (asked.length === 0) return undefined
  if (asked.length > 1) return null
  return normalisePath(asked[0] as string) ?? null
}

/** Creates the whoami endpoint. */
export function createWhoami(deps: WhoamiDependencies): (req: IncomingMessage, query?: URLSearchParams) => Promise<Answer> {
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
    required: CompiledRule['decision'] | undefined,
    token: string | undefined,
    service: string | undefined,
  ): Promise<Pick<WhoamiRule, 'outcome' | 'reason' | 'detail'>> {
    if (required === 'anyone') return { outcome: 'pass' }
    // A rule with parameters, without a path it binds: no group to ask about (never its template).
    if (required === undefined) return { outcome: 'depends' }
    if (token === undefined) return { outcome: 'signin' }
    try {
      const { services } = core
      // With several services, the token's own service decides, as the check would; a token none is chosen for signs in.
      if (services !== undefined && service === undefined) return { outcome: 'signin' }
      const decision =
        services === undefined || service === undefined
          ? await core.resolver.check(token, required)
          : await services.check(token, required, { service })
      if (decision.allowed) return { outcome: 'pass' }
      // Not a missing membership: the rule's groups are on another service than the person's.
      if (decision.reason === 'other_service' && !generic && services !== undefined && router !== undefined && service !== undefined) {
        return { outcome: 'fail', reason: decision.reason, detail: otherServiceReason(services, router, required, service) }
      }
      return { outcome: 'fail', reason: decision.reason }
    } catch (error) {
      // A refused token is a sign-in; anything else (the group service down) is not known: never a "no".
      if (error instanceof InvalidTokenError || error instanceof TokenMissingError) return { outcome: 'signin' }
      return { outcome: 'unknown' }
    }
  }

  return async function whoami(req, query = new URLSearchParams()) {
    const origin = browserOrigin(req, trusted)
    if (origin === undefined) return jsonAnswer(400, { error: 'invalid_request', error_description: 'The request names no host' })
    const path = askedPath(query)
    if (path === null) {
      return jsonAnswer(400, {
        error: 'invalid_request',
        error_description: 'path must be one path on this host the gate would read, such as /courses/INF1000/',
      })
    }
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
      mine.map(async ({ rule, words }) => {
        // A rule with parameters: the requirement of the path asked about, ids filled in; none without one.
        const required = rule.requirementAt === undefined ? rule.decision : path === undefined ? undefined : requirementFor(rule, path)
        const requires = required === undefined || required === rule.decision ? words.requires : requirementWords(rule, generic, required)
        return { ...words, requires, ...(await outcomeOf(rule, required, token, service)) }
      }),
    )
    if (!wantsHtml(req.headers.accept)) {
      return jsonAnswer(200, {
        host: origin.host,
        ...(path === undefined ? {} : { path }),
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
    // Said only where it matters: a rule of this host has parameters.
    const asked =
      path === undefined || !mine.some(({ rule }) => rule.requirementAt !== undefined)
        ? ''
        : `<p>For <code>${escapeHtml(path)}</code>: a rule with parameters names the group this path requires.</p>\n`
    return htmlPage(
      200,
      `Who am I on ${origin.host}`,
      `<h1>Who am I on ${escapeHtml(origin.host)}</h1>
<p>${who}</p>
${asked}<h2>The rules of this site, in order (the first that matches a request decides)</h2>
${list}
${pageLinks(credentials === 'session')}`,
    )
  }
}
