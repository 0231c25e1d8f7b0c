/**
 * Reading a gate configuration (already parsed from YAML or JSON, or given in code): every
 * key checked, unknown keys refused with a suggestion, durations turned into ms, defaults
 * filled in. Every problem is collected, not only the first.
 *
 * @module
 */
import { ruleParamProblems } from './rule-params.js'
import { isIP } from 'node:net'
import { nearestKey } from '../../src/internal.js'
import { ProblemList, type GateConfigPath } from './problem.js'
import { readOAuthSection, readServiceSection, readServicesSection, serviceKeysHome } from './service.js'
import { belongsUnder, durationAt, HOST_NAME, isObject, keysOf, objectAt, pathGlobProblem, stringAt, stringListAt } from './values.js'
import type { DecisionLogSettings, GateRequirement, GateRule, GateSettings } from './types.js'
import { isLoopbackHost } from '../../src/internal.js'
import { readPolicySettings } from './policy-config.js'
import { ruleCovers } from './rule-coverage.js'
import { parseCidr } from '../http/trusted-proxies.js'

type Path = GateConfigPath

const TOP_KEYS = [
  'listen', 'trustedProxies', 'fastcgi', 'service', 'oauth', 'services', 'groupPrefixes', 'cookie', 'redis', 'redirectHosts', 'strictHosts', 'headers',
  'log', 'extensionMethods', 'rules', 'fixtures', 'tests',
] // prettier-ignore
const COOKIE_KEYS = ['name', 'secrets', 'maxAge']
const REDIS_KEYS = ['url', 'secret', 'prefix']
const HEADER_KEYS = ['user', 'rule', 'service', 'token']
const LOG_KEYS = ['decisions', 'allowed', 'user']
const RULE_KEYS = ['id', 'host', 'path', 'params', 'methods', 'allow', 'require']
const REQUIRE_KEYS = ['group', 'anyOf', 'allOf', 'groupOfType', 'role', 'service']
const REQUIRE_KINDS = ['group', 'anyOf', 'allOf', 'groupOfType']
const ALLOW_VALUES = ['anyone', 'signed-in']
const DEFAULT_TRUSTED = ['127.0.0.1/32', '::1/128']
// An HTTP token (RFC 9110): what a header name and a cookie name may be.
const TOKEN = /^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,64}$/
/** The methods of RFC 9110 (section 9): the only ones a rule may name unless `extensionMethods` lists more. */
const HTTP_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE', 'CONNECT']
// An extension method as the gate can read it from a proxy: letters, then letters, digits, "-" or "_".
const EXTENSION_METHOD = /^[A-Z][A-Z0-9_-]{0,19}$/
const SECRET_MIN = 32
const COOKIE_MAX_AGE = 8 * 3_600_000

/** Splits `host:port` (IPv6 in brackets); `at` is the key's path (`listen`, `fastcgi.listen`). */
function readListen(problems: ProblemList, value: unknown, at: Path = ['listen'], defaultPort = 4181): { host: string; port: number } {
  const fallback = { host: '127.0.0.1', port: defaultPort }
  if (value === undefined) return fallback
  if (typeof value !== 'string') {
    problems.add(at, `must be "host:port", such as "127.0.0.1:${defaultPort}"`)
    return fallback
  }
  const match = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(value.trim())
  const port = Number(match?.[3])
  if (match === null || !Number.isInteger(port) || port > 65_535) {
    problems.add(at, `must be "host:port", such as "127.0.0.1:${defaultPort}" or "[::1]:${defaultPort}"`)
    return fallback
  }
  return { host: (match[1] ?? match[2]) as string, port }
}

/** `fastcgi: { listen }`: the FastCGI authorizer's address, held to `listen`'s rule on loopback. */
function readFastCgi(
  problems: ProblemList,
  value: unknown,
  trustedGiven: boolean,
  http: { host: string; port: number },
): GateSettings['fastcgi'] {
  const fastcgi = objectAt(problems, ['fastcgi'], value, false)
  if (fastcgi === undefined) return undefined
  keysOf(problems, ['fastcgi'], fastcgi, ['listen'])
  if (fastcgi['listen'] === undefined) problems.add(['fastcgi', 'listen'], 'is required, such as "127.0.0.1:4182"')
  const listen = readListen(problems, fastcgi['listen'], ['fastcgi', 'listen'], 4182)
  if (!trustedGiven && !isLoopbackHost(listen.host)) {
    problems.add(['fastcgi', 'listen'], `listens on ${listen.host}, not on loopback: name the web servers' addresses in "trustedProxies"`)
  }
  if (fastcgi['listen'] !== undefined && listen.port !== 0 && listen.port === http.port) {
    problems.add(['fastcgi', 'listen'], `uses the port of "listen" (${http.port}): the FastCGI authorizer needs one of its own`)
  }
  return { listen }
}

