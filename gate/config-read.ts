/**
 * Reading a gate configuration (already parsed from YAML or JSON, or given in code): every
 * key checked, unknown keys refused with a suggestion, durations turned into ms, defaults
 * filled in. Every problem is collected, not only the first.
 *
 * @module
 */
import { isIP } from 'node:net'
import { nearestKey } from '../src/adapter-kit.js'
import { parseDuration } from './duration.js'
import { ProblemList, type GateConfigPath } from './config-problem.js'
import type { GateRule, GateSettings } from './config-types.js'
import { isLoopbackHostname } from './loopback.js'
import { parseCidr } from './trusted-proxies.js'

type Path = GateConfigPath
type Obj = Record<string, unknown>

const TOP_KEYS = ['listen', 'trustedProxies', 'service', 'oauth', 'cookie', 'redis', 'redirectHosts', 'strictHosts', 'headers', 'rules']
/** The resolver's options a file can set (code-only ones, such as `dispatcher`, are not among them). */
const SERVICE_KEYS = [
  'baseUrl', 'timeout', 'maxResponseBytes', 'userAgent', 'allowInsecureHttp', 'cache', 'roles', 'maxInflight', 'retries',
  'retryDelay', 'circuitBreaker',
] // prettier-ignore
const SERVICE_DURATIONS = ['timeout', 'retryDelay']
const CACHE_KEYS = ['max', 'maxBytes', 'ttl', 'negativeTtl', 'staleIfError']
const CACHE_DURATIONS = ['ttl', 'negativeTtl', 'staleIfError']
const BREAKER_KEYS = ['failureThreshold', 'cooldown']
const OAUTH_KEYS = [
  'issuer', 'authUrl', 'clientId', 'clientSecret', 'scopes', 'redirectUri', 'tokenEndpointAuthMethod', 'discovery',
  'timeout', 'idTokenAlgorithms', 'clockTolerance', 'pushedAuthorizationRequests',
] // prettier-ignore
const OAUTH_DURATIONS = ['timeout', 'clockTolerance']
const COOKIE_KEYS = ['name', 'secrets', 'maxAge']
const REDIS_KEYS = ['url', 'secret', 'prefix']
const HEADER_KEYS = ['user', 'rule', 'token']
const RULE_KEYS = ['id', 'host', 'path', 'methods', 'allow', 'require']
const REQUIRE_KEYS = ['group', 'anyOf', 'allOf', 'groupOfType', 'role']
const REQUIRE_KINDS = ['group', 'anyOf', 'allOf', 'groupOfType']
const ALLOW_VALUES = ['anyone', 'signed-in']
const DEFAULT_TRUSTED = ['127.0.0.1/32', '::1/128']
// An HTTP token (RFC 9110): what a header name and a cookie name may be.
const TOKEN = /^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,64}$/
const METHOD = /^[A-Z]{1,20}$/
const HOST = /^(?:\*\.)?(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/
const SECRET_MIN = 32
const COOKIE_MAX_AGE = 8 * 3_600_000

function isObject(value: unknown): value is Obj {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** Refuses the keys of `value` that are not in `known`, with a suggestion. */
function keysOf(problems: ProblemList, path: Path, value: Obj, known: readonly string[]): void {
  for (const key of Object.keys(value)) {
    if (!known.includes(key)) problems.add([...path, key], 'unknown key', nearestKey(key, known))
  }
}

function objectAt(problems: ProblemList, path: Path, value: unknown, required: boolean): Obj | undefined {
  if (value === undefined || value === null) {
    if (required) problems.add(path, 'is required')
    return undefined
  }
  if (!isObject(value)) {
    problems.add(path, 'must be a mapping of keys to values')
    return undefined
  }
  return value
}

function stringAt(problems: ProblemList, path: Path, value: unknown, required = false): string | undefined {
  if (value === undefined || value === null) {
    if (required) problems.add(path, 'is required')
    return undefined
  }
  if (typeof value !== 'string' || value === '') {
    problems.add(path, 'must be a non-empty string')
    return undefined
  }
  return value
}

function stringListAt(problems: ProblemList, path: Path, value: unknown, required = false): string[] | undefined {
  if (value === undefined || value === null) {
    if (required) problems.add(path, 'is required')
    return undefined
  }
  if (!Array.isArray(value) || value.length === 0) {
    problems.add(path, 'must be a non-empty list')
    return undefined
  }
  let ok = true
  value.forEach((item, index) => {
    if (typeof item !== 'string' || item === '') {
      problems.add([...path, index], 'must be a non-empty string')
      ok = false
    }
  })
  return ok ? (value as string[]) : undefined
}

function durationAt(problems: ProblemList, path: Path, value: unknown): number | undefined {
  if (value === undefined) return undefined
  const ms = parseDuration(value)
  if (ms === undefined) problems.add(path, 'must be a duration such as "30s", "8h", "250ms", or a number of seconds')
  return ms
}

/** Copies `value` with the named keys turned from durations into ms. */
function withDurations(problems: ProblemList, path: Path, value: Obj, durations: readonly string[]): Obj {
  const out: Obj = { ...value }
  for (const key of durations) {
    if (value[key] !== undefined) out[key] = durationAt(problems, [...path, key], value[key]) ?? value[key]
  }
  return out
}

/** Splits `host:port` (IPv6 in brackets). */
function readListen(problems: ProblemList, value: unknown): { host: string; port: number } {
  const fallback = { host: '127.0.0.1', port: 4181 }
  if (value === undefined) return fallback
  if (typeof value !== 'string') {
    problems.add(['listen'], 'must be "host:port", such as "127.0.0.1:4181"')
    return fallback
  }
  const match = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(value.trim())
  const port = Number(match?.[3])
  if (match === null || !Number.isInteger(port) || port > 65_535) {
    problems.add(['listen'], 'must be "host:port", such as "127.0.0.1:4181" or "[::1]:4181"')
    return fallback
  }
  return { host: (match[1] ?? match[2]) as string, port }
}

function readRule(problems: ProblemList, path: Path, value: unknown, index: number): GateRule | undefined {
  const rule = objectAt(problems, path, value, true)
  if (rule === undefined) return undefined
  keysOf(problems, path, rule, RULE_KEYS)
  const id = rule['id'] === undefined ? String(index) : stringAt(problems, [...path, 'id'], rule['id'])
  if (id !== undefined && !/^[A-Za-z0-9._:-]{1,64}$/.test(id)) {
    problems.add([...path, 'id'], 'must be 1 to 64 letters, digits, ".", "_", ":" or "-" (it is sent in a header)')
  }
  const host = stringAt(problems, [...path, 'host'], rule['host'])
  if (host !== undefined && !HOST.test(host.toLowerCase())) {
    problems.add([...path, 'host'], 'must be a host name such as "wiki.example.org" or "*.example.org" (no port, no scheme)')
  }
  const pathGlob = stringAt(problems, [...path, 'path'], rule['path'])
  if (pathGlob !== undefined && (!pathGlob.startsWith('/') || /[?#%\\\s]/.test(pathGlob) || /\/\.{1,2}(?:\/|$)/.test(pathGlob))) {
    problems.add([...path, 'path'], 'must be a path glob starting with "/", without "?", "#", "%", "\\", spaces or dot segments')
  }
  const methods = stringListAt(problems, [...path, 'methods'], rule['methods'])
  methods?.forEach((method, i) => {
    if (!METHOD.test(method.toUpperCase())) problems.add([...path, 'methods', i], 'must be an HTTP method such as GET')
  })
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
    ...(id === undefined ? {} : { id }),
    ...(host === undefined ? {} : { host: host.toLowerCase() }),
    ...(pathGlob === undefined ? {} : { path: pathGlob }),
    ...(methods === undefined ? {} : { methods: methods.map((m) => m.toUpperCase()) }),
    ...(allow === undefined ? {} : { allow: allow as 'anyone' | 'signed-in' }),
    ...(require === undefined ? {} : { require: require as GateRule['require'] & object }),
  }
}

function readRequire(problems: ProblemList, path: Path, value: unknown): void {
  const require = objectAt(problems, path, value, true)
  if (require === undefined) return
  keysOf(problems, path, require, REQUIRE_KEYS)
  const kinds = REQUIRE_KINDS.filter((kind) => require[kind] !== undefined)
  if (kinds.length !== 1) {
    problems.add(path, 'needs exactly one of "group", "anyOf", "allOf" or "groupOfType" (and an optional "role")')
  }
  if (require['group'] !== undefined) stringAt(problems, [...path, 'group'], require['group'])
  if (require['groupOfType'] !== undefined) stringAt(problems, [...path, 'groupOfType'], require['groupOfType'])
  if (require['anyOf'] !== undefined) stringListAt(problems, [...path, 'anyOf'], require['anyOf'])
  if (require['allOf'] !== undefined) stringListAt(problems, [...path, 'allOf'], require['allOf'])
  if (require['role'] !== undefined) stringAt(problems, [...path, 'role'], require['role'])
}

/**
 * Checks a configuration and returns its settings, or `undefined` with the problems added
 * to `problems`. Requirements are checked against the resolver later, when rules are compiled.
 */
export function readGateSettings(input: unknown, problems: ProblemList): GateSettings | undefined {
  const before = problems.items.length
  if (!isObject(input)) {
    problems.add([], 'the configuration must be a mapping with at least "service" and "rules"')
    return undefined
  }
  keysOf(problems, [], input, TOP_KEYS)
  const listen = readListen(problems, input['listen'])

  const trustedGiven = stringListAt(problems, ['trustedProxies'], input['trustedProxies'])
  trustedGiven?.forEach((cidr, index) => {
    if (parseCidr(cidr) === undefined) {
      problems.add(['trustedProxies', index], 'must be an address or a CIDR such as "10.0.0.0/8" or "::1/128"')
    }
  })
  if (input['trustedProxies'] === undefined && !isLoopbackHostname(listen.host)) {
    problems.add(['listen'], `listens on ${listen.host}, not on loopback: name the proxies' addresses in "trustedProxies"`)
  }

  let service: Obj = {}
  const serviceIn = objectAt(problems, ['service'], input['service'], true)
  if (serviceIn !== undefined) {
    keysOf(problems, ['service'], serviceIn, SERVICE_KEYS)
    stringAt(problems, ['service', 'baseUrl'], serviceIn['baseUrl'], true)
    service = withDurations(problems, ['service'], serviceIn, SERVICE_DURATIONS)
    const cache = objectAt(problems, ['service', 'cache'], serviceIn['cache'], false)
    if (cache !== undefined) {
      keysOf(problems, ['service', 'cache'], cache, CACHE_KEYS)
      service['cache'] = withDurations(problems, ['service', 'cache'], cache, CACHE_DURATIONS)
    }
    const breaker = serviceIn['circuitBreaker']
    if (isObject(breaker)) {
      keysOf(problems, ['service', 'circuitBreaker'], breaker, BREAKER_KEYS)
      service['circuitBreaker'] = withDurations(problems, ['service', 'circuitBreaker'], breaker, ['cooldown'])
    }
  }

  let oauth: Obj | undefined
  const oauthIn = objectAt(problems, ['oauth'], input['oauth'], false)
  if (oauthIn !== undefined) {
    keysOf(problems, ['oauth'], oauthIn, OAUTH_KEYS)
    stringAt(problems, ['oauth', 'clientId'], oauthIn['clientId'], true)
    if ((oauthIn['issuer'] === undefined) === (oauthIn['authUrl'] === undefined)) {
      problems.add(['oauth', 'issuer'], 'give exactly one of "issuer" and "authUrl"')
    }
    oauth = withDurations(problems, ['oauth'], oauthIn, OAUTH_DURATIONS)
  }

  const cookieIn = objectAt(problems, ['cookie'], input['cookie'], oauthIn !== undefined)
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
    if (!HOST.test(host.toLowerCase()) && isIP(host) === 0)
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
    token: tokenIn === true ? 'X-Voot-Token' : typeof tokenIn === 'string' ? tokenIn : undefined,
  }

  const rules: GateRule[] = []
  if (input['rules'] === undefined) problems.add(['rules'], 'is required: an ordered list of rules (no match denies)')
  else if (!Array.isArray(input['rules']) || input['rules'].length === 0) problems.add(['rules'], 'must be a non-empty list')
  else {
    const ids = new Map<string, number>()
    input['rules'].forEach((value: unknown, index: number) => {
      const rule = readRule(problems, ['rules', index], value, index)
      if (rule === undefined) return
      const id = rule.id ?? String(index)
      const seen = ids.get(id)
      if (seen !== undefined) problems.add(['rules', index, 'id'], `repeats the id of rules[${seen}]`)
      ids.set(id, index)
      rules.push(rule)
    })
  }

  const strictIn = input['strictHosts']
  if (strictIn !== undefined && typeof strictIn !== 'boolean') problems.add(['strictHosts'], 'must be true or false')
  // On by default as soon as rules name hosts: then a host they do not name is a client's guess.
  const strictHosts = typeof strictIn === 'boolean' ? strictIn : rules.some((rule) => rule.host !== undefined)

  if (problems.items.length > before) return undefined
  return {
    listen,
    trustedProxies: trustedGiven ?? DEFAULT_TRUSTED,
    service,
    oauth,
    cookie,
    redis,
    redirectHosts: redirectHosts.map((host) => host.toLowerCase()),
    strictHosts,
    headers,
    rules,
  }
}
