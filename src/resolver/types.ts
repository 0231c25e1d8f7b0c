/**
 * The resolver's public face: what `createMembershipResolver` returns, its counters and
 * its health.
 *
 * @module
 */
import type { CircuitState } from './upstream/circuit-breaker.js'
import type { GroupsClient } from '../client/groups-client.js'
import type { Decision } from '../decision/types.js'
import type { UpstreamErrorCode } from '../errors.js'
import type { Requirement } from '../decision/requirements.js'
import type { GroupWithMembership, Membership } from '../types.js'
import type { Explanation } from './explain.js'
import type { ResolveOptions } from './lookups.js'

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
  /** Lookups failed fast without a call: overload, open circuit, or the service's 429 back-off. */
  readonly rejected: number
  /** The circuit breaker's state, or `'off'`. */
  readonly circuit: CircuitState | 'off'
  /** Answers found in the shared tier (`sharedCache`), and not found there. */
  readonly sharedHits: number
  readonly sharedMisses: number
  /** Operations of the shared tier that failed or timed out (each a miss, never a decision). */
  readonly sharedErrors: number
}

/**
 * What a readiness probe needs to know, from {@link MembershipResolver.health}.
 *
 * @example
 * ```ts
 * app.get('/healthz', (req, res) => { const h = resolver.health(); res.status(h.status === 'down' ? 503 : 200).json(h) })
 * ```
 */
export interface ResolverHealth {
  /** `down` while the circuit is open; `degraded` after a recent upstream failure (the last minute), during a 429 back-off, with a half-open circuit or an unreachable shared tier; `ok` otherwise. */
  readonly status: 'ok' | 'degraded' | 'down'
  /** The circuit breaker's state (`closed` when it is off). */
  readonly circuit: CircuitState
  /** Upstream calls in flight now. */
  readonly inflight: number
  /** Answers cached in process now. */
  readonly cacheEntries: number
  /** The last upstream failure: its `UpstreamError` code, and when (ms since the epoch). */
  readonly lastFailure?: { readonly code: UpstreamErrorCode; readonly at: number }
  /** Present when a shared tier is configured. */
  readonly sharedTier?: 'ok' | 'unreachable'
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
   * `UpstreamError` when the answer is unknown, `InvalidTokenError` (401),
   * `InsufficientScopeError` (403) or `TokenMalformedError` (a token that is not an RFC 6750
   * `b64token`, refused before anything is looked up for it).
   */
  check(token: string, requirement: Requirement, options?: ResolveOptions): Promise<Decision>
  /**
   * {@link MembershipResolver.check} without a promise when it is not needed: the decision
   * itself (allowed or denied) when fresh cached answers settle the requirement, otherwise
   * the promise `check` gives. The token is digested once either way: a miss hands the
   * digest on to the cold path instead of starting over. This is what guards run
   * (`GuardCore.authorizeNow`); a warm denial is a decision at once, as a warm allow.
   * Never throws (invalid arguments reject). Optional: resolvers not made by
   * `createMembershipResolver` may lack it.
   *
   * It refuses a token that is not an RFC 6750 `b64token` (rejecting with
   * `TokenMalformedError`) before it looks anything up for it or sends it anywhere; from a
   * cache it may do so after the lookup, since a cached token was checked when its answers
   * were stored. A guard hands a resolver of one's own only checked tokens; a resolver made
   * by `createMembershipResolver` it asks through an internal entry that reads a header's
   * token in place, its characters checked on a miss.
   */
  checkNow?(token: string, requirement: Requirement, options?: ResolveOptions): Decision | Promise<Decision>
  /**
   * {@link MembershipResolver.check} with the tree of how the decision came about: each
   * part of the requirement, what it came to, the answers it read (cached or fetched; the
   * role, activity and dates of each membership) and `settled: true` on the parts the
   * decision rests on. Decided by the same rules, through the same cache, as `check`;
   * rejects as `check` does when the answer is unknown.
   *
   * The tree holds the user's own memberships: show it to the person who holds the token
   * (as `voot-guard check --explain` does), never in a response, a log line or telemetry.
   *
   * @example
   * ```ts
   * const { decision, tree } = await resolver.explain(token, group('fc:org:example.org', 'admin'))
   * ```
   */
  explain(token: string, requirement: Requirement, options?: ResolveOptions): Promise<Explanation>
  /**
   * Drops one token's cached answers, or every answer when called without a token. With a
   * shared tier, the promise settles once the tier dropped them and told the other
   * instances; it never rejects.
   */
  invalidate(token?: string): Promise<void>
  /** Throws `InvalidArgumentError` unless `requirement` is one this resolver can decide (known roles). */
  assertRequirement(requirement: Requirement): void
  /** Counters for metrics. */
  stats(): ResolverStats
  /** What a readiness probe needs: circuit, last failure, in-flight calls, cache size, shared tier. Synchronous and cheap. */
  health(): ResolverHealth
  /**
   * Asks the group service a public question (`grouptypes`, without a user's token) and
   * resolves when the answer proves a group service is there (a JSON answer, or a 401);
   * rejects with an `UpstreamError` whose message names the likely mistake otherwise.
   */
  verify(options?: { signal?: AbortSignal }): Promise<void>
  /** Closes the groups client if the resolver created it, and releases the shared tier's subscription. */
  close(): Promise<void>
}