/** A rule as read, and whether what it matches (host, path, methods) was read without a problem (only those are compared for reachability). */
interface ReadRule {
  readonly rule: GateRule
  readonly sound: boolean
}

function readRule(
  problems: ProblemList,
  path: Path,
  value: unknown,
  context: { index: number; methodsKnown: readonly string[] },
): ReadRule | undefined {
  const { index, methodsKnown } = context
  const rule = objectAt(problems, path, value, true)
  if (rule === undefined) return undefined
  // A requirement's key beside "require" instead of in it (an indentation slip) says where it belongs.
  keysOf(problems, path, rule, { keys: RULE_KEYS, moved: belongsUnder([...path, 'require'], REQUIRE_KEYS) })
  const id = rule['id'] === undefined ? String(index) : stringAt(problems, [...path, 'id'], rule['id'])
  if (id !== undefined && !/^[A-Za-z0-9._:-]{1,64}$/.test(id)) {
    problems.add([...path, 'id'], 'must be 1 to 64 letters, digits, ".", "_", ":" or "-" (it is sent in a header)')
  }
  const matching = problems.items.length
  const host = stringAt(problems, [...path, 'host'], rule['host'])
  if (host !== undefined && !HOST_NAME.test(host.toLowerCase())) {
    problems.add([...path, 'host'], 'must be a host name such as "wiki.example.org" or "*.example.org" (no port, no scheme)')
  }
  const pathGlob = stringAt(problems, [...path, 'path'], rule['path'])
  const globProblem = pathGlob === undefined ? undefined : pathGlobProblem(pathGlob)
  if (globProblem !== undefined) problems.add([...path, 'path'], globProblem)
  const methods = stringListAt(problems, [...path, 'methods'], rule['methods'])
  methods?.forEach((method, i) => {
    if (methodsKnown.includes(method.toUpperCase())) return
    problems.add(
      [...path, 'methods', i],
      `"${method}" is not an HTTP method of RFC 9110 (${HTTP_METHODS.join(', ')}) nor one of "extensionMethods"`,
      nearestKey(method.toUpperCase(), methodsKnown),
    )
  })
  // Parameters (`{course}`) are read on their own (gate/policy/rule-params.ts).
  const params = rule['params'] as GateRule['params']
  const shape = { ...(pathGlob === undefined ? {} : { path: pathGlob }), ...(params === undefined ? {} : { params }) }
  ruleParamProblems(
    { ...shape, ...(rule['require'] === undefined ? {} : { require: rule['require'] as GateRequirement }) },
    index,
    problems,
  )
  // What the rule matches was read without a problem: enough to say whether it leaves a later rule any request.
  const sound = problems.items.length === matching && !problems.covers(path)
  const allow = rule['allow']
  const require = rule['require']
  if ((allow === undefined) === (require === undefined)) {
    problems.add(path, 'needs exactly one of "allow: anyone", "allow: signed-in" or "require"')
  }
  if (allow !== undefined && (typeof allow !== 'string' || !ALLOW_VALUES.includes(allow))) {
    const near = typeof allow === 'string' ? nearestKey(allow, ALLOW_VALUES) : undefined
    problems.add([...path, 'allow'], 'must be "anyone" or "signed-in"', near)
  }
  if (require !== undefined) readRequire(problems, [...path, 'require'], require)
  return {
    rule: {
      ...(id === undefined ? {} : { id }),
      ...(host === undefined ? {} : { host: host.toLowerCase() }),
      ...(pathGlob === undefined ? {} : { path: pathGlob }),
      ...(params === undefined ? {} : { params }),
      ...(methods === undefined ? {} : { methods: [...new Set(methods.map((m) => m.toUpperCase()))] }),
      ...(allow === undefined ? {} : { allow: allow as 'anyone' | 'signed-in' }),
      ...(require === undefined ? {} : { require: require as GateRule['require'] & object }),
    },
    sound,
  }
}

