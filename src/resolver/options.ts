/**
 * The resolver's options: their types, defaults and validation. Every option is checked
 * at creation, and a key that is not an option (`timout`, `cache: { tll }`) is refused,
 * naming it: a misspelt option silently ignored is a security setting not in force.
 *
 * @module
 */
import { circuitBreakerOption, type CircuitBreakerOptions } from './upstream/circuit-breaker.js'
import type { GroupsClient } from '../client/groups-client.js'
import { DEFAULT_TIMEOUT, MAX_TIMEOUT, type GroupsClientOptions } from '../client/options.js'
import { InvalidOptionError } from '../errors.js'
import { DEFAULT_ROLES } from '../decision/membership.js'
import { BASE_URL_EXAMPLES, functionOption, integerOption, objectOption, optionsMissing, rejectUnknownKeys } from '../option-checks.js'
import type { SharedCache } from '../shared-cache.js'
import type { ResolverEvent } from './telemetry.js'

/**
 * Cache settings of a resolver. All durations in milliseconds.
 *
 * @example
 * ```ts
 * const cache: CacheOptions = { max: 50_000, maxBytes: 128 << 20, ttl: 30_000, negativeTtl: 5_000, staleIfError: 60_000 }
 * ```
 */
export interface CacheOptions {
  /** Most entries kept (answers of all tokens together). Default `10_000`. */
  max?: number
  /**
   * Most bytes of heap the cached answers may take, as estimated when each is stored (a
   * parsed answer takes several times its size on the wire). Default `64 << 20` (64 MiB).
   * An answer larger than a tenth of it is served but not cached.
   */
  maxBytes?: number
  /** How long a positive answer is fresh. Default `60_000`. */
  ttl?: number
  /** How long a 404 (not a member) or 401 (invalid token) is remembered. Default `10_000`. */
  negativeTtl?: number
  /** How long after expiry an answer may still be served when a refresh fails (never after a 401). Default `0` (off). */
  staleIfError?: number
}

/**
 * Where the resolver's warnings go: anything with a `warn` method (`console`, a pino or
 * winston logger). Without one, warnings go to `process.emitWarning`.
 *
 * @example
 * ```ts
 * const logger: ResolverLogger = console
 * ```
 */
export interface ResolverLogger {
  warn(message: string, ...rest: unknown[]): void
}

/**
 * Options of `createMembershipResolver`: the groups client's options plus caching.
 *
 * @example
 * ```ts
 * const options: MembershipResolverOptions = { baseUrl: 'https://groups-api.example.org/groups', cache: { ttl: 30_000 } }
 * ```
 */
export interface MembershipResolverOptions extends Partial<GroupsClientOptions> {
  /** A groups client to use instead of creating one from `baseUrl` and friends. */
  client?: GroupsClient
  /** Cache settings. */
  cache?: CacheOptions
  /**
   * Roles in ascending order; a higher role satisfies a lower one. Default
   * `['member', 'manager', 'admin', 'owner']`; a membership whose role is not listed
   * satisfies nothing.
   */
  roles?: readonly string[]
  /** Most distinct upstream calls in flight at once; past it, lookups fail fast with 503. Default `256`. */
  maxInflight?: number
  /**
   * Retries of a call that failed before any answer (connection refused or reset; never a
   * status, a bad body or a timeout). Integer 0..5; default `1`. A retry is made only while
   * `timeout` has room for it: the first attempt and its retries share that one deadline.
   */
  retries?: number
  /**
   * Wait before a retry, in ms (50 to 100 % of it, doubled for each further retry). Integer
   * 0..10000; default `10`: short, because the failures retried (a refused or reset
   * connection, typically a keep-alive race) are over at once.
   */
  retryDelay?: number
  /**
   * Opt-in circuit breaker: after `failureThreshold` upstream failures in a row (network,
   * timeout, 5xx, 429, redirect, bad body; never 401, 403, 404), cache misses fail at once
   * with 503 `ERR_UPSTREAM_CIRCUIT_OPEN` for `cooldown` ms, then one probe call is let
   * through. Cached answers are served all along. `true` uses the defaults
   * (`{ failureThreshold: 5, cooldown: 30_000 }`). Default `false` (off).
   */
  circuitBreaker?: boolean | CircuitBreakerOptions
  /**
   * A shared cache tier that every instance of the app reads and writes, such as
   * `createRedisCache()` from `voot-guard/redis`: looked up after the in-process cache and
   * before the group service. Default: none.
   */
  sharedCache?: SharedCache
  /**
   * Where warnings go: a `baseUrl` that answers like no group service, resolvers created
   * per request (50 for one `baseUrl` within 10 seconds), `allowInsecureHttp` with
   * `NODE_ENV=production`. Default `process.emitWarning`.
   */
  logger?: ResolverLogger
  /** Clock in ms since the epoch, for TTLs and dated memberships. Default `Date.now`. */
  now?: () => number
  /** Receives {@link ResolverEvent}s. Exceptions it throws are ignored. */
  onEvent?: (event: ResolverEvent) => void
}

