/**
 * Rules: compiled once (their requirements validated by the guard core), then matched in
 * order against a request's normalised method, host and path. The first match wins; none
 * means no access.
 *
 * @module
 */
import { allOf, anyOf, authenticated, group, groupOfType, type Requirement, VootError } from '../../src/index.js'
import { nearestKey, type GuardCore } from '../../src/adapter-kit.js'
import type { ProblemList } from '../config/problem.js'
import type { CompiledRule, GateRule } from '../config/types.js'
import { createParamBinder, fillTemplate, hasParams, pathParams, segmentParam } from '../config/rule-params.js'

/** A regular expression for a path glob: `*` one segment, `**` any number of them. */
export function globToRegExp(glob: string): RegExp {
  if (glob === '/**') return /^\/.*$/s
  const segments = glob.split('/').slice(1)
  let source = ''
  for (const segment of segments) {
    const param = segmentParam(segment)
    if (segment === '**') source += '(?:/[^/]*)*'
    // A parameter: one segment, named for the binder, which checks its alphabet and bounds.
    else if (param !== undefined) source += `/(?<${param}>[^/]+)`
    else
      source +=
        '/' +
        segment
          .split('*')
          .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
          .join('[^/]*')
  }
  return new RegExp(`^${source === '' ? '/' : source}$`, 's')
}

/** The `service` a rule's requirement names, as the builders take it. */
function scopeOf(want: Record<string, unknown>): { service: string } | undefined {
  return typeof want['service'] === 'string' ? { service: want['service'] } : undefined
}

/** What a rule requires, in the words of the core's builders; `undefined` for a shape the reading refused already. */
function requirementOf(rule: GateRule): Requirement | undefined {
  if (rule.allow === 'signed-in') return authenticated()
  const want = rule.require as unknown
  if (typeof want !== 'object' || want === null) return undefined
  const { group: id, groupOfType: type, anyOf: any, allOf: all, role } = want as Record<string, unknown>
  const roleOf = typeof role === 'string' ? role : undefined
  const scope = scopeOf(want as Record<string, unknown>)
  if (typeof id === 'string') return group(id, roleOf, scope)
  if (typeof type === 'string') return groupOfType(type, roleOf, scope)
  const ids = any ?? all
  if (!Array.isArray(ids) || ids.length === 0 || !ids.every((item) => typeof item === 'string')) return undefined
  const parts = ids.map((each) => group(each, roleOf, scope))
  return any !== undefined ? anyOf(...parts) : allOf(...parts)
}

/** Every role a rule may name: the resolver's, or with several services, any service's. */
/**
 * The requirement of a rule with parameters for one path: its ids with the path's values
 * filled in (built per request; the guard core finds an equal one again, so its verdicts
 * stay warm). A path the rule does not bind has no requirement (the check matched it first).
 */
function requirementAtOf(rule: GateRule, bind: NonNullable<CompiledRule['bind']>): (path: string) => Requirement {
  const want = rule.require as Record<string, unknown>
  return (path) => {
    const values = bind(path) ?? {}
    const filled: Record<string, unknown> = { ...want }
    for (const key of ['group', 'groupOfType'] as const) if (typeof want[key] === 'string') filled[key] = fillTemplate(want[key], values)
    for (const key of ['anyOf', 'allOf'] as const) {
      const ids = want[key]
      if (Array.isArray(ids)) filled[key] = (ids as unknown[]).map((id) => (typeof id === 'string' ? fillTemplate(id, values) : id))
    }
    return requirementOf({ ...rule, require: filled as GateRule['require'] & object }) as Requirement
  }
}

export function rolesOf(core: GuardCore): readonly string[] {
  const { services } = core
  if (services === undefined) return core.resolver.roles
  return [...new Set(services.names.flatMap((name) => services.resolver(name).roles))]
}

/**
 * Every problem of a rule's requirement, each at its own key: its `service`, each group id
 * on its own (so that two bad ids of an `anyOf` are two problems), then the role against
 * the resolver's roles (with several services, those of the groups' services), with the
 * nearest one as a suggestion.
 */