/** Reads `log`: where the decision log goes, which allowed checks it keeps, and how it names users. */
function readLog(problems: ProblemList, value: unknown): DecisionLogSettings | undefined {
  const log = objectAt(problems, ['log'], value, false)
  if (log === undefined) return undefined
  keysOf(problems, ['log'], log, LOG_KEYS)
  const target = stringAt(problems, ['log', 'decisions'], log['decisions'], true)
  const allowedIn = log['allowed'] ?? 'all'
  let allowed = 1
  if (allowedIn === 'none') allowed = 0
  else if (typeof allowedIn === 'number' && allowedIn >= 0 && allowedIn <= 1) allowed = allowedIn
  else if (allowedIn !== 'all') problems.add(['log', 'allowed'], 'must be all, none, or a fraction from 0 to 1 (such as 0.1)')
  const user = log['user'] ?? 'sub'
  if (user !== 'sub' && user !== 'hash')
    problems.add(['log', 'user'], 'must be sub or hash', typeof user === 'string' ? nearestKey(user, ['sub', 'hash']) : undefined)
  if (target === undefined) return undefined
  return {
    decisions: target === 'stdout' || target === 'stderr' ? target : { file: target },
    allowed,
    user: user === 'hash' ? 'hash' : 'sub',
  }
}

/** Reads `extensionMethods`: the methods a rule may name besides RFC 9110's. */
function readExtensionMethods(problems: ProblemList, value: unknown): string[] {
  const given = stringListAt(problems, ['extensionMethods'], value) ?? []
  const methods: string[] = []
  given.forEach((method, index) => {
    const upper = method.toUpperCase()
    if (!EXTENSION_METHOD.test(upper)) problems.add(['extensionMethods', index], 'must be a method name such as PROPFIND')
    else if (HTTP_METHODS.includes(upper)) problems.add(['extensionMethods', index], `${upper} is an RFC 9110 method already`)
    else methods.push(upper)
  })
  return methods
}

/** A problem for each rule that an earlier rule leaves no request to (first match wins). */
function reportUnreachable(problems: ProblemList, rules: readonly (ReadRule | undefined)[]): void {
  rules.forEach((later, j) => {
    if (later?.sound !== true) return
    for (let i = 0; i < j; i++) {
      const earlier = rules[i]
      if (earlier?.sound !== true || !ruleCovers(earlier.rule, later.rule)) continue
      problems.add(
        ['rules', j],
        `no request can reach this rule: rules[${i}] (id "${earlier.rule.id ?? i}") matches every request it matches, and the first match wins; put the narrower rule first`,
      )
      return
    }
  })
}

// What a group id (or type) in a configuration looks like: no white space (a pasted id's
// trailing space would never match), not starting or ending with ":". The core checks the rest.
const GROUP_ID_TEXT = /^(?![:])\S+(?<![:])$/

function groupIdAt(problems: ProblemList, path: Path, id: string | undefined): void {
  if (id !== undefined && !GROUP_ID_TEXT.test(id)) {
    problems.add(
      path,
      `${JSON.stringify(id)} is not a group id: ids have no spaces and do not start or end with ":" (such as "fc:org:example.org")`,
    )
  }
}

const GROUP_ENTRY_KEYS = ['group', 'service']

/**
 * An `anyOf` or `allOf`: a non-empty list of group ids, each a string or `{ group, service }`
 * (the service it is on, beside groups of other services). Which services exist, and
 * whether one contradicts a group's prefix, is checked with the rules (`policy/rules.ts`).
 */
function readGroupList(problems: ProblemList, path: Path, value: unknown): void {
  if (!Array.isArray(value) || value.length === 0) {
    problems.add(path, 'must be a non-empty list')
    return
  }
  value.forEach((item: unknown, index) => {
    const at = [...path, index]
    if (typeof item === 'string' && item !== '') {
      groupIdAt(problems, at, item)
      return
    }
    if (!isObject(item)) {
      problems.add(at, 'must be a group id, or { group: <id>, service: <name> }')
      return
    }
    keysOf(problems, at, item, GROUP_ENTRY_KEYS)
    groupIdAt(problems, [...at, 'group'], stringAt(problems, [...at, 'group'], item['group'], true))
    stringAt(problems, [...at, 'service'], item['service'], true)
  })
}

