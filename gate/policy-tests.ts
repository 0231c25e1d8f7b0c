/**
 * Running a configuration's policy tests, and explaining one request: offline, through the
 * gate's own check (path reading, rule matching, the kit's flow, the guard core, the
 * resolver and its decision engine), with the fixtures as the group service. What a test
 * says is what the gate would answer, not what a second copy of the rules thinks.
 *
 * @module
 */
import type { ExplainedNode, Requirement, ServiceResolvers } from '../src/index.js'
import { describeRequirement } from '../src/internal.js'
import { closeResolvers } from './build-flow.js'
import type { GateSession, SessionCookies } from './session/session.js'
import { errorDescriptionOf, type Answer } from './http/answer.js'
import { createCheckHandler, type CheckHandler } from './front/check.js'
import type { CompiledRule, GateSettings } from './config/types.js'
import { createFixtureService } from './policy-tests/fixture-service.js'
import { ProblemList, type GateConfigProblem } from './config/problem.js'
import { readGateSettings } from './config/read.js'
import { buildGate, configProblems, type Built } from './gate.js'
import { createGateMetrics } from './ops/metrics.js'
import type { ProxyRequest } from './http/original-request.js'
import { normalisePath } from './http/path-normalise.js'
import { requirementFor } from './policy/rules.js'
import type { PolicyTest } from './config/policy-config.js'

/** What the gate answered, in the words of a test's `expect`; `unavailable` is a 503 (or any other status). */
export type PolicyOutcome = 'allow' | 'deny' | 'signin' | 'unavailable'

/** One request, decided. */
export interface PolicyVerdict {
  readonly outcome: PolicyOutcome
  readonly status: number
  /** The rule that answered; `undefined` when the request was refused before any rule (an ambiguous path, an unknown host) or matched none. */
  readonly rule: string | undefined
  /** Why, in words: the 403's or 401's `error_description`, or what the rule allows. */
  readonly reason: string
  /** The decision tree of the rule's requirement for this user (none for `anyone`, anonymous or no rule). */
  readonly tree: ExplainedNode | undefined
}

/** One policy test's result. */
export interface PolicyTestResult {
  readonly test: PolicyTest
  readonly ok: boolean
  readonly verdict: PolicyVerdict
}

/** The request to decide: a method and an absolute URL as written, and who sends it. */
export interface PolicyRequest {
  readonly method: string
  readonly scheme: 'http' | 'https'
  readonly authority: string
  readonly target: string
  /** `undefined`: no credentials (anonymous). */
  readonly token: string | undefined
  /**
   * With several group services: the service the user signed in with (the request then
   * carries a session of it, as a browser's would). Default: a bearer token.
   */
  readonly service?: string | undefined
}

/** Decides requests the way the gate would; see {@link createPolicyRunner}. */
export interface PolicyRunner {
  /** The configuration as read (its rules and fixtures among them). */
  readonly settings: GateSettings
  /** The fixtures' token for `user` (only when made from fixtures). */
  tokenOf(user: string): string
  decide(request: PolicyRequest): Promise<PolicyVerdict>
  /** Every test of the configuration, in order. */
  runTests(): Promise<PolicyTestResult[]>
  close(): Promise<void>
}

const OUTCOMES: Readonly<Record<number, PolicyOutcome>> = { 200: 'allow', 401: 'signin', 302: 'signin', 403: 'deny' }

function reasonOf(answer: Answer, rule: CompiledRule | undefined): string {
  if (answer.status === 200) return rule?.decision === 'anyone' ? 'the rule lets anyone in' : 'the requirement is met'
  if (answer.status === 302) return 'a browser is sent to sign in'
  return errorDescriptionOf(answer) ?? `status ${answer.status}`
}

/**
 * Builds the configuration (refusing it as the gate would: a `GateConfigError` with every
 * problem) and returns a runner that decides requests through the gate's check. Without
 * `live`, the group service is the configuration's `fixtures`, served in process with the
 * network disabled; with `live: true`, requests go to the configured group service (for
 * `--explain` with a real token).
 *
 * @example
 * ```ts
 * const runner = createPolicyRunner(loaded.config)
 * for (const result of await runner.runTests()) console.log(result.ok ? 'ok' : 'not ok', result.test.title)
 * await runner.close()
 * ```
 */
