/**
 * The membership resolver: the groups client behind a per-token LRU cache with
 * single-flight, TTLs, negative caching, stale-if-error and a bound on upstream calls.
 *
 * @module
 */
import { LRUCache } from 'lru-cache'
import { createAnswerPool } from './answer-pool.js'
import { CacheEntry } from './cache-entry.js'
import { createCacheKeys, type CacheKeyKind } from './cache-key.js'
import {
  circuitBreakerOption,
  circuitOutcome,
  createCircuitBreaker,
  type CircuitBreaker,
  type CircuitBreakerOptions,
  type CircuitPermit,
  type CircuitState,
} from './circuit-breaker.js'
import { createGroupsClient, type GroupsClient, type GroupsClientOptions } from './client.js'
import { DEFAULT_TIMEOUT, MAX_TIMEOUT } from './client-options.js'
import { deepFreeze } from './deep-freeze.js'
import {
  decide,
  decideFromList,
  findListed,
  indexGroups,
  type Decision,
  type DecisionLookups,
  type GroupsIndex,
} from './decision.js'
import {
  AbortedError,
  InvalidArgumentError,
  InvalidOptionError,
  InvalidTokenError,
  UpstreamError,
  VootError,
} from './errors.js'
import { assertGroupId } from './group-id.js'
import { DEFAULT_ROLES, judgeMembership } from './membership.js'
import { functionOption, integerOption, objectOption } from './option-checks.js'
import { isRequirement, rolesOf, type Requirement, type RequirementContext } from './requirements.js'
import { createRetrier, type RetryInfo } from './retry.js'
import { createTokenBackoff } from './token-backoff.js'
import { tokenExpiry } from './token-expiry.js'
import type { GroupWithMembership, Membership } from './types.js'

/**
 * Cache settings of a resolver. All durations in milliseconds.
 *
 * @example
 * ```ts
 * const cache: CacheOptions = { max: 50_000, ttl: 30_000, negativeTtl: 5_000, staleIfError: 60_000 }
 * ```
 */
export interface CacheOptions {
  /** Most entries kept (answers of all tokens together). Default `10_000`. */
  max?: number
  /** How long a positive answer is fresh. Default `60_000`. */
  ttl?: number
  /** How long a 404 (not a member) or 401 (invalid token) is remembered. Default `10_000`. */
  negativeTtl?: number
  /** How long after expiry an answer may still be served when a refresh fails (never after a 401). Default `0` (off). */
  staleIfError?: number
}

/**
 * Something the resolver did, for logging and metrics. Events never carry a token.
 *
 * @example
 * ```ts
 * createMembershipResolver({ baseUrl, onEvent: (e) => { if (e.type === 'upstream_error') log.warn(e) } })
 * ```
 */
export type ResolverEvent =
  | { readonly type: 'cache_hit' | 'cache_miss' | 'coalesced'; readonly endpoint: string; readonly groupId?: string }
  | {
      readonly type: 'upstream_response'
      readonly endpoint: string
      readonly groupId?: string
      readonly durationMs: number
      readonly outcome: 'ok' | 'not_found' | 'invalid_token' | 'insufficient_scope'
    }
  | {
      readonly type: 'upstream_error'
      readonly endpoint: string
      readonly groupId?: string
      readonly durationMs: number
      readonly code: string
      readonly upstreamStatus?: number
    }
  | { readonly type: 'stale_served'; readonly endpoint: string; readonly groupId?: string; readonly ageMs: number }
  | { readonly type: 'invalidated'; readonly scope: 'token' | 'all' }
  | {
      /** A call failed before any answer (refused, reset) and is tried again after `delayMs`. */
      readonly type: 'upstream_retry'
      readonly endpoint: string
      readonly groupId?: string
      /** 1 for the first retry. */
      readonly attempt: number
      readonly delayMs: number
      /** Code of the failure being retried. */
      readonly code: string
    }
  | {
      /** No call was made: too many in flight, the circuit is open, or the token is backing off after a 429. */
      readonly type: 'upstream_rejected'
      readonly endpoint: string
      readonly groupId?: string
      readonly code: 'ERR_UPSTREAM_OVERLOADED' | 'ERR_UPSTREAM_CIRCUIT_OPEN' | 'ERR_UPSTREAM_RATE_LIMITED'
      /** Seconds until a call may be made again. */
      readonly retryAfter: number
    }
  | {
      /** The circuit breaker opened after `failures` upstream failures in a row; calls fail at once for `cooldownMs`. */
      readonly type: 'circuit_open'
      readonly failures: number
      readonly cooldownMs: number
    }
  /** The cool-down is over and one probe call may go through (`half_open`), or the probe succeeded (`closed`). */
  | { readonly type: 'circuit_half_open' | 'circuit_closed' }

