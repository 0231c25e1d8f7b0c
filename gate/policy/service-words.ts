/**
 * The words of an `other_service` refusal: a request whose credentials are of one group
 * service, for a rule whose groups are on another. Without them the 403 reads like a
 * missing membership, and the user asks for one they may already have, on the other service.
 *
 * @module
 */
import type { Requirement, ServiceResolvers } from '../../src/index.js'
import { requiredText } from '../../src/internal.js'
import type { ServiceRouter } from './service-route.js'

/**
 * The services a requirement has a part on, in the configuration's order: those the core's
 * projection leaves something of it on.
 *
 * @example
 * ```ts
 * servicesOfRequirement(services, rule.decision) // ['surf']
 * ```
 */
export function servicesOfRequirement(services: ServiceResolvers, requirement: Requirement): string[] {
  return services.names.filter((name) => services.project(requirement, name) !== undefined)
}

/** What the words are made of: the services (their projection) and the router (their labels). */
export interface ServiceWords {
  readonly services: ServiceResolvers
  readonly router: ServiceRouter
}

/** The services' labels, as a list a sentence can hold: `Feide`, `Feide or SURFconext`. */
function labelsOf(router: ServiceRouter, names: readonly string[]): string {
  const labels = names.map((name) => router.labelOf(name))
  return labels.length <= 1 ? (labels[0] ?? '') : `${labels.slice(0, -1).join(', ')} or ${labels.at(-1) ?? ''}`
}

/**
 * What a 403 for `other_service` says (with `denials: named`): the requirement, the
 * service it is on, and the service the request came with, in their labels.
 *
 * @example
 * ```ts
 * otherServiceText({ services, router }, rule.decision, 'feide', 'session')
 * // 'This resource requires the role admin or higher in the group urn:collab:org:x, on SURFconext; you signed in with Feide'
 * ```
 */
export function otherServiceText(
  { services, router }: ServiceWords,
  requirement: Requirement,
  came: string,
  credentials: 'session' | 'bearer',
): string {
  const with_ = credentials === 'session' ? `you signed in with ${router.labelOf(came)}` : `the access token is ${router.labelOf(came)}'s`
  return `${requiredText(requirement)}, on ${labelsOf(router, servicesOfRequirement(services, requirement))}; ${with_}`
}

/**
 * Why whoami's rule is not passed when it is `other_service`, in words: where its groups
 * are, and where the user came from.
 *
 * @example
 * ```ts
 * otherServiceReason(services, router, rule.decision, 'feide') // 'its groups are on SURFconext; you came with Feide'
 * ```
 */
export function otherServiceReason(services: ServiceResolvers, router: ServiceRouter, requirement: Requirement, came: string): string {
  return `its groups are on ${labelsOf(router, servicesOfRequirement(services, requirement))}; you came with ${router.labelOf(came)}`
}
