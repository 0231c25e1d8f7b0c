/**
 * Rules: compiled once (their requirements validated by the guard core), then matched in
 * order against a request's normalised method, host and path. The first match wins; none
 * means no access.
 *
 * @module
 */
import { allOf, anyOf, authenticated, group, groupOfType, type Requirement, VootError } from '../src/index.js'
import type { GuardCore } from '../src/adapter-kit.js'
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

function requirementOf(rule: GateRule): Requirement {
  if (rule.allow === 'signed-in') return authenticated()
  const want = rule.require as Record<string, unknown>
  const role = want['role'] as string | undefined
  if (typeof want['group'] === 'string') return group(want['group'], role)
  if (typeof want['groupOfType'] === 'string') return groupOfType(want['groupOfType'], role)
  const ids = (want['anyOf'] ?? want['allOf']) as readonly string[]
  const parts = ids.map((id) => group(id, role))
  return want['anyOf'] !== undefined ? anyOf(...parts) : allOf(...parts)
}

/**
 * Compiles rules; a requirement the core refuses (an invalid group id, a role the resolver
 * does not know) is added to `problems` under its rule.
 */
export function compileRules(rules: readonly GateRule[], core: GuardCore, problems: ProblemList): CompiledRule[] {
  const compiled: CompiledRule[] = []
  rules.forEach((rule, index) => {
    let decision: CompiledRule['decision'] = 'anyone'
    if (rule.allow !== 'anyone') {
      try {
        decision = core.prepare(requirementOf(rule))
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
      methods: rule.methods === undefined ? undefined : new Set(rule.methods),
      decision,
    })
  })
  return compiled
}

/** Whether a rule with a host names `host` (a wildcard one: any subdomain, one or more labels). */
function hostMatches(rule: CompiledRule, host: string): boolean {
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