/**
 * Options of {@link createMembershipResolver}: the groups client's options plus caching.
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
  /** Roles in ascending order; a higher role satisfies a lower one. Default `['member', 'manager', 'admin', 'owner']`; a membership whose role is not listed satisfies nothing. */
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
   * connection, typically a keep-alive race) are over at once, and a refused connection must
   * still reach its 503 fast.
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
  /** Clock in ms since the epoch, for TTLs and dated memberships. Default `Date.now`. */
  now?: () => number
  /** Receives {@link ResolverEvent}s. Exceptions it throws are ignored. */
  onEvent?: (event: ResolverEvent) => void
}

/**
 * Per-call options of the resolver.
 *
 * @example
 * ```ts
 * await resolver.check(token, group('fc:org:example.org'), { tokenExpiresAt: tokens.expiresAt, signal })
 * ```
 */
export interface ResolveOptions {
  /** Gives up waiting (rejects with `AbortedError`); the shared upstream call goes on for other callers. */
  signal?: AbortSignal
  /**
   * When the token expires (ms since the epoch), e.g. `tokenSet.expiresAt` from
   * `voot-guard/oauth`. No answer is cached past it, and an expired token is refused
   * without a call. For JWT access tokens the `exp` claim is read automatically.
   */
  tokenExpiresAt?: number
}

/**
 * Counters of a resolver, for metrics.
 *
 * @example
 * ```ts
 * const { hits, misses } = resolver.stats()
 * ```
 */
export interface ResolverStats {
  readonly hits: number
  readonly misses: number
  readonly upstreamCalls: number
  readonly coalesced: number
  readonly staleServed: number
  /** Entries in the cache now. */
  readonly size: number
  /** Upstream calls in flight now. */
  readonly inflight: number
  /** Retries made (after a refused or reset connection). */
  readonly retries: number
  /** Lookups failed fast without a call: overload, open circuit, or a token backing off after a 429. */
  readonly rejected: number
  /** The circuit breaker's state, or `'off'`. */
  readonly circuit: CircuitState | 'off'
}

/**
 * Answers "what does this token's user belong to" from a cache, asking the group service
 * only on a miss.
 *
 * @example
 * ```ts
 * const decision = await resolver.check(token, group('fc:org:example.org', 'admin'))
 * ```
 */
export interface MembershipResolver {
  /** The role order in force. */
  readonly roles: readonly string[]
  /** The underlying groups client. */
  readonly client: GroupsClient
  /** `GET me/groups` (cached): the user's groups, each with its `membership`. */
  groups(token: string, options?: ResolveOptions & { showAll?: boolean }): Promise<readonly GroupWithMembership[]>
  /** `GET me/groups/{id}` (cached): the membership, or `null` when not a member (404). */
  membership(token: string, groupId: string, options?: ResolveOptions): Promise<Membership | null>
  /**
   * Decides a requirement. Resolves with an allowed or denied {@link Decision}; rejects with
   * `UpstreamError` when the answer is unknown, `InvalidTokenError` (401) or
   * `InsufficientScopeError` (403).
   */
  check(token: string, requirement: Requirement, options?: ResolveOptions): Promise<Decision>
  /**
   * The warm path of {@link MembershipResolver.check}, synchronous: the allowed decision
   * when fresh cached answers prove the requirement (`me/groups`, and `me/groups/{id}`
   * for groups the list does not prove), `undefined` otherwise (then call `check`). Never calls the group service, never denies, never throws. Optional:
   * resolvers not made by `createMembershipResolver` may lack it.
   */
  checkCached?(token: string, requirement: Requirement, options?: ResolveOptions): Decision | undefined
  /** Drops one token's cached answers, or every answer when called without a token. */
  invalidate(token?: string): void
  /** Throws `InvalidArgumentError` unless `requirement` is one this resolver can decide (known roles). */
  assertRequirement(requirement: Requirement): void
  /** Counters for metrics. */
  stats(): ResolverStats
  /** Closes the groups client if the resolver created it. */
  close(): Promise<void>
}

