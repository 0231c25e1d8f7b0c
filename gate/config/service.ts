/**
 * Reading the group service sections of a gate configuration: `service` and `oauth` (one
 * group service), or `services` and `groupPrefixes` (several, each with its own `service`
 * and `oauth`, and the hosts, paths and token issuers routed to it).
 *
 * @module
 */
import { formatConfigPath, type GateConfigPath, type ProblemList } from './problem.js'
import {
  belongsUnder,
  HOST_NAME,
  isObject,
  keysOf,
  objectAt,
  pathGlobProblem,
  stringAt,
  stringListAt,
  withDurations,
  type Obj,
} from './values.js'

type Path = GateConfigPath

/** The resolver's options a file can set (code-only ones, such as `dispatcher`, are not among them). */
const SERVICE_KEYS = [
  'baseUrl', 'timeout', 'maxResponseBytes', 'userAgent', 'allowInsecureHttp', 'cache', 'roles', 'maxInflight', 'retries',
  'retryDelay', 'circuitBreaker', 'denials',
] // prettier-ignore
const SERVICE_DURATIONS = ['timeout', 'retryDelay']
const CACHE_KEYS = ['max', 'maxBytes', 'ttl', 'negativeTtl', 'staleIfError']
const CACHE_DURATIONS = ['ttl', 'negativeTtl', 'staleIfError']
const BREAKER_KEYS = ['failureThreshold', 'cooldown']
const OAUTH_KEYS = [
  'issuer', 'authUrl', 'clientId', 'clientSecret', 'scopes', 'redirectUri', 'tokenEndpointAuthMethod', 'discovery',
  'timeout', 'idTokenAlgorithms', 'clockTolerance', 'pushedAuthorizationRequests',
  // The gate's own, not the client's: sessions that end at the provider.
  'backchannelLogout', 'endSession',
] // prettier-ignore
const OAUTH_DURATIONS = ['timeout', 'clockTolerance']
const NAMED_SERVICE_KEYS = ['label', 'service', 'oauth', 'hosts', 'paths', 'issuers']
/** A service's name: it is written in session cookies, the decision log and the metrics. */
const SERVICE_NAME = /^[A-Za-z][A-Za-z0-9_-]{0,31}$/
const MAX_SERVICES = 16
const LABEL_MAX = 60

/**
 * One group service of a gate with several, as read.
 *
 * @example
 * ```ts
 * const feide: GateServiceSettings = { name: 'feide', label: 'Feide', service: { baseUrl }, oauth: undefined, hosts: ['no.example.org'], paths: [], issuers: [] }
 * ```
 */
export interface GateServiceSettings {
  /** The name the configuration gives it (`services.<name>`). */
  readonly name: string
  /** What the sign-in page calls it. Default: the name. */
  readonly label: string
  /** The resolver's options (durations in ms). */
  readonly service: Readonly<Record<string, unknown>>
  /** Its sign-in (`voot-guard/oauth` client options); `undefined`: its users sign in elsewhere (bearer tokens only). */
  readonly oauth: Readonly<Record<string, unknown>> | undefined
  /** Hosts (lower-case, `*.suffix` allowed) whose bearer tokens go to it. */
  readonly hosts: readonly string[]
  /** Path globs whose bearer tokens go to it. */
  readonly paths: readonly string[]
  /** JWT access token issuers (`iss`) whose tokens go to it. */
  readonly issuers: readonly string[]
}

/**
 * The `services` of a gate with several group services, as read.
 *
 * @example
 * ```ts
 * if (settings.services !== undefined) console.log(settings.services.list.map((each) => each.name))
 * ```
 */
export interface GateServicesSettings {
  /** In the order of the configuration (a bearer request's route is the first that matches). */
  readonly list: readonly GateServiceSettings[]
  /** Group id prefixes and the service they belong to. */
  readonly groupPrefixes: Readonly<Record<string, string>>
}

/** Reads a `service` section: the resolver's options, durations in ms. */
export function readServiceSection(problems: ProblemList, path: Path, value: unknown, required = true): Obj {
  const serviceIn = objectAt(problems, path, value, required)
  if (serviceIn === undefined) return {}
  keysOf(problems, path, serviceIn, { keys: SERVICE_KEYS, moved: belongsUnder([...path, 'cache'], CACHE_KEYS) })
  stringAt(problems, [...path, 'baseUrl'], serviceIn['baseUrl'], true)
  const service = withDurations(problems, path, serviceIn, SERVICE_DURATIONS)
  const cache = objectAt(problems, [...path, 'cache'], serviceIn['cache'], false)
  if (cache !== undefined) {
    keysOf(problems, [...path, 'cache'], cache, CACHE_KEYS)
    service['cache'] = withDurations(problems, [...path, 'cache'], cache, CACHE_DURATIONS)
  }
  const breaker = serviceIn['circuitBreaker']
  if (isObject(breaker)) {
    keysOf(problems, [...path, 'circuitBreaker'], breaker, BREAKER_KEYS)
    service['circuitBreaker'] = withDurations(problems, [...path, 'circuitBreaker'], breaker, ['cooldown'])
  }
  return service
}