function readRequire(problems: ProblemList, path: Path, value: unknown): void {
  const require = objectAt(problems, path, value, true)
  if (require === undefined) return
  keysOf(problems, path, require, REQUIRE_KEYS)
  const kinds = REQUIRE_KINDS.filter((kind) => require[kind] !== undefined)
  if (kinds.length !== 1) {
    problems.add(path, 'needs exactly one of "group", "anyOf", "allOf" or "groupOfType" (and an optional "role")')
  }
  if (require['group'] !== undefined) groupIdAt(problems, [...path, 'group'], stringAt(problems, [...path, 'group'], require['group']))
  if (require['groupOfType'] !== undefined)
    groupIdAt(problems, [...path, 'groupOfType'], stringAt(problems, [...path, 'groupOfType'], require['groupOfType']))
  for (const kind of ['anyOf', 'allOf']) {
    if (require[kind] !== undefined) readGroupList(problems, [...path, kind], require[kind])
  }
  if (require['role'] !== undefined) stringAt(problems, [...path, 'role'], require['role'])
  if (require['service'] !== undefined) stringAt(problems, [...path, 'service'], require['service'])
}

/**
 * Checks a configuration and returns its settings, with every problem found added to
 * `problems`. The settings are returned even when there are problems (what could not be
 * read is left at its default), so that later checks (the requirements, against the
 * resolver) report theirs in the same run; the caller refuses the configuration when
 * `problems` grew.
 */
