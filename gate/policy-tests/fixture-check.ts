/**
 * The policy tests' fixtures checked against the gate's resolver, as its rules are: each
 * membership's group id, service and role.
 *
 * @module
 */
import type { GuardCore } from '../../src/adapter-kit.js'
import { nearestKey, servicesByPrefix } from '../../src/internal.js'
import { group, VootError } from '../../src/index.js'
import type { ProblemList } from '../config/problem.js'
import type { GateSettings } from '../config/types.js'
import { rolesOf, serviceAdvice, serviceByPrefix } from '../policy/rules.js'

/**
 * Checks the fixtures' group ids, services and roles against the resolver, as a rule's are.
 * A role the group service does not list is accepted (the service may send it, as
 * SURFconext sends `prospect` for an invitee): the resolver judges it as it judges any role
 * it does not know, a membership that satisfies nothing. Only a near miss of a known role is
 * refused, as the typo it most likely is.
 *
 * @example
 * ```ts
 * const problems = new ProblemList()
 * checkFixtures(settings, core, problems)
 * ```
 */
export function checkFixtures(settings: GateSettings, core: GuardCore, problems: ProblemList): void {
  const { services } = core
  const prefixes = settings.services?.groupPrefixes ?? {}
  for (const memberships of settings.policy.fixtures.values()) {
    for (const membership of memberships) {
      const { groupId, service, path } = membership
      if (service !== undefined && services === undefined) {
        problems.add([...path, 'service'], 'names a group service, but the gate has one "service"')
        continue
      }
      if (service !== undefined && services !== undefined && !services.names.includes(service)) {
        problems.add(
          [...path, 'service'],
          `must name one of the services (${services.names.join(', ')})`,
          nearestKey(service, services.names),
        )
        continue
      }
      try {
        core.prepare(group(groupId, undefined, service === undefined ? undefined : { service }))
      } catch (error) {
        if (!(error instanceof VootError)) throw error
        const unassigned =
          services !== undefined && service === undefined && servicesByPrefix(groupId, Object.entries(prefixes)).length === 0
        problems.add(path, unassigned ? serviceAdvice(groupId, 'fixture', prefixes, services.names) : error.message)
        continue
      }
      const byPrefix = serviceByPrefix(core, 'group', groupId)
      if (service !== undefined && byPrefix !== undefined && byPrefix !== service) {
        problems.add(
          [...path, 'service'],
          `puts ${JSON.stringify(groupId)} on ${service}, but "groupPrefixes" puts it on ${byPrefix}: leave it out`,
        )
        continue
      }
      const on = service ?? byPrefix
      const roles = services === undefined ? core.resolver.roles : on === undefined ? rolesOf(core) : services.resolver(on).roles
      if (membership.role === '' || roles.includes(membership.role)) continue
      const near = nearestKey(
        membership.role,
        roles.filter((role) => role !== membership.role),
      )
      if (near === undefined) continue
      const where = on === undefined ? "the resolver's roles are" : `the roles of the service ${on} are`
      problems.add(
        path,
        `unknown role ${JSON.stringify(membership.role)}: ${where} ${roles.join(' < ')} (a role the group service sends that is not among them satisfies no rule, as "prospect" does; this one looks like a typo)`,
        near,
      )
    }
  }
}
