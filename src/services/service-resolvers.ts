/**
 * Several group services in one application: one ordinary {@link MembershipResolver} per
 * named service (its own `baseUrl`, roles, timeouts, limits, breaker, dialect and cache, so
 * that caches, breakers and outages are per service by construction), the map from group
 * ids to services, and the map from token issuers to services.
 *
 * A token goes only to the service chosen for it, never to a second one to see whether it
 * works: that would hand one provider's token to another, who could then replay it.
 *
 * @module
 */
import { describeRequirement, isRequirement, SERVICE_NAME, type Requirement } from '../decision/requirements.js'
import type { Decision } from '../decision/types.js'
import { InvalidArgumentError, InvalidOptionError } from '../errors.js'
import { rejectUnknownKeys } from '../option-checks.js'
import { sharedCacheOption } from '../resolver/options.js'
import type { SharedCache } from '../shared-cache.js'
import {
  createServiceResolver,
  type MembershipResolver,
  type MembershipResolverOptions,
  type ResolveOptions,
  type ResolverHealth,
} from '../resolver/index.js'
import { createTelemetry } from '../resolver/telemetry.js'
import { nearestPrefixService, projectRequirement, servicesByPrefix } from './projection.js'
import { serviceTier } from './service-tier.js'
import { issuerOf } from './token-issuer.js'

/**
 * Options of {@link createServiceResolvers}.
 *
 * @example
 * ```ts
 * const options: ServiceResolversOptions = {
 *   services: { feide: { baseUrl: 'https://groups-api.dataporten.no/groups' }, surf: { baseUrl: 'https://voot.surfconext.nl' } },
 *   groupPrefixes: { 'fc:': 'feide', 'urn:collab:': 'surf' },
 *   issuers: { 'https://auth.dataporten.no': 'feide' },
 * }
 * ```
 */
export interface ServiceResolversOptions {
  /** The services by name: each a resolver's options, or a resolver of the application's. */
  readonly services: Readonly<Record<string, MembershipResolverOptions | MembershipResolver>>
  /**
   * Group id (and group type) prefixes and the service they belong to, such as
   * `{ 'fc:': 'feide' }`. A requirement that does not name its service must match
   * prefixes of exactly one service, or it is refused when it is declared.
   */
  readonly groupPrefixes?: Readonly<Record<string, string>>
  /**
   * JWT access token issuers (`iss`) and the service their tokens go to. Read without
   * verification, only to choose: the chosen service judges the token.
   */
  readonly issuers?: Readonly<Record<string, string>>
  /**
   * The shared cache tier (L2) of every service whose options do not give their own
   * `sharedCache`, such as `createRedisCache()` from `voot-guard/redis`. However it is
   * given (here once, or in each service's options), each service sees it under token ids
   * of its own: two services never read each other's answers. Closed by
   * {@link ServiceResolvers.close}. Not for a service given as a resolver (its tier is its own).
   */
  readonly sharedCache?: SharedCache
}

/**
 * Several named group services, each with its own resolver. Guards take it as their
 * `services` option; the token of each request goes to one service, chosen for it.
 *
 * @example
 * ```ts
 * const services = createServiceResolvers({ services: { feide: { baseUrl }, surf: { baseUrl: surfUrl } }, groupPrefixes: { 'fc:': 'feide', 'urn:collab:': 'surf' } })
 * const decision = await services.check(token, anyOf(group('fc:org:uio.no', 'admin'), group('urn:collab:org:uva.nl', 'admin')), { service: 'surf' })
 * ```
 */
export interface ServiceResolvers {
  /** The services' names, in the order of the options. */
  readonly names: readonly string[]
  /** The resolver of one service; throws `InvalidArgumentError` for an unknown name. */
  resolver(service: string): MembershipResolver
  /** The service the `issuers` option assigns to a JWT access token, or `undefined`. */
  serviceOfToken(token: string): string | undefined
  /**
   * Validates a requirement for every service once, at declaration: each group names a
   * known service or matches prefixes of exactly one, and each service's resolver accepts
   * its part (its roles). Returns the requirement.
   */
  prepare(requirement: Requirement): Requirement
  /** `requirement` as `service` can decide it, or `undefined` when none of it is on `service`. */
  project(requirement: Requirement, service: string): Requirement | undefined
  /**
   * Decides with `service`'s resolver alone: its part of the requirement, synchronously on
   * fresh cached answers. A requirement with no part on `service` is a denial,
   * `other_service`, without any call.
   */
  checkNow(token: string, requirement: Requirement, service: string, options?: ResolveOptions): Decision | Promise<Decision>
  /** {@link ServiceResolvers.checkNow}, always as a promise. */
  check(token: string, requirement: Requirement, options: ResolveOptions & { readonly service: string }): Promise<Decision>
  /** Drops one token's cached answers (in every service; no call), or every answer. */
  invalidate(token?: string): Promise<void>
  /**
   * Each service's {@link MembershipResolver.health}, by name: one service `down` (its
   * circuit open) leaves the others serving their users.
   */
  health(): Readonly<Record<string, ResolverHealth>>
  /** Verifies every service (`resolver.verify()`), rejecting with the first failure. */
  verify(options?: { signal?: AbortSignal }): Promise<void>
  /** Closes every resolver this created, then the shared tiers they used (each once). */
  close(): Promise<void>
}