export function readGateSettings(input: unknown, problems: ProblemList): GateSettings {
  if (!isObject(input)) {
    problems.add([], 'the configuration must be a mapping with at least "service" (or "services") and "rules"')
    return readGateSettings({ rules: null, service: null }, new ProblemList())
  }
  // A key of `service` or `oauth` at the top (a section's key one level too high) says where it belongs.
  keysOf(problems, [], input, { keys: TOP_KEYS, moved: serviceKeysHome(input['services']) })
  const listen = readListen(problems, input['listen'])

  const trustedGiven = stringListAt(problems, ['trustedProxies'], input['trustedProxies'])
  trustedGiven?.forEach((cidr, index) => {
    if (parseCidr(cidr) === undefined) {
      problems.add(['trustedProxies', index], 'must be an address or a CIDR such as "10.0.0.0/8" or "::1/128"')
    }
  })
  if (input['trustedProxies'] === undefined && !isLoopbackHost(listen.host)) {
    problems.add(['listen'], `listens on ${listen.host}, not on loopback: name the proxies' addresses in "trustedProxies"`)
  }
  const fastcgi = readFastCgi(problems, input['fastcgi'], input['trustedProxies'] !== undefined, listen)

  const services = readServicesSection(problems, input['services'], input['groupPrefixes'])
  if (services !== undefined) {
    // Each service has its own: a section beside them would leave a reader guessing whose it is.
    if (input['service'] !== undefined) problems.add(['service'], 'give either "service" or "services", not both')
    if (input['oauth'] !== undefined) problems.add(['oauth'], 'with "services", each service has its own "oauth" (services.<name>.oauth)')
  }
  const service = services === undefined ? readServiceSection(problems, ['service'], input['service']) : {}
  const oauth = services === undefined ? readOAuthSection(problems, ['oauth'], input['oauth']) : undefined
  const signsIn = oauth !== undefined || (services?.list.some((each) => each.oauth !== undefined) ?? false)

  const cookieIn = objectAt(problems, ['cookie'], input['cookie'], signsIn)
  let cookie: GateSettings['cookie'] = { name: undefined, secrets: [], maxAge: COOKIE_MAX_AGE }
  if (cookieIn !== undefined) {
    keysOf(problems, ['cookie'], cookieIn, COOKIE_KEYS)
    const name = stringAt(problems, ['cookie', 'name'], cookieIn['name'])
    if (name !== undefined && !TOKEN.test(name))
      problems.add(['cookie', 'name'], 'must be a cookie name (a token of at most 64 characters)')
    const secrets = stringListAt(problems, ['cookie', 'secrets'], cookieIn['secrets'], true) ?? []
    secrets.forEach((secret, index) => {
      if (secret.length < SECRET_MIN)
        problems.add(['cookie', 'secrets', index], `must be at least ${SECRET_MIN} characters (such as: openssl rand -base64 32)`)
    })
    const maxAge = durationAt(problems, ['cookie', 'maxAge'], cookieIn['maxAge'])
    if (maxAge !== undefined && (maxAge < 60_000 || maxAge > 400 * 86_400_000)) {
      problems.add(['cookie', 'maxAge'], 'must be from 1m to 400d')
    }
    cookie = { name, secrets, maxAge: maxAge ?? COOKIE_MAX_AGE }
  }

  let redis: GateSettings['redis']
  const redisIn = objectAt(problems, ['redis'], input['redis'], false)
  if (redisIn !== undefined) {
    keysOf(problems, ['redis'], redisIn, REDIS_KEYS)
    const url = stringAt(problems, ['redis', 'url'], redisIn['url'], true)
    if (url !== undefined && !/^rediss?:\/\//.test(url)) problems.add(['redis', 'url'], 'must be a redis:// or rediss:// URL')
    const secret = stringAt(problems, ['redis', 'secret'], redisIn['secret'], true)
    const prefix = stringAt(problems, ['redis', 'prefix'], redisIn['prefix'])
    if (url !== undefined && secret !== undefined) redis = { url, secret, prefix }
  }

  const redirectHosts = stringListAt(problems, ['redirectHosts'], input['redirectHosts']) ?? []
  redirectHosts.forEach((host, index) => {
    if (!HOST_NAME.test(host.toLowerCase()) && isIP(host) === 0)
      problems.add(['redirectHosts', index], 'must be a host name such as "app.example.org"')
  })

  const headersIn = objectAt(problems, ['headers'], input['headers'], false) ?? {}
  keysOf(problems, ['headers'], headersIn, HEADER_KEYS)
  const headerName = (key: string, fallback: string): string => {
    const name = stringAt(problems, ['headers', key], headersIn[key]) ?? fallback
    if (!TOKEN.test(name)) problems.add(['headers', key], 'must be an HTTP header name')
    return name
  }
  const tokenIn = headersIn['token']
  if (tokenIn !== undefined && typeof tokenIn !== 'boolean' && (typeof tokenIn !== 'string' || !TOKEN.test(tokenIn))) {
    problems.add(['headers', 'token'], 'must be true, false, or a header name')
  }
  const headers = {
    user: headerName('user', 'X-Voot-User'),
    rule: headerName('rule', 'X-Voot-Rule'),
    service: headerName('service', 'X-Voot-Service'),
    token: tokenIn === true ? 'X-Voot-Token' : typeof tokenIn === 'string' ? tokenIn : undefined,
  }

  const log = readLog(problems, input['log'])
  const methodsKnown = [...HTTP_METHODS, ...readExtensionMethods(problems, input['extensionMethods'])]
  const rules: GateRule[] = []
  const read: (ReadRule | undefined)[] = []
  if (input['rules'] === undefined || input['rules'] === null)
    problems.add(['rules'], 'is required: an ordered list of rules (no match denies)')
  else if (!Array.isArray(input['rules']) || input['rules'].length === 0) problems.add(['rules'], 'must be a non-empty list')
  else {
    const ids = new Map<string, number>()
    input['rules'].forEach((value: unknown, index: number) => {
      const found = readRule(problems, ['rules', index], value, { index, methodsKnown })
      read.push(found)
      if (found === undefined) return
      const id = found.rule.id ?? String(index)
      const seen = ids.get(id)
      if (seen !== undefined) problems.add(['rules', index, 'id'], `repeats the id of rules[${seen}]`)
      ids.set(id, index)
      rules.push({ ...found.rule, id })
    })
    reportUnreachable(problems, read)
  }
  const policy = readPolicySettings(problems, input['fixtures'], input['tests'], {
    rules: rules.map((rule) => rule.id as string),
    services: services?.list.map((each) => each.name),
  })

  const strictIn = input['strictHosts']
  if (strictIn !== undefined && typeof strictIn !== 'boolean') problems.add(['strictHosts'], 'must be true or false')
  // On by default as soon as rules name hosts: then a host they do not name is a client's guess.
  const strictHosts = typeof strictIn === 'boolean' ? strictIn : rules.some((rule) => rule.host !== undefined)

  return {
    listen,
    trustedProxies: trustedGiven ?? DEFAULT_TRUSTED,
    fastcgi,
    service,
    oauth,
    services,
    cookie,
    redis,
    redirectHosts: redirectHosts.map((host) => host.toLowerCase()),
    strictHosts,
    headers,
    log,
    rules,
    policy,
  }
}