interface Flight {
  readonly promise: Promise<unknown>
  /** Set when the cache was invalidated while the call was under way: do not store its answer. */
  discard: boolean
}

const ENDPOINT: Readonly<Record<CacheKeyKind, string>> = {
  groups: 'me/groups',
  groupsAll: 'me/groups',
  membership: 'me/groups/{groupid}',
  invalid: 'me/groups',
}

/** Where an event happened: the endpoint template, and the group id when there is one. */
function place(kind: CacheKeyKind, groupId: string | undefined): { endpoint: string; groupId?: string } {
  return groupId === undefined ? { endpoint: ENDPOINT[kind] } : { endpoint: ENDPOINT[kind], groupId }
}

function waitFor<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return promise
  if (signal.aborted) return Promise.reject(new AbortedError())
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(new AbortedError())
    signal.addEventListener('abort', onAbort, { once: true })
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort)
        resolve(value)
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort)
        reject(error)
      },
    )
  })
}

function validateRoles(value: unknown): readonly string[] {
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

/**
 * Creates a {@link MembershipResolver}.
 *
 * Defaults: `timeout` 5000 ms, `maxResponseBytes` 1 MiB, `cache.max` 10 000,
 * `cache.ttl` 60 000 ms, `cache.negativeTtl` 10 000 ms, `cache.staleIfError` 0,
 * `roles` `['member', 'manager', 'admin', 'owner']`, `maxInflight` 256, `retries` 1, `retryDelay` 10 ms,
 * `circuitBreaker` off.
 *
 * @example
 * ```ts
 * import { createMembershipResolver, group } from 'voot-guard'
 *
 * const resolver = createMembershipResolver({ baseUrl: 'https://groups-api.example.org/groups' })
 * const decision = await resolver.check(token, group('fc:org:example.org', 'admin'))
 * ```
 */
export function createMembershipResolver(options: MembershipResolverOptions): MembershipResolver {
  if (typeof options !== 'object' || options === null) {
    throw new InvalidOptionError('(options)', 'createMembershipResolver() needs an options object')
  }
  const cacheOptions = objectOption<CacheOptions>('cache', options.cache)
  const max = integerOption('cache.max', cacheOptions.max, 10_000, 1, 10_000_000)
  const ttl = integerOption('cache.ttl', cacheOptions.ttl, 60_000, 0, 86_400_000)
  const negativeTtl = integerOption('cache.negativeTtl', cacheOptions.negativeTtl, 10_000, 0, 86_400_000)
  const staleIfError = integerOption('cache.staleIfError', cacheOptions.staleIfError, 0, 0, 86_400_000)
  const maxInflight = integerOption('maxInflight', options.maxInflight, 256, 1, 100_000)
  const retries = integerOption('retries', options.retries, 1, 0, 5)
  const retryDelay = integerOption('retryDelay', options.retryDelay, 10, 0, 10_000)
  // Retries share the whole-call deadline; with a caller's `client`, `timeout` should match its own.
  const budget = integerOption('timeout', options.timeout, DEFAULT_TIMEOUT, 1, MAX_TIMEOUT)
  const breakerSettings = circuitBreakerOption(options.circuitBreaker)
  const roles = validateRoles(options.roles)
  const now = functionOption('now', options.now, Date.now)
  const onEvent = functionOption<(event: ResolverEvent) => void>('onEvent', options.onEvent, () => {})
  const listening = options.onEvent !== undefined

  let ownsClient = false
  let client: GroupsClient
  if (options.client !== undefined) {
    if (typeof options.client !== 'object' || options.client === null || typeof options.client.myGroups !== 'function') {
      throw new InvalidOptionError('client', 'must be a GroupsClient from createGroupsClient()')
    }
    client = options.client
  } else {
    if (options.baseUrl === undefined) throw new InvalidOptionError('baseUrl', 'is required (or pass `client`)')
    const {
      client: _c,
      cache: _k,
      roles: _r,
      maxInflight: _m,
      now: _n,
      onEvent: _e,
      retries: _t,
      retryDelay: _d,
      circuitBreaker: _b,
      ...clientOptions
    } = options
    client = createGroupsClient(clientOptions as GroupsClientOptions)
    ownsClient = true
  }

  const keys = createCacheKeys()
  const cache = new LRUCache<string, CacheEntry>({ max })
  const inflight = new Map<string, Flight>()
  let hits = 0
  let misses = 0
  let upstreamCalls = 0
  let coalesced = 0
  let staleServed = 0
  let retried = 0
  let rejected = 0
  const retrier = createRetrier({ retries, delay: retryDelay, budget })
  const backoff = createTokenBackoff({ max, now })
  const breaker: CircuitBreaker | undefined =
    breakerSettings &&
    createCircuitBreaker({
      ...breakerSettings,
      now,
      onChange: (change) => {
        if (!listening) return
        if (change.state === 'open') emit({ type: 'circuit_open', failures: change.failures, cooldownMs: change.cooldownMs })
        else emit({ type: change.state === 'closed' ? 'circuit_closed' : 'circuit_half_open' })
      },
    })

  function emit(event: ResolverEvent): void {
    try {
      onEvent(event)
    } catch {
      // A logging hook must never change an authorization outcome.
    }
  }

  function discardFlights(prefix: string | undefined): void {
    for (const [key, flight] of inflight) {
      if (prefix === undefined || key.startsWith(prefix)) {
        flight.discard = true
        inflight.delete(key)
      }
    }
  }

  function dropToken(digest: string): void {
    const prefix = keys.prefix(digest)
    for (const key of cache.keys()) if (key.startsWith(prefix)) cache.delete(key)
    discardFlights(prefix)
  }

  /** Whether a 401 for this token is still remembered (`negativeTtl`): answer 401 without a call. */
  function isMarkedInvalid(digest: string, at: number): boolean {
    const marker = cache.get(keys.key(digest, 'invalid'))
    return marker !== undefined && at < marker.freshUntil
  }

  /**
   * Whether a cached answer predates a 401 of its token. Such answers are never served
   * again, fresh or stale: the marker's `hardUntil` outlives every answer stored before it
   * (`ttl + staleIfError`), so no per-token scan of the cache is needed.
   */
  function isRevoked(entry: CacheEntry, digest: string, at: number): boolean {
    const marker = cache.peek(keys.key(digest, 'invalid'))
    return marker !== undefined && at < marker.hardUntil && entry.storedAt <= marker.storedAt
  }

  /** Records a 401: nothing cached for the token before it is served again, stale or not. */
  function markInvalid(digest: string, at: number): void {
    // The warm path reads `me/groups` without looking for a marker, so those go now.
    cache.delete(keys.key(digest, 'groups'))
    cache.delete(keys.key(digest, 'groupsAll'))
    discardFlights(keys.prefix(digest))
    cache.set(keys.key(digest, 'invalid'), new CacheEntry(true, at, at + negativeTtl, at + Math.max(negativeTtl, ttl + staleIfError)))
  }

  function tokenDeadline(token: string, callOptions: ResolveOptions | undefined): number {
    const given = callOptions?.tokenExpiresAt
    const fromJwt = tokenExpiry(token)
    if (given === undefined) return fromJwt ?? Infinity
    return fromJwt === undefined ? given : Math.min(given, fromJwt)
  }

  /** An expired entry that may still be served after a failure (`staleIfError`), counted and reported. */
  function staleEntry(key: string, kind: CacheKeyKind, groupId: string | undefined, digest: string, at: number): CacheEntry | undefined {
    const stale = cache.get(key)
    if (
      staleIfError > 0 &&
      stale !== undefined &&
      at - stale.freshUntil <= staleIfError &&
      at < stale.hardUntil &&
      !isRevoked(stale, digest, at)
    ) {
      staleServed++
      if (listening) emit({ type: 'stale_served', ...place(kind, groupId), ageMs: at - stale.storedAt })
      return stale
    }
    return undefined
  }

  /** A lookup that makes no call (overload, open circuit, back-off): a stale answer if allowed, else the refusal. */
  function refuse(
    refusal: UpstreamError,
    key: string,
    kind: CacheKeyKind,
    groupId: string | undefined,
    digest: string,
    at: number,
  ): Promise<unknown> {
    rejected++
    if (listening) {
      const code = refusal.code as 'ERR_UPSTREAM_OVERLOADED' | 'ERR_UPSTREAM_CIRCUIT_OPEN' | 'ERR_UPSTREAM_RATE_LIMITED'
      emit({ type: 'upstream_rejected', ...place(kind, groupId), code, retryAfter: refusal.retryAfter ?? 1 })
    }
    const stale = staleEntry(key, kind, groupId, digest, at)
    return stale === undefined ? Promise.reject(refusal) : Promise.resolve(stale.value)
  }

  /**
   * One cached lookup: a fresh entry, or one shared upstream call, or (on failure) a stale
   * entry within `staleIfError`.
   */
  function lookup<T>(
    token: string,
    digest: string,
    kind: CacheKeyKind,
    groupId: string | undefined,
    fetch: (signal: AbortSignal | undefined) => Promise<T>,
    callOptions: ResolveOptions | undefined,
    ttlOf: (value: T) => number,
    prepare: (value: T) => unknown,
  ): Promise<unknown> {
    const key = keys.key(digest, kind, groupId)
    const at = now()
    // A token past the expiry the caller knows of gets nothing, not even a cached answer.
    const expiresAt = callOptions?.tokenExpiresAt
    if (expiresAt !== undefined && !(at < expiresAt)) return Promise.reject(new InvalidTokenError('The access token has expired'))
    const entry = cache.get(key)
    if (entry !== undefined && at < entry.freshUntil && (kind !== 'membership' || !isRevoked(entry, digest, at))) {
      hits++
      if (listening) emit({ type: 'cache_hit', ...place(kind, groupId) })
      return Promise.resolve(entry.value)
    }
    misses++
    if (listening) emit({ type: 'cache_miss', ...place(kind, groupId) })
    if (isMarkedInvalid(digest, at)) return Promise.reject(new InvalidTokenError())
    const deadline = tokenDeadline(token, callOptions)
    if (deadline <= at) return Promise.reject(new InvalidTokenError('The access token has expired'))

    const shared = inflight.get(key)
    if (shared !== undefined) {
      coalesced++
      if (listening) emit({ type: 'coalesced', ...place(kind, groupId) })
      return waitFor(shared.promise, callOptions?.signal)
    }
    let permit: CircuitPermit | undefined
    let refusal = backoff.refusal(digest, ENDPOINT[kind])
    if (refusal === undefined && inflight.size >= maxInflight) {
      refusal = new UpstreamError('ERR_UPSTREAM_OVERLOADED', 'Too many group service calls are in flight', {
        endpoint: ENDPOINT[kind],
        retryAfter: 1,
      })
    }
    // Asked last: a permit is a promise to call (the one probe of a half-open circuit).
    if (refusal === undefined && breaker !== undefined) {
      permit = breaker.admit()
      if (permit === undefined) refusal = breaker.openError(ENDPOINT[kind])
    }
    if (refusal !== undefined) return refuse(refusal, key, kind, groupId, digest, at)

    upstreamCalls++
    const started = now()
    const onRetry = (info: RetryInfo): void => {
      retried++
      if (listening) {
        emit({ type: 'upstream_retry', ...place(kind, groupId), attempt: info.attempt, delayMs: info.delayMs, code: info.error.code })
      }
    }
    const flight: Flight = {
      discard: false,
      promise: retrier.run(fetch, onRetry).then(
        (value) => {
          const done = now()
          permit?.settle('success')
          if (listening) {
            const outcome = value === null ? 'not_found' : 'ok'
            emit({ type: 'upstream_response', ...place(kind, groupId), durationMs: done - started, outcome })
          }
          const prepared = deepFreeze(prepare(value))
          const life = ttlOf(value)
          if (!flight.discard && life > 0 && done < deadline) {
            cache.set(key, new CacheEntry(prepared, done, Math.min(done + life, deadline), deadline))
          }
          return prepared
        },
        (error: unknown) => {
          const done = now()
          permit?.settle(circuitOutcome(error))
          if (error instanceof InvalidTokenError) {
            if (listening) emit({ type: 'upstream_response', ...place(kind, groupId), durationMs: done - started, outcome: 'invalid_token' })
            if (!flight.discard) markInvalid(digest, done)
            throw error
          }
          if (error instanceof UpstreamError) {
            if (listening) {
              const base = { type: 'upstream_error', ...place(kind, groupId), durationMs: done - started, code: error.code } as const
              emit(error.upstreamStatus === undefined ? base : { ...base, upstreamStatus: error.upstreamStatus })
            }
            if (error.code === 'ERR_UPSTREAM_RATE_LIMITED' && error.retryAfter !== undefined) backoff.block(digest, error.retryAfter)
            const stale = staleEntry(key, kind, groupId, digest, done)
            if (stale !== undefined) return stale.value
          } else if (listening && error instanceof VootError) {
            emit({ type: 'upstream_response', ...place(kind, groupId), durationMs: done - started, outcome: 'insufficient_scope' })
          }
          throw error
        },
      ),
    }
    inflight.set(key, flight)
    void flight.promise.then(
      () => inflight.get(key) === flight && inflight.delete(key),
      () => inflight.get(key) === flight && inflight.delete(key),
    )
    return waitFor(flight.promise, callOptions?.signal)
  }

  const positiveTtl = (): number => ttl
  const membershipTtl = (value: Membership | null): number => (value === null ? negativeTtl : ttl)
  // Answers are frozen and their identical parts shared between tokens (see answer-pool.ts).
  const pool = createAnswerPool()
  const sharedList = (list: readonly GroupWithMembership[]): readonly GroupWithMembership[] => pool.shareAll(list)
  const sharedIndex = (list: readonly GroupWithMembership[]): GroupsIndex => indexGroups(pool.shareAll(list))
  const sharedMembership = (membership: Membership | null): Membership | null => (membership === null ? null : pool.share(membership))

  function groupsIndex(token: string, digest: string, callOptions: ResolveOptions | undefined): Promise<GroupsIndex> {
    return lookup(
      token,
      digest,
      'groups',
      undefined,
      // The caller's signal is not passed on: the call is shared with other waiters. The
      // signal here is the retry's share of the deadline.
      (signal) => client.myGroups(token, { signal }),
      callOptions,
      positiveTtl,
      sharedIndex,
    ) as Promise<GroupsIndex>
  }

  function membershipOf(
    token: string,
    digest: string,
    groupId: string,
    callOptions: ResolveOptions | undefined,
  ): Promise<Membership | null> {
    return lookup(
      token,
      digest,
      'membership',
      groupId,
      (signal) => client.myMembership(token, groupId, { signal }),
      callOptions,
      membershipTtl,
      sharedMembership,
    ) as Promise<Membership | null>
  }

  function assertToken(token: unknown): asserts token is string {
    if (typeof token !== 'string' || token.length === 0) {
      throw new InvalidArgumentError('A token must be a non-empty string')
    }
  }

  function assertRequirement(requirement: Requirement): void {
    if (!isRequirement(requirement)) {
      throw new InvalidArgumentError('Not a requirement built by voot-guard (use group(), anyOf(), ...)')
    }
    for (const role of rolesOf(requirement)) {
      if (!roles.includes(role)) {
        throw new InvalidArgumentError(`Unknown role ${JSON.stringify(role)}: the resolver's roles are ${roles.join(' < ')}`)
      }
    }
  }

  // Requirements are frozen and the roles fixed, so a requirement valid once for this
  // resolver stays valid: `check` validates each one once, not on every request.
  const accepted = new WeakSet<Requirement>()

  /**
   * The allowed decision fresh cached answers prove, each answer used counted as a hit;
   * else `undefined`. `me/groups` first; then, for groups it does not prove, the cached
   * `me/groups/{id}` answers `decide` would read next (a partial list stays cached for
   * `ttl`, and its missing groups should not cost a promise chain on every request).
   */
  function fromFreshList(digest: string, requirement: Requirement, callOptions: ResolveOptions | undefined, at: number): Decision | undefined {
    const entry = cache.get(keys.key(digest, 'groups'))
    const expiresAt = callOptions?.tokenExpiresAt
    // Written as `!(a < b)` so that a NaN clock or expiry counts as not fresh.
    if (entry === undefined || !(at < entry.freshUntil) || (expiresAt !== undefined && !(at < expiresAt))) return undefined
    const index = entry.value as GroupsIndex
    let used: string[] | undefined
    const quick =
      decideFromList(requirement, index, at, roles) ??
      decideFromList(requirement, index, at, roles, (groupId) => {
        const membership = cache.peek(keys.key(digest, 'membership', groupId))
        if (membership === undefined || !(at < membership.freshUntil) || isRevoked(membership, digest, at)) return undefined
        ;(used ??= []).push(groupId)
        return membership.value as Membership | null
      })
    if (quick === undefined) return undefined
    hits++
    if (listening) emit({ type: 'cache_hit', endpoint: 'me/groups' })
    for (const groupId of used ?? []) {
      // A `get` now, for the recency the async path would have given it.
      cache.get(keys.key(digest, 'membership', groupId))
      hits++
      if (listening) emit({ type: 'cache_hit', endpoint: 'me/groups/{groupid}', groupId })
    }
    return quick
  }

  function lookupsFor(token: string, digest: string, callOptions: ResolveOptions | undefined, at: number): DecisionLookups {
    let context: RequirementContext | undefined
    const lookups: DecisionLookups = {
      now: at,
      roles,
      groups: () => groupsIndex(token, digest, callOptions),
      membership: (groupId) => membershipOf(token, digest, groupId, callOptions),
      context: () =>
        (context ??= {
          now: new Date(at),
          groups: async () => (await groupsIndex(token, digest, callOptions)).list,
          membership: (groupId) => {
            assertGroupId(groupId)
            return membershipOf(token, digest, groupId, callOptions)
          },
          isMember: async (groupId, role) => {
            assertGroupId(groupId)
            if (role !== undefined && !roles.includes(role)) {
              throw new InvalidArgumentError(`Unknown role ${JSON.stringify(role)}`)
            }
            const index = await groupsIndex(token, digest, callOptions)
            const listed = findListed(index, groupId)
            if (listed !== undefined && judgeMembership(listed.membership, role, roles, at, listed) === 'ok') return true
            const membership = await membershipOf(token, digest, groupId, callOptions)
            return membership !== null && judgeMembership(membership, role, roles, at, listed) === 'ok'
          },
        }),
    }
    return lookups
  }

  return {
    roles,
    client,

    async groups(token, callOptions) {
      assertToken(token)
      const digest = keys.digest(token)
      if (callOptions?.showAll === true) {
        return lookup(
          token,
          digest,
          'groupsAll',
          undefined,
          (signal) => client.myGroups(token, { showAll: true, signal }),
          callOptions,
          positiveTtl,
          sharedList,
        ) as Promise<readonly GroupWithMembership[]>
      }
      return (await groupsIndex(token, digest, callOptions)).list
    },

    async membership(token, groupId, callOptions) {
      assertToken(token)
      assertGroupId(groupId)
      return membershipOf(token, keys.digest(token), groupId, callOptions)
    },

    check(token, requirement, callOptions) {
      try {
        assertToken(token)
        if (!accepted.has(requirement)) {
          assertRequirement(requirement)
          accepted.add(requirement)
        }
      } catch (error) {
        return Promise.reject(error)
      }
      const digest = keys.digest(token)
      const at = now()
      // Warm path: a fresh me/groups that proves the requirement settles it without any
      // further promise chain.
      const quick = fromFreshList(digest, requirement, callOptions, at)
      if (quick !== undefined) return Promise.resolve(quick)
      return decide(requirement, lookupsFor(token, digest, callOptions, at))
    },

    checkCached(token, requirement, callOptions) {
      // Only requirements `check` has validated for this resolver; anything else, and any
      // doubt, goes the long way through `check`.
      if (typeof token !== 'string' || token.length === 0 || !accepted.has(requirement)) return undefined
      return fromFreshList(keys.digest(token), requirement, callOptions, now())
    },

    invalidate(token) {
      if (token === undefined) {
        cache.clear()
        pool.clear()
        discardFlights(undefined)
        if (listening) emit({ type: 'invalidated', scope: 'all' })
        return
      }
      assertToken(token)
      dropToken(keys.digest(token))
      if (listening) emit({ type: 'invalidated', scope: 'token' })
    },

    assertRequirement,

    stats() {
      return {
        hits,
        misses,
        upstreamCalls,
        coalesced,
        staleServed,
        size: cache.size,
        inflight: inflight.size,
        retries: retried,
        rejected,
        circuit: breaker === undefined ? 'off' : breaker.state,
      }
    },

    async close() {
      if (ownsClient) await client.close()
    },
  }
}