export function createPolicyRunner(config: unknown, options: { readonly live?: boolean } = {}): PolicyRunner {
  // The fixtures and the service's address, read first: the resolver is made with the fixtures' dispatcher.
  const preview = readGateSettings(config, new ProblemList())
  const baseUrls =
    preview.services === undefined ? [preview.service['baseUrl']] : preview.services.list.map((each) => each.service['baseUrl'])
  const service = options.live === true ? undefined : createFixtureService(baseUrls.map(addressOf), preview.policy.fixtures)
  let built: Built
  try {
    built = buildGate(config, () => undefined, service === undefined ? {} : { dispatcher: service.dispatcher })
  } catch (error) {
    void service?.close()
    throw error
  }
  const { flow, core, rules, settings, router } = built
  let answered: CompiledRule | undefined
  /** With several services, the one the check sent the token to (`null`: none). */
  let servedBy: string | null | undefined
  /** The session of the request being decided, when it names its service (set by `decide`, read by the check). */
  let session: GateSession | undefined
  const sessions: Pick<SessionCookies, 'readSession'> = { readSession: () => session }
  // Browsers are not sent to sign in (an API client's 401 says the same), and no userinfo is asked: no OAuth client.
  const check: CheckHandler = createCheckHandler({
    flow,
    rules,
    settings,
    trusted: () => true,
    cookies: sessions,
    signIns: new Map(),
    router,
    metrics: createGateMetrics(),
    now: Date.now,
    observe: (record) => {
      answered = record.rule
      servedBy = record.service
    },
  })

  /**
   * The decision tree of `requirement` for `token`. With several services, the one the
   * check sent the token to decides its part of the requirement (as the check did); the
   * parts on other services are in the tree too, denied, `other_service`, with the service
   * they are on: that is why such a request is refused.
   */
  async function explainFor(
    token: string,
    requirement: Requirement,
    service: string | null | undefined,
  ): Promise<ExplainedNode | undefined> {
    const { services } = core
    if (services === undefined) return (await core.resolver.explain(token, requirement)).tree
    if (typeof service !== 'string') return undefined
    const projected = services.project(requirement, service)
    if (projected === undefined) return elsewhere(services, requirement, true)
    const { tree } = await services.resolver(service).explain(token, projected)
    return graft(services, service, requirement, tree)
  }

  async function decide(request: PolicyRequest): Promise<PolicyVerdict> {
    // The request as Caddy's forward_auth would describe it (the protocol that carries every part as sent).
    const headers: Record<string, string> = {
      'x-forwarded-method': request.method,
      'x-forwarded-proto': request.scheme,
      'x-forwarded-host': request.authority,
      'x-forwarded-uri': request.target,
      accept: 'application/json',
    }
    session = undefined
    if (request.token !== undefined && request.service !== undefined) {
      session = {
        accessToken: request.token,
        expiresAt: undefined,
        refreshToken: undefined,
        sub: 'policy-test',
        issuedAt: Date.now(),
        service: request.service,
      }
    } else if (request.token !== undefined) headers['authorization'] = `Bearer ${request.token}`
    const proxyRequest: ProxyRequest = {
      method: 'GET',
      headers,
      rawHeaders: Object.entries(headers).flat(),
      socket: { remoteAddress: '127.0.0.1' },
    }
    answered = undefined
    servedBy = undefined
    const answer = await check('forward-auth', proxyRequest, '/_gate/forward-auth')
    // Set by `observe` during the check (TypeScript cannot see a callback assign them).
    const rule = answered as CompiledRule | undefined
    const service = servedBy as string | null | undefined
    let tree: ExplainedNode | undefined
    // What the rule required of this URL: a rule with parameters, its ids filled in from the path, as the check had them.
    const path = normalisePath(request.target)
    const required = rule === undefined || path === undefined ? undefined : requirementFor(rule, path)
    if (request.token !== undefined && required !== undefined && required !== 'anyone' && answer.status !== 401) {
      tree = await explainFor(request.token, required, service).catch(() => undefined)
    }
    return {
      outcome: OUTCOMES[answer.status] ?? 'unavailable',
      status: answer.status,
      rule: rule?.id,
      reason: reasonOf(answer, rule),
      tree,
    }
  }

  function tokenOf(user: string): string {
    if (service === undefined) throw new Error('no fixtures: the runner asks the group service')
    return service.tokenOf(user)
  }

  return {
    settings,
    tokenOf,
    decide,
    async runTests() {
      const results: PolicyTestResult[] = []
      for (const test of settings.policy.tests) {
        const token = test.as === undefined ? undefined : tokenOf(test.as)
        const verdict = await decide({ ...test, token })
        const ok = verdict.outcome === test.expect && (test.rule === undefined || test.rule === verdict.rule)
        results.push({ test, ok, verdict })
      }
      return results
    },
    async close() {
      await closeResolvers(core)
      await service?.close()
    },
  }
}

/** The service's address for the fixtures, or a stand-in when the configuration's is not one (the build refuses it then). */
function addressOf(baseUrl: unknown): string {
  try {
    return new URL(String(baseUrl)).href
  } catch {
    return 'http://127.0.0.1/'
  }
}

