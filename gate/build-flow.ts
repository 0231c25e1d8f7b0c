/**
 * The gate's check flow made from its group service sections: one resolver from `service`,
 * or one per service of `services` behind `createServiceResolvers`. Every option a factory
 * refuses is reported at its own path of the configuration, all in one run.
 *
 * @module
 */
import type { GuardCore } from '../src/adapter-kit.js'
import { createMembershipResolver, createServiceResolvers, InvalidOptionError, type ResolverHealth, VootError } from '../src/index.js'
import { type SharedCache } from '../src/adapter-kit.js'
import { createCheckFlow, type CheckFlow } from './front/check.js'
import type { GateConfigPath, ProblemList } from './config/problem.js'
import type { GateSettings } from './config/types.js'
import { createServiceRouter, type ServiceRouter } from './policy/service-route.js'

type Options = Readonly<Record<string, unknown>>

/** The realm of the gate's 401 challenges. */
const REALM = 'voot-gate'

/**
 * Adds the error of a factory that refused an option to `problems`, under `section` (the
 * path of the options in the configuration); returns the option's path within them.
 */
export function refused(problems: ProblemList, section: GateConfigPath, error: unknown): string[] {
  if (error instanceof InvalidOptionError) {
    const option = error.option.replace(/^\(options\)$/, '')
    const path = option === '' ? [...section] : [...section, ...option.split('.')]
    // The reading may have said it already (a missing baseUrl): once is enough.
    if (!problems.covers(path)) problems.add(path, error.message.replace(/^options\.[^:]*: /, ''))
    return path.slice(section.length).map(String)
  }
  if (error instanceof VootError) {
    if (!problems.covers(section)) problems.add(section, error.message)
    return []
  }
  throw error
}

/** Where a refused option stands in for itself so that checking goes on: never served (the configuration is refused). */
const STAND_IN: Options = { baseUrl: 'http://127.0.0.1/' }

/** `options` without the option at `path` (or with its stand-in), so that the factory can say what else it refuses. */
function without(options: Options, path: readonly string[]): Record<string, unknown> {
  const [head, ...rest] = path
  if (head === undefined) return { ...options }
  const inner = options[head]
  if (rest.length > 0 && typeof inner === 'object' && inner !== null) {
    return { ...options, [head]: without(inner as Options, rest) }
  }
  if (rest.length === 0 && head in STAND_IN) return { ...options, [head]: STAND_IN[head] }
  return Object.fromEntries(Object.entries(options).filter(([key]) => key !== head))
}

/**
 * What `make` builds from `options`. The factories throw at the first option they refuse:
 * each refused option is recorded, taken out (or stood in for), and the factory asked
 * again, so that one run reports every refused option and the rules are still checked
 * against a resolver (against the default roles when `roles` itself is refused).
 */
function checkedBuild<T>(problems: ProblemList, section: GateConfigPath, options: Options, make: (options: Options) => T): T {
  let current: Record<string, unknown> = { ...options }
  const seen = new Set<string>()
  for (;;) {
    try {
      return make(current)
    } catch (error) {
      const path = refused(problems, section, error)
      const key = path.join('.')
      // An error that names no option, or one already taken out: check on with the stand-ins alone.
      if (path.length === 0 || seen.has(key)) return make(STAND_IN)
      seen.add(key)
      current = without(current, path)
    }
  }
}

/** The gate's check flow, and with several services, their router. */
export interface GateFlow {
  readonly flow: CheckFlow
  readonly router: ServiceRouter | undefined
}

/**
 * Makes the check flow of `settings`; `extra` are resolver options a file cannot hold (the
 * shared tier, the policy tests' `dispatcher`), given to every service's resolver.
 */
export function buildCheckFlow(problems: ProblemList, settings: GateSettings, extra: Options): GateFlow {
  const several = settings.services
  if (several === undefined) {
    const flow = checkedBuild(problems, ['service'], settings.service, (options) => createCheckFlow({ ...options, ...extra, realm: REALM }))
    return { flow, router: undefined }
  }
  // Each service's options checked on their own (every refused one at its path), then the
  // services made from the options that passed: each resolver carries its service's name in
  // its telemetry, and a shared tier is seen by each under token ids of its own.
  const { sharedCache, ...perService } = extra
  const checked: Record<string, Options> = {}
  for (const each of several.list) {
    let passed: Options = {}
    const probe = checkedBuild(problems, ['services', each.name, 'service'], each.service, (options) => {
      const made = createMembershipResolver({ ...options, ...perService })
      passed = options
      return made
    })
    void probe.close()
    checked[each.name] = { ...passed, ...perService }
  }
  const issuers = Object.fromEntries(several.list.flatMap((each) => each.issuers.map((iss) => [iss, each.name])))
  try {
    const services = createServiceResolvers({
      services: checked,
      groupPrefixes: several.groupPrefixes,
      issuers,
      ...(sharedCache === undefined ? {} : { sharedCache: sharedCache as SharedCache }),
    })
    const router = createServiceRouter(several, services)
    return { flow: createCheckFlow({ services, realm: REALM }, router), router }
  } catch (error) {
    // Only after a problem of the reading (a prefix naming a service it refused): said already.
    if (!(error instanceof VootError)) throw error
    if (problems.items.length === 0) problems.add(['services'], error.message)
    return { flow: createCheckFlow({ ...STAND_IN, realm: REALM }), router: undefined }
  }
}

/** The health of a gate's group service, or of each of its services by name. */
export function healthOf(core: GuardCore): ResolverHealth | Readonly<Record<string, ResolverHealth>> {
  return core.services === undefined ? core.resolver.health() : core.services.health()
}

/** Resolves once the group service (every one of them) answered like one; rejects with the first failure. */
export function verifyResolvers(core: GuardCore, signal?: AbortSignal): Promise<void> {
  const options = signal === undefined ? {} : { signal }
  return core.services === undefined ? core.resolver.verify(options) : core.services.verify(options)
}

/** Closes the resolvers of a gate's guard core: its one, or each of its services'. */
export function closeResolvers(core: GuardCore): Promise<void> {
  return core.services === undefined ? core.resolver.close() : core.services.close()
}
