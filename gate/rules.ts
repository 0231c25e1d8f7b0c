/**
 * Rules: compiled once (their requirements validated by the guard core), then matched in
 * order against a request's normalised method, host and path. The first match wins; none
 * means no access.
 *
 * @module
 */
import { allOf, anyOf, authenticated, group, groupOfType, type Requirement, VootError } from '../src/index.js'
import { nearestKey, type GuardCore } from '../src/adapter-kit.js'
import type { ProblemList } from './config-problem.js'
import type { CompiledRule, GateRule } from './config-types.js'

/** A regular expression for a path glob: `*` one segment, `**` any number of them. */
export function globToRegExp(glob: string): RegExp {
  if (glob === '/**') return /^\/.*$/s
  const segments = glob.split('/').slice(1)
  let source = ''
  for (const segment of segments) {
    if (segment === '**') source += '(?:/[^/]*)*'
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

/** What a rule requires, in the words of the core's builders; `undefined` for a shape the reading refused already. */
function requirementOf(rule: GateRule): Requirement | undefined {
  if (rule.allow === 'signed-in') return authenticated()
  const want = rule.require as unknown
  if (typeof want !== 'object' || want === null) return undefined
  const { group: id, groupOfType: type, anyOf: any, allOf: all, role } = want as Record<string, unknown>
  const roleOf = typeof role === 'string' ? role : undefined
  if (typeof id === 'string') return group(id, roleOf)
  if (typeof type === 'string') return groupOfType(type, roleOf)
  const ids = any ?? all
  if (!Array.isArray(ids) || ids.length === 0 || !ids.every((item) => typeof item === 'string')) return undefined
  const parts = ids.map((each) => group(each, roleOf))
  return any !== undefined ? anyOf(...parts) : allOf(...parts)
}

/**
 * Every problem of a rule's requirement, each at its own key: each group id on its own (so
 * that two bad ids of an `anyOf` are two problems), then the role against the resolver's
 * roles, with the nearest one as a suggestion.
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
  if (typeof want['group'] === 'string') attempt([...path, 'group'], () => group(want['group'] as string))
  for (const kind of ['anyOf', 'allOf']) {
    const ids = want[kind]
    if (Array.isArray(ids)) ids.forEach((id, k) => typeof id === 'string' && attempt([...path, kind, k], () => group(id)))
  }
  if (typeof want['groupOfType'] === 'string') attempt([...path, 'groupOfType'], () => groupOfType(want['groupOfType'] as string))
  const role = want['role']
  if (typeof role === 'string') {
    // The role on its own, on a requirement whose other parts cannot fail.
    attempt([...path, 'role'], () => groupOfType('voot-guard:role-check', role), nearestKey(role, core.resolver.roles))
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
    compiled.push({
      id: rule.id ?? String(index),
      host: rule.host,
      hostSuffix: rule.host?.startsWith('*.') === true ? rule.host.slice(1) : undefined,
      path: rule.path === undefined ? undefined : globToRegExp(rule.path),
      glob: rule.path,
      methods: rule.methods === undefined ? undefined : new Set(rule.methods),
      decision,
    })
  })
  return compiled
}

/** Whether a rule with a host names `host` (a wildcard one: any subdomain, one or more labels). */
export function hostMatches(rule: CompiledRule, host: string): boolean {
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