const OPTION_KEYS = ['services', 'groupPrefixes', 'issuers', 'sharedCache']
const MAX_SERVICES = 32
const NOTHING = (): void => {}

function isResolver(value: object): value is MembershipResolver {
  return (
    typeof (value as { check?: unknown }).check === 'function' &&
    typeof (value as { assertRequirement?: unknown }).assertRequirement === 'function'
  )
}

/** A `{ key: serviceName }` option, checked: every value names a configured service. */
function serviceMap(name: string, value: unknown, known: ReadonlyMap<string, unknown>): [string, string][] {
  if (value === undefined) return []
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new InvalidOptionError(name, 'must be an object of { key: serviceName }')
  return Object.entries(value).map(([key, service]) => {
    if (key.length === 0) throw new InvalidOptionError(name, 'keys must be non-empty')
    if (typeof service !== 'string' || !known.has(service)) {
      throw new InvalidOptionError(`${name}.${key}`, `must name one of the services (${[...known.keys()].join(', ')})`)
    }
    return [key, service]
  })
}

/**
 * Creates the {@link ServiceResolvers} of several group services. Options are validated
 * here, each service's with its name (`services.feide.timeout`).
 *
 * @example
 * ```ts
 * const services = createServiceResolvers({
 *   services: { feide: { baseUrl: 'https://groups-api.dataporten.no/groups' }, surf: { baseUrl: 'https://voot.surfconext.nl' } },
 *   groupPrefixes: { 'fc:': 'feide', 'urn:collab:': 'surf' },
 * })
 * ```
 */