/** The options after validation, with defaults filled in. */
export interface ResolverSettings {
  readonly max: number
  readonly maxBytes: number
  readonly ttl: number
  readonly negativeTtl: number
  readonly staleIfError: number
  readonly maxInflight: number
  readonly retries: number
  readonly retryDelay: number
  /** The whole-call deadline, shared by a call and its retries. */
  readonly budget: number
  readonly breaker: Required<CircuitBreakerOptions> | undefined
  readonly roles: readonly string[]
  readonly sharedCache: SharedCache | undefined
  readonly logger: ResolverLogger | undefined
  readonly now: () => number
  readonly onEvent: ((event: ResolverEvent) => void) | undefined
  /** The caller's client, or the options to create one from. */
  readonly client: GroupsClient | GroupsClientOptions
}

/** The groups client's own options, picked by name (every other key is the resolver's or unknown). */
const CLIENT_KEYS = ['baseUrl', 'timeout', 'maxResponseBytes', 'dispatcher', 'userAgent', 'allowInsecureHttp'] as const
const RESOLVER_KEYS = [
  'client',
  'cache',
  'roles',
  'maxInflight',
  'retries',
  'retryDelay',
  'circuitBreaker',
  'sharedCache',
  'logger',
  'now',
  'onEvent',
] as const
const CACHE_KEYS = ['max', 'maxBytes', 'ttl', 'negativeTtl', 'staleIfError'] as const

/**
 * How long a positive answer stays fresh when `cache.ttl` is not given, in ms (one minute).
 *
 * @example
 * ```ts
 * const ttl = options.cache?.ttl ?? DEFAULT_CACHE_TTL
 * ```
 */
export const DEFAULT_CACHE_TTL = 60_000

/** Every key of {@link MembershipResolverOptions}: the guard's options are these and its own. */
export const RESOLVER_OPTION_KEYS: readonly string[] = [...CLIENT_KEYS, ...RESOLVER_KEYS]

/**
 * Validates {@link MembershipResolverOptions} and fills in the defaults. Throws
 * `InvalidOptionError` naming the first invalid or unknown option.
 */