/** A part of a requirement on another service than the token's, as the tree shows it: denied, `other_service`, naming its service. */
function elsewhere(services: ServiceResolvers, requirement: Requirement, settled: boolean): ExplainedNode {
  const part = { requirement: describeRequirement(requirement), outcome: 'denied', reason: 'other_service', settled } as const
  if (requirement.kind === 'anyOf' || requirement.kind === 'allOf') {
    return { ...part, kind: requirement.kind, parts: requirement.requirements.map((inner) => elsewhere(services, inner, settled)) }
  }
  const on = services.names.find((name) => services.project(requirement, name) !== undefined)
  return { ...part, requirement: `${part.requirement}${on === undefined ? '' : ` on ${on}`}`, kind: requirement.kind, answers: [] }
}

/**
 * The tree of `requirement` from the tree of its projection onto `service` (the core's
 * projection, asked part by part): the parts it kept are explained as the resolver
 * explained them, the parts it dropped are {@link elsewhere}. Only an `anyOf` drops parts
 * (an `allOf` with a part elsewhere is elsewhere as a whole), and one that keeps a single
 * part of several is that part.
 */
function graft(services: ServiceResolvers, service: string, requirement: Requirement, tree: ExplainedNode): ExplainedNode {
  if (requirement.kind !== 'anyOf' && requirement.kind !== 'allOf') return tree
  const parts = requirement.requirements
  const kept = parts.map((part) => services.project(part, service) !== undefined)
  const count = kept.filter(Boolean).length
  // Denied, the branch rests on each of its parts; allowed, on the one that held (never one elsewhere).
  const restsOnAll = tree.outcome === 'denied' && tree.settled
  if (requirement.kind === 'anyOf' && count === 1 && parts.length > 1) {
    const only = graft(services, service, parts[kept.indexOf(true)] as Requirement, tree)
    const { outcome, settled } = tree
    return {
      kind: 'anyOf',
      requirement: describeRequirement(requirement),
      outcome,
      ...(tree.reason === undefined ? {} : { reason: tree.reason }),
      settled,
      parts: parts.map((part, index) => (kept[index] === true ? only : elsewhere(services, part, restsOnAll))),
    }
  }
  if (!('parts' in tree) || tree.parts.length !== count) return tree
  let next = 0
  return {
    ...tree,
    requirement: describeRequirement(requirement),
    parts: parts.map((part, index) => {
      if (kept[index] !== true) return elsewhere(services, part, restsOnAll)
      const inner = tree.parts[next++] as ExplainedNode
      return graft(services, service, part, inner)
    }),
  }
}

/**
 * The policy tests of `config` that fail, each as a problem at its `tests[i]` (the test's
 * title, what it expected and what the gate answered, and why): what a start, a reload and
 * `--check` refuse. Empty when the configuration carries no tests or every one passes; a
 * configuration the gate would refuse for its problems rejects with that `GateConfigError`.
 *
 * @example
 * ```ts
 * const failing = await failingPolicyTests(config)
 * if (failing.length > 0) throw new GateConfigError(failing)
 * ```
 */
export async function failingPolicyTests(config: unknown): Promise<GateConfigProblem[]> {
  const tests = (config as { tests?: unknown } | null | undefined)?.tests
  // No tests, nothing to build: a start or reload without tests costs nothing more.
  if (!Array.isArray(tests) || tests.length === 0) return []
  const runner = createPolicyRunner(config)
  try {
    const problems = new ProblemList()
    for (const { test, ok, verdict } of await runner.runTests()) {
      if (ok) continue
      const wanted = test.rule === undefined ? test.expect : `${test.expect} by rule ${test.rule}`
      const got = `${verdict.outcome} (${verdict.status}, ${verdict.rule === undefined ? 'no rule' : `rule ${verdict.rule}`})`
      problems.add(
        ['tests', test.number - 1],
        `the policy test ${JSON.stringify(test.title)} fails: expected ${wanted}, got ${got}: ${verdict.reason}`,
      )
    }
    return [...problems.items]
  } finally {
    await runner.close()
  }
}

/**
 * Checks a configuration without starting anything, as a start and a reload do: its
 * problems, and when it has none, each of its policy tests that fails (at its `tests[i]`).
 * Empty when the gate would serve it.
 *
 * Running the tests is part of the check, not a separate feature: a configuration whose own
 * tests fail is not valid anywhere (a start and a reload refuse it too), so code that
 * validates one before deploying it gets the same answer the gate will give.
 *
 * @example
 * ```ts
 * for (const problem of await checkGateConfig(config)) console.error(formatConfigProblem(problem))
 * ```
 */
export async function checkGateConfig(config: unknown): Promise<readonly GateConfigProblem[]> {
  const problems = await configProblems(config)
  return problems.length > 0 ? problems : failingPolicyTests(config)
}