export function createServiceResolvers(options: ServiceResolversOptions): ServiceResolvers {
  if (typeof options !== 'object' || options === null)
    throw new InvalidOptionError('(options)', 'createServiceResolvers() needs an options object')
  rejectUnknownKeys('', options, OPTION_KEYS)
  const given: unknown = options.services
  if (typeof given !== 'object' || given === null || Array.isArray(given))
    throw new InvalidOptionError('services', 'must be an object of { name: resolver options }')
  const entries = Object.entries(given as Record<string, unknown>)
  if (entries.length === 0 || entries.length > MAX_SERVICES)
    throw new InvalidOptionError('services', `must name from 1 to ${MAX_SERVICES} services`)
  const resolvers = new Map<string, MembershipResolver>()
  const created: MembershipResolver[] = []
  const everyService = sharedCacheOption('sharedCache', options.sharedCache)
  // The tiers the services' views stand on, each closed once, when every service is.
  const tiers = new Set<SharedCache>()
  for (const [name, value] of entries) {
    if (!SERVICE_NAME.test(name))
      throw new InvalidOptionError(`services.${name}`, "a service name is a letter then letters, digits, '-' or '_' (at most 64)")
    if (typeof value !== 'object' || value === null)
      throw new InvalidOptionError(`services.${name}`, 'must be resolver options such as { baseUrl } or a resolver')
    if (isResolver(value)) {
      resolvers.set(name, value)
      continue
    }
    let resolver: MembershipResolver
    try {
      const tier = sharedCacheOption('sharedCache', (value as MembershipResolverOptions).sharedCache) ?? everyService
      if (tier !== undefined) tiers.add(tier)
      resolver = createServiceResolver(tier === undefined ? value : { ...value, sharedCache: serviceTier(tier, name) }, name)
    } catch (error) {
      // The service's name in front of the option it got wrong.
      if (error instanceof InvalidOptionError)
        throw new InvalidOptionError(`services.${name}.${error.option}`, error.message.slice(`options.${error.option}: `.length))
      throw error
    }
    resolvers.set(name, resolver)
    created.push(resolver)
  }
  const prefixes = serviceMap('groupPrefixes', options.groupPrefixes, resolvers)
  const issuers = new Map(serviceMap('issuers', options.issuers, resolvers))
  const names = Object.freeze([...resolvers.keys()])

  function resolver(service: string): MembershipResolver {
    const found = resolvers.get(service)
    if (found === undefined)
      throw new InvalidArgumentError(`no group service is called ${JSON.stringify(service)} (there are: ${names.join(', ')})`)
    return found
  }

  /** The service of a group or group-type leaf: named, or from the prefixes of exactly one service. */
  function serviceOf(leaf: Requirement & { kind: 'group' | 'groupOfType' }): string {
    const id = leaf.kind === 'group' ? leaf.groupId : leaf.groupType
    if (leaf.service !== undefined) {
      resolver(leaf.service)
      return leaf.service
    }
    const matched = servicesByPrefix(id, prefixes)
    if (matched.length === 1) return matched[0] as string
    const what = leaf.kind === 'group' ? `group ${JSON.stringify(id)}` : `group type ${JSON.stringify(id)}`
    if (matched.length === 0) {
      // The service its nearest prefix names, when one does; else every service: never simply the first.
      const nearest = nearestPrefixService(id, prefixes)
      const advice =
        nearest === undefined
          ? `name its service, one of ${names.map((name) => `'${name}'`).join(', ')}: { service: '...' }`
          : `name its service, such as { service: '${nearest}' }`
      throw new InvalidArgumentError(`${what}: no groupPrefixes entry assigns it a service; ${advice}`)
    }
    throw new InvalidArgumentError(`${what} is ambiguous: groupPrefixes assign it to ${matched.join(' and ')}; name its service`)
  }

  // Each requirement's projections, made once at declaration (or at its first check).
  const projections = new WeakMap<Requirement, ReadonlyMap<string, Requirement | undefined>>()

  function projectionsOf(requirement: Requirement): ReadonlyMap<string, Requirement | undefined> {
    let found = projections.get(requirement)
    if (found !== undefined) return found
    if (!isRequirement(requirement)) throw new InvalidArgumentError('not a requirement built by voot-guard (group, anyOf, allOf, ...)')
    const made = new Map<string, Requirement | undefined>()
    for (const name of names) {
      const projected = projectRequirement(requirement, name, serviceOf)
      if (projected !== undefined) resolver(name).assertRequirement(projected)
      made.set(name, projected)
    }
    found = made
    projections.set(requirement, found)
    return found
  }

  const denials = new WeakMap<Requirement, Decision>()
  // The `other_service` denials are the services' own decisions, not a resolver's: reported
  // on the tracing channels (and so in `voot-guard/otel`) with the service's name.
  const reporters = new Map(names.map((name) => [name, createTelemetry(undefined, name)]))

  /** The denial of a requirement with no part on the token's service. */
  function otherService(requirement: Requirement): Decision {
    let decision = denials.get(requirement)
    if (decision === undefined) {
      decision = Object.freeze({ allowed: false, reason: 'other_service', requirement: describeRequirement(requirement) })
      denials.set(requirement, decision)
    }
    return decision
  }

  function checkNow(
    token: string,
    requirement: Requirement,
    service: string,
    resolveOptions?: ResolveOptions,
  ): Decision | Promise<Decision> {
    const chosen = resolver(service)
    const projected = projectionsOf(requirement).get(service)
    if (projected === undefined) {
      const decision = otherService(requirement)
      // Counted as every decision is, under the service the token was for (no lookup: no tier but memory).
      reporters.get(service)?.traceWarmDecision(requirement, decision, NOTHING)
      return decision
    }
    // A resolver of someone else's may lack `checkNow`.
    return chosen.checkNow === undefined
      ? Promise.resolve(chosen.check(token, projected, resolveOptions))
      : chosen.checkNow(token, projected, resolveOptions)
  }

  return {
    names,
    resolver,
    serviceOfToken(token) {
      if (issuers.size === 0) return undefined
      const iss = issuerOf(token)
      return iss === undefined ? undefined : issuers.get(iss)
    },
    prepare(requirement) {
      projectionsOf(requirement)
      return requirement
    },
    project: (requirement, service) => {
      resolver(service)
      return projectionsOf(requirement).get(service)
    },
    checkNow,
    check: async (token, requirement, { service, ...resolveOptions }) => checkNow(token, requirement, service, resolveOptions),
    async invalidate(token) {
      await Promise.all([...resolvers.values()].map((each) => each.invalidate(token)))
    },
    health: () => Object.freeze(Object.fromEntries(names.map((name) => [name, resolver(name).health()]))),
    async verify(verifyOptions) {
      await Promise.all([...resolvers.values()].map((each) => each.verify(verifyOptions)))
    },
    async close() {
      await Promise.all(created.map((each) => each.close()))
      await Promise.all([...tiers].map((tier) => tier.close()))
    },
  }
}