function requirementProblems(rule: GateRule, index: number, core: GuardCore, problems: ProblemList): void {
  const path = ['rules', index, 'require']
  const want = rule.require as Record<string, unknown> | undefined
  if (typeof want !== 'object' || want === null) return
  const attempt = (at: (string | number)[], make: () => Requirement, suggest?: string) => {
    try {
      core.prepare(make())
    } catch (error) {
      if (!(error instanceof VootError)) throw error
      problems.add(at, error.message, suggest)
    }
  }
  const scope = scopeOf(want)
  const { services } = core
  if (scope !== undefined && services === undefined) {
    problems.add([...path, 'service'], 'names a group service, but the gate has one "service": give "services" to name several')
    return
  }
  if (scope !== undefined && services !== undefined && !services.names.includes(scope.service)) {
    problems.add(
      [...path, 'service'],
      `must name one of the services (${services.names.join(', ')})`,
      nearestKey(scope.service, services.names),
    )
    return
  }
  const before = problems.items.length
  if (typeof want['group'] === 'string') attempt([...path, 'group'], () => group(want['group'] as string, undefined, scope))
  for (const kind of ['anyOf', 'allOf']) {
    const ids = want[kind]
    if (Array.isArray(ids)) ids.forEach((id, k) => typeof id === 'string' && attempt([...path, kind, k], () => group(id, undefined, scope)))
  }
  if (typeof want['groupOfType'] === 'string')
    attempt([...path, 'groupOfType'], () => groupOfType(want['groupOfType'] as string, undefined, scope))
  const role = want['role']
  if (typeof role !== 'string') return
  const suggest = nearestKey(role, rolesOf(core))
  if (services === undefined) {
    // The role on its own, on a requirement whose other parts cannot fail.
    attempt([...path, 'role'], () => groupOfType('voot-guard:role-check', role), suggest)
  } else if (problems.items.length === before) {
    // Each service has its roles: the role is checked with the groups it applies to.
    const requirement = requirementOf(rule)
    if (requirement !== undefined) attempt([...path, 'role'], () => requirement, suggest)
  }
}

/**
 * Compiles rules; a requirement the core refuses (an invalid group id, a role the resolver
 * does not know) is added to `problems` under its rule, every one of them.
 */
export function compileRules(rules: readonly GateRule[], core: GuardCore, problems: ProblemList): CompiledRule[] {
  const compiled: CompiledRule[] = []
  rules.forEach((rule, index) => {
    let decision: CompiledRule['decision'] = 'anyone'
    if (rule.allow !== 'anyone') {
      const before = problems.items.length
      requirementProblems(rule, index, core, problems)
      const requirement = problems.items.length === before ? requirementOf(rule) : undefined
      if (requirement === undefined) return
      try {
        decision = core.prepare(requirement)
      } catch (error) {
        if (!(error instanceof VootError)) throw error
        problems.add(['rules', index, 'require'], error.message)
        return
      }
    }
    const path = rule.path === undefined ? undefined : globToRegExp(rule.path)
    const bind = path !== undefined && pathParams(rule.path).length > 0 ? createParamBinder(path, rule.params) : undefined
    compiled.push({
      id: rule.id ?? String(index),
      host: rule.host,
      hostSuffix: rule.host?.startsWith('*.') === true ? rule.host.slice(1) : undefined,
      path,
      glob: rule.path,
      methods: rule.methods === undefined ? undefined : new Set(rule.methods),
      decision,
      bind,
      requirementAt: bind === undefined || !hasParams(rule) ? undefined : requirementAtOf(rule, bind),
    })
  })
  return compiled
}

/** Whether a rule (or a service's route) with a host names `host` (a wildcard one: any subdomain, one or more labels). */
export function hostMatches(rule: Pick<CompiledRule, 'host' | 'hostSuffix'>, host: string): boolean {
  const suffix = rule.hostSuffix
  return suffix === undefined ? rule.host === host : host.endsWith(suffix) && host.length > suffix.length
}

/**
 * The first rule matching the request, or `undefined`.
 *
 * @example
 * ```ts
 * matchRule(rules, 'GET', 'wiki.example.org', '/admin/users')
 * ```
 */
export function matchRule(rules: readonly CompiledRule[], method: string, host: string, path: string): CompiledRule | undefined {
  for (const rule of rules) {
    if (rule.host !== undefined && !hostMatches(rule, host)) continue
    if (rule.methods !== undefined && !rule.methods.has(method)) continue
    if (rule.path !== undefined && !rule.path.test(path)) continue
    // A parameter out of its alphabet or its rule's narrowing: the rule does not match.
    if (rule.bind !== undefined && rule.bind(path) === undefined) continue
    return rule
  }
  return undefined
}

/**
 * Whether the gate serves `host` (what `strictHosts` asks): a host a rule names (a
 * wildcard rule's subdomains too) or a `redirectHosts` entry.
 */
export function isKnownHost(rules: readonly CompiledRule[], redirectHosts: readonly string[], host: string): boolean {
  if (redirectHosts.includes(host)) return true
  return rules.some((rule) => rule.host !== undefined && hostMatches(rule, host))
}

/**
 * Whether an absolute `rd` may name `host`: a host a rule names exactly, or a
 * `redirectHosts` entry. A wildcard rule's subdomains are not: any of them (a user's page,
 * a forgotten test host) would turn sign-in into an open redirect; list those in `redirectHosts`.
 */
export function isRedirectHost(rules: readonly CompiledRule[], redirectHosts: readonly string[], host: string): boolean {
  if (redirectHosts.includes(host)) return true
  return rules.some((rule) => rule.host !== undefined && rule.hostSuffix === undefined && rule.host === host)
}
