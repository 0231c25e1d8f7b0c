/**
 * Rules: compiled once (their requirements validated by the guard core), then matched in
 * order against a request's normalised method, host and path. The first match wins; none
 * means no access.
 *
 * @module
 */
import { allOf, anyOf, authenticated, group, groupOfType, type Requirement, VootError } from '../../src/index.js'
import { type GuardCore } from '../../src/adapter-kit.js'
import { nearestKey, nearestPrefixService, servicesByPrefix } from '../../src/internal.js'
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

/** One group of a rule as written: its id, the service it names (its own, else the rule's), and where each is. */
interface WrittenGroup {
  readonly kind: 'group' | 'groupOfType'
  readonly id: string
  readonly service: string | undefined
  /** Where the id is written. */
  readonly at: ConfigPath
  /** Where the service it goes by is written: the entry's own `service`, else the rule's; `undefined` when none. */
  readonly serviceAt: ConfigPath | undefined
  /** In an `anyOf` or `allOf` (the advice's syntax differs). */
  readonly inList: boolean
}

type ConfigPath = (string | number)[]

/** What a rule's requirement is checked against: the guard core, the problem list, and `groupPrefixes`. */
interface RuleContext {
  readonly core: GuardCore
  readonly problems: ProblemList
  readonly prefixes: Readonly<Record<string, string>>
}

/** The groups a rule's requirement names, as written; `undefined` for a shape the reading refused already. */
function writtenGroups(want: Record<string, unknown>, path: ConfigPath): WrittenGroup[] | undefined {
  const scope = scopeOf(want)
  const scopeAt = scope === undefined ? undefined : [...path, 'service']
  const { group: id, groupOfType: type } = want
  if (typeof id === 'string')
    return [{ kind: 'group', id, service: scope?.service, at: [...path, 'group'], serviceAt: scopeAt, inList: false }]
  if (typeof type === 'string') {
    return [{ kind: 'groupOfType', id: type, service: scope?.service, at: [...path, 'groupOfType'], serviceAt: scopeAt, inList: false }]
  }
  const kind = want['anyOf'] !== undefined ? 'anyOf' : 'allOf'
  const items = want[kind]
  if (!Array.isArray(items) || items.length === 0) return undefined
  const groups: WrittenGroup[] = []
  for (const [index, item] of (items as unknown[]).entries()) {
    const at = [...path, kind, index]
    const entry = typeof item === 'object' && item !== null ? (item as Record<string, unknown>) : undefined
    if (typeof item === 'string') groups.push({ kind: 'group', id: item, service: scope?.service, at, serviceAt: scopeAt, inList: true })
    else if (typeof entry?.['group'] === 'string' && typeof entry['service'] === 'string') {
      const { group: id, service } = entry as { group: string; service: string }
      groups.push({ kind: 'group', id, service, at: [...at, 'group'], serviceAt: [...at, 'service'], inList: true })
    } else return undefined
  }
  return groups
}