/** Reads an `oauth` section: `voot-guard/oauth` client options, durations in ms; `undefined` when absent. */
export function readOAuthSection(problems: ProblemList, path: Path, value: unknown): Obj | undefined {
  const oauthIn = objectAt(problems, path, value, false)
  if (oauthIn === undefined) return undefined
  keysOf(problems, path, oauthIn, OAUTH_KEYS)
  stringAt(problems, [...path, 'clientId'], oauthIn['clientId'], true)
  if ((oauthIn['issuer'] === undefined) === (oauthIn['authUrl'] === undefined)) {
    problems.add([...path, 'issuer'], 'give exactly one of "issuer" and "authUrl"')
  }
  for (const flag of ['backchannelLogout', 'endSession']) {
    if (oauthIn[flag] !== undefined && typeof oauthIn[flag] !== 'boolean') problems.add([...path, flag], 'must be true or false')
  }
  // Both need the provider's OpenID Connect metadata: its JWKS, its end_session_endpoint.
  if (oauthIn['backchannelLogout'] === true && oauthIn['issuer'] === undefined) {
    problems.add([...path, 'backchannelLogout'], 'needs "issuer" (an OpenID provider), not "authUrl"')
  }
  return withDurations(problems, path, oauthIn, OAUTH_DURATIONS)
}

function readNamedService(problems: ProblemList, name: string, value: unknown): GateServiceSettings | undefined {
  const path = ['services', name]
  if (!SERVICE_NAME.test(name)) {
    problems.add(path, 'a service name is a letter, then up to 31 letters, digits, "_" or "-"')
  }
  const entry = objectAt(problems, path, value, true)
  if (entry === undefined) return undefined
  // The keys of its `service` and `oauth` written one level too high say where they belong.
  keysOf(problems, path, entry, { keys: NAMED_SERVICE_KEYS, moved: sectionKeysHome(path) })
  const label = stringAt(problems, [...path, 'label'], entry['label']) ?? name
  if (label.length > LABEL_MAX) problems.add([...path, 'label'], `must be at most ${LABEL_MAX} characters`)
  const service = readServiceSection(problems, [...path, 'service'], entry['service'])
  const oauth = readOAuthSection(problems, [...path, 'oauth'], entry['oauth'])
  const hosts = (stringListAt(problems, [...path, 'hosts'], entry['hosts']) ?? []).map((host) => host.toLowerCase())
  hosts.forEach((host, index) => {
    if (!HOST_NAME.test(host)) problems.add([...path, 'hosts', index], 'must be a host name such as "no.example.org" or "*.example.org"')
  })
  const paths = stringListAt(problems, [...path, 'paths'], entry['paths']) ?? []
  paths.forEach((glob, index) => {
    const problem = pathGlobProblem(glob)
    if (problem !== undefined) problems.add([...path, 'paths', index], problem)
  })
  const issuers = stringListAt(problems, [...path, 'issuers'], entry['issuers']) ?? []
  return { name, label, service, oauth, hosts, paths, issuers }
}

/** Where a key of a `service` or an `oauth` section belongs when written beside it (`path` holds both sections). */
function sectionKeysHome(path: Path): Record<string, Path> {
  // `timeout` is in both: the group service's is the likelier one.
  return { ...belongsUnder([...path, 'oauth'], OAUTH_KEYS), ...belongsUnder([...path, 'service'], SERVICE_KEYS) }
}

/**
 * Where a key of the group service's sections written at the top of the configuration
 * belongs: `cache` is `service.cache`, or with several services, under the first service
 * (`services.feide.service.cache`), for the suggestion of an unknown top-level key.
 */
export function serviceKeysHome(services: unknown): Record<string, Path> {
  const first = isObject(services) ? Object.keys(services).find((name) => !NAMED_SERVICE_KEYS.includes(name)) : undefined
  return sectionKeysHome(first === undefined ? [] : ['services', first])
}

/**
 * Reads `services` and `groupPrefixes`; `undefined` when the configuration has no
 * `services` (then `groupPrefixes` is a problem). Every prefix names a service; a host or
 * an issuer routed to two services is a problem (a path may be, the first service wins).
 */
export function readServicesSection(problems: ProblemList, value: unknown, prefixes: unknown): GateServicesSettings | undefined {
  if (value === undefined || value === null) {
    if (prefixes !== undefined) problems.add(['groupPrefixes'], 'needs "services": it says which of them a group id belongs to')
    return undefined
  }
  if (!isObject(value) || Object.keys(value).length === 0) {
    problems.add(['services'], 'must be a mapping of service names to { service, oauth, hosts, paths, issuers }')
    return undefined
  }
  const given = Object.keys(value)
  // A key of a service one level too high (`services.hosts`) is an indentation slip, not a
  // service called "hosts": it belongs to the service written above it.
  const names: string[] = []
  for (const name of given) {
    if (!NAMED_SERVICE_KEYS.includes(name)) {
      names.push(name)
      continue
    }
    const owner = names.at(-1) ?? given.find((each) => !NAMED_SERVICE_KEYS.includes(each))
    problems.add(
      ['services', name],
      `is read as a service called "${name}", but "${name}" is a key of a service: indent it under the service it belongs to`,
      owner === undefined ? undefined : formatConfigPath(['services', owner, name]),
    )
  }
  if (names.length > MAX_SERVICES) problems.add(['services'], `at most ${MAX_SERVICES} services`)
  const list = names.flatMap((name) => readNamedService(problems, name, value[name]) ?? [])
  const groupPrefixes: Record<string, string> = {}
  const prefixesIn = objectAt(problems, ['groupPrefixes'], prefixes, false) ?? {}
  for (const [prefix, service] of Object.entries(prefixesIn)) {
    if (typeof service !== 'string' || !names.includes(service)) {
      problems.add(['groupPrefixes', prefix], `must name one of the services (${names.join(', ')})`)
    } else groupPrefixes[prefix] = service
  }
  for (const key of ['hosts', 'issuers'] as const) {
    const owner = new Map<string, string>()
    for (const each of list) {
      each[key].forEach((item, index) => {
        const first = owner.get(item)
        if (first !== undefined) {
          problems.add(['services', each.name, key, index], `is routed to "${first}" already: a token goes to one service only`)
        } else owner.set(item, each.name)
      })
    }
  }
  return { list, groupPrefixes }
}