export function resolveResolverOptions(options: MembershipResolverOptions): ResolverSettings {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw optionsMissing('createMembershipResolver', options)
  }
  rejectUnknownKeys('', options, RESOLVER_OPTION_KEYS)
  const cache = objectOption<CacheOptions>('cache', options.cache)
  rejectUnknownKeys('cache.', cache, CACHE_KEYS)
  return {
    max: integerOption('cache.max', cache.max, { fallback: 10_000, min: 1, max: 10_000_000 }),
    maxBytes: integerOption('cache.maxBytes', cache.maxBytes, { fallback: 64 << 20, min: 1 << 16, max: 2 ** 40 }),
    ttl: integerOption('cache.ttl', cache.ttl, { fallback: DEFAULT_CACHE_TTL, min: 0, max: 86_400_000 }),
    negativeTtl: integerOption('cache.negativeTtl', cache.negativeTtl, { fallback: 10_000, min: 0, max: 86_400_000 }),
    staleIfError: integerOption('cache.staleIfError', cache.staleIfError, { fallback: 0, min: 0, max: 86_400_000 }),
    maxInflight: integerOption('maxInflight', options.maxInflight, { fallback: 256, min: 1, max: 100_000 }),
    retries: integerOption('retries', options.retries, { fallback: 1, min: 0, max: 5 }),
    retryDelay: integerOption('retryDelay', options.retryDelay, { fallback: 10, min: 0, max: 10_000 }),
    // With a caller's `client`, `timeout` should match its own.
    budget: integerOption('timeout', options.timeout, { fallback: DEFAULT_TIMEOUT, min: 1, max: MAX_TIMEOUT }),
    breaker: circuitBreakerOption(options.circuitBreaker),
    roles: rolesOption(options.roles),
    sharedCache: sharedCacheOption('sharedCache', options.sharedCache),
    logger: loggerOption(options.logger),
    now: functionOption('now', options.now, Date.now),
    onEvent: options.onEvent === undefined ? undefined : functionOption('onEvent', options.onEvent, () => {}),
    client: clientOption(options),
  }
}

function clientOption(options: MembershipResolverOptions): GroupsClient | GroupsClientOptions {
  if (options.client !== undefined) {
    if (typeof options.client !== 'object' || options.client === null || typeof options.client.myGroups !== 'function') {
      throw new InvalidOptionError('client', 'must be a GroupsClient from createGroupsClient()')
    }
    return options.client
  }
  if (options.baseUrl === undefined) {
    throw new InvalidOptionError(
      'baseUrl',
      `is required: the group service's address, such as ${BASE_URL_EXAMPLES} (an environment variable that is not set?); or pass a \`client\` (to a guard: a \`resolver\`)`,
    )
  }
  const picked: Record<string, unknown> = {}
  for (const key of CLIENT_KEYS) if (options[key] !== undefined) picked[key] = options[key]
  return picked as unknown as GroupsClientOptions
}

function rolesOption(value: unknown): readonly string[] {
  if (value === undefined) return DEFAULT_ROLES
  if (!Array.isArray(value) || value.length === 0) {
    throw new InvalidOptionError('roles', 'must be a non-empty array of role names, lowest first')
  }
  const seen = new Set<string>()
  for (const role of value) {
    if (typeof role !== 'string' || role.length === 0) throw new InvalidOptionError('roles', 'must hold non-empty strings')
    if (seen.has(role)) throw new InvalidOptionError('roles', `names ${JSON.stringify(role)} twice`)
    seen.add(role)
  }
  return Object.freeze([...(value as string[])])
}

const SHARED_CACHE_METHODS = ['tokenId', 'get', 'set', 'acquire', 'waitFor', 'invalidate', 'subscribe', 'health', 'stats', 'close'] as const

/** Checks a `sharedCache` option (`name` is the option's name in the error). */
export function sharedCacheOption(name: string, value: unknown): SharedCache | undefined {
  if (value === undefined) return undefined
  const methods = value as Record<string, unknown> | null
  if (typeof value !== 'object' || methods === null || SHARED_CACHE_METHODS.some((method) => typeof methods[method] !== 'function')) {
    throw new InvalidOptionError(name, 'must be a shared cache tier such as createRedisCache() from voot-guard/redis')
  }
  return value as SharedCache
}

function loggerOption(value: unknown): ResolverLogger | undefined {
  if (value === undefined) return undefined
  if (typeof value !== 'object' || value === null || typeof (value as ResolverLogger).warn !== 'function') {
    throw new InvalidOptionError('logger', 'must have a warn(message) method, such as console or a pino logger')
  }
  return value as ResolverLogger
}