/** What a rule requires, in the words of the core's builders; `undefined` for a shape the reading refused already. */
function requirementOf(rule: GateRule): Requirement | undefined {
  if (rule.allow === 'signed-in') return authenticated()
  const want = rule.require as unknown
  if (typeof want !== 'object' || want === null) return undefined
  const written = writtenGroups(want as Record<string, unknown>, [])
  if (written === undefined) return undefined
  const role = (want as Record<string, unknown>)['role']
  const roleOf = typeof role === 'string' ? role : undefined
  const parts = written.map((each) => {
    const scope = each.service === undefined ? undefined : { service: each.service }
    return each.kind === 'group' ? group(each.id, roleOf, scope) : groupOfType(each.id, roleOf, scope)
  })
  if (!written[0]?.inList) return parts[0]
  return 'anyOf' in (want as Record<string, unknown>) ? anyOf(...parts) : allOf(...parts)
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
 * The service a group belongs to by `groupPrefixes` alone, asked of the core's own
 * projection (a group on no service or on two is `undefined`).
 */
export function serviceByPrefix(core: GuardCore, kind: 'group' | 'groupOfType', id: string): string | undefined {
  const { services } = core
  if (services === undefined) return undefined
  const leaf = kind === 'group' ? group(id) : groupOfType(id)
  try {
    return services.names.find((name) => services.project(leaf, name) !== undefined)
  } catch {
    return undefined
  }
}

/**
 * The advice for a group id no `groupPrefixes` entry covers, in the configuration's own
 * syntax where it is written (a rule's `group`, an entry of its list, a fixture), naming the
 * service whose prefix is nearest, else listing them.
 */
export function serviceAdvice(
  id: string,
  where: 'group' | 'groupOfType' | 'list' | 'fixture',
  prefixes: Readonly<Record<string, string>>,
  names: readonly string[],
): string {
  const nearest = nearestPrefixService(id, Object.entries(prefixes))
  const service = nearest ?? `<one of ${names.join(', ')}>`
  const quoted = JSON.stringify(id)
  const written = {
    group: `require: { group: ${quoted}, service: ${service} }`,
    groupOfType: `require: { groupOfType: ${quoted}, service: ${service} }`,
    list: `- { group: ${quoted}, service: ${service} }`,
    fixture: `${quoted}: { role: member, service: ${service} }`,
  }[where]
  return `no groupPrefixes entry assigns it a service: name its service, as in ${written}, or add its prefix to "groupPrefixes"`
}

/**
 * Every problem of a rule's requirement, each at its own key: its `service`, each group id
 * on its own (so that two bad ids of an `anyOf` are two problems), each service named (one
 * the gate has, and not one that contradicts the group's prefix), then the role against the
 * resolver's roles (with several services, those of each group's service), with the
 * nearest other role as a suggestion.
 */
function requirementProblems(rule: GateRule, index: number, gate: RuleContext): void {
  const { core, problems, prefixes } = gate
  const path = ['rules', index, 'require']
  const want = rule.require as Record<string, unknown> | undefined
  if (typeof want !== 'object' || want === null) return
  const written = writtenGroups(want, path)
  if (written === undefined) return
  const { services } = core
  const named = new Set<string>()
  const unread = problems.items.length
  for (const each of written) {
    if (each.service === undefined || each.serviceAt === undefined || named.has(each.serviceAt.join('.'))) continue
    named.add(each.serviceAt.join('.'))
    if (services === undefined) {
      problems.add(each.serviceAt, 'names a group service, but the gate has one "service": give "services" to name several')
    } else if (!services.names.includes(each.service)) {
      problems.add(each.serviceAt, `must name one of the services (${services.names.join(', ')})`, nearestKey(each.service, services.names))
    }
  }
  // A service that is not the gate's: the groups cannot be checked against it.
  if (problems.items.length > unread) return
  const before = problems.items.length
  for (const each of written) {
    const scope = each.service === undefined ? undefined : { service: each.service }
    try {
      core.prepare(each.kind === 'group' ? group(each.id, undefined, scope) : groupOfType(each.id, undefined, scope))
    } catch (error) {
      if (!(error instanceof VootError)) throw error
      const unassigned = services !== undefined && scope === undefined && servicesByPrefix(each.id, Object.entries(prefixes)).length === 0
      const where = each.inList ? 'list' : each.kind
      const what = `${each.kind === 'group' ? 'group' : 'group type'} ${JSON.stringify(each.id)}`
      problems.add(each.at, unassigned ? `${what}: ${serviceAdvice(each.id, where, prefixes, services.names)}` : error.message)
      continue
    }
    // A service named for a group whose prefix says another: the group would silently move there.
    const byPrefix = scope === undefined ? undefined : serviceByPrefix(core, each.kind, each.id)
    if (byPrefix !== undefined && each.service !== undefined && byPrefix !== each.service && each.serviceAt !== undefined) {
      const own = each.serviceAt.at(-1) === 'service' && typeof each.serviceAt.at(-2) === 'number'
      const instead = own
        ? `write the id alone, as in - ${JSON.stringify(each.id)}`
        : each.inList
          ? `name the service of each group of the list that needs one, as in - { group: "...", service: ${each.service} }, and leave the others to "groupPrefixes"`
          : 'leave it out: "groupPrefixes" says the service'
      problems.add(
        each.serviceAt,
        `puts ${JSON.stringify(each.id)} on ${each.service}, but "groupPrefixes" puts it on ${byPrefix}: ${instead}`,
      )
    }
  }
  const role = want['role']
  if (typeof role !== 'string' || problems.items.length > before) return
  if (services === undefined) {
    // The role on its own, on a requirement whose other parts cannot fail.
    const suggest = nearestKey(
      role,
      core.resolver.roles.filter((known) => known !== role),
    )
    try {
      core.prepare(groupOfType('voot-guard:role-check', role))
    } catch (error) {
      if (!(error instanceof VootError)) throw error
      problems.add([...path, 'role'], error.message, suggest)
    }
    return
  }
  // Each service has its roles: the role is checked against those of each group's service.
  const told = new Set<string>()
  for (const each of written) {
    const service = each.service ?? serviceByPrefix(core, each.kind, each.id)
    if (service === undefined || told.has(service)) continue
    const roles = services.resolver(service).roles
    if (roles.includes(role)) continue
    told.add(service)
    problems.add(
      [...path, 'role'],
      `unknown role ${JSON.stringify(role)} for the ${each.kind === 'group' ? 'group' : 'group type'} ${JSON.stringify(each.id)} on the service ${service}: its roles are ${roles.join(' < ')}`,
      nearestKey(
        role,
        roles.filter((known) => known !== role),
      ),
    )
  }
}

/**
 * Compiles rules; a requirement the core refuses (an invalid group id, a role the resolver
 * does not know) is added to `problems` under its rule, every one of them.
 */
export function compileRules(
  rules: readonly GateRule[],
  core: GuardCore,
  problems: ProblemList,
  prefixes: Readonly<Record<string, string>> = {},
): CompiledRule[] {
  const compiled: CompiledRule[] = []
  rules.forEach((rule, index) => {
    let decision: CompiledRule['decision'] = 'anyone'
    if (rule.allow !== 'anyone') {
      const before = problems.items.length
      requirementProblems(rule, index, { core, problems, prefixes })
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
 * What `rule` requires of a request to `path` (a normalised path, as the check reads it):
 * for a rule with parameters, its ids filled in with the path's values
 * (`fc:fs:fs:emne:example.org:INF1000:1`), never the template; `undefined` when the rule
 * does not bind the path (a value out of its alphabet or narrowing) or the filled-in id is
 * one the core refuses (too long): the check answers those without the requirement. What
 * people are shown (whoami, the policy tests' tree) comes from here, so that it is what the
 * check decided on.
 *
 * @example
 * ```ts
 * requirementFor(rule, '/courses/INF1000/notes') // group('fc:fs:fs:emne:example.org:INF1000:1', 'admin')
 * ```
 */
export function requirementFor(rule: CompiledRule, path: string): CompiledRule['decision'] | undefined {
  const { requirementAt, bind } = rule
  if (requirementAt === undefined) return rule.decision
  if (bind?.(path) === undefined) return undefined
  try {
    return requirementAt(path)
  } catch (error) {
    if (error instanceof VootError) return undefined
    throw error
  }
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
