/**
 * The membership resolver: the groups client behind a per-token cache with single-flight,
 * TTLs, negative caching, stale-if-error, a bound on upstream calls and an optional shared
 * tier. This module validates, wires the pieces together and is the public facade:
 * `store/` (L1), `lookups.ts` (L1, L2, upstream), `gate/` (coalescing,
 * admission, retries), `telemetry.ts` (events, stats, channels), `warm-view.ts` and
 * `../decision/` (the one decision engine).
 *
 * @module
 */
import { createGroupsClient, type GroupsClient } from '../client/groups-client.js'
import { openConextRootAbove } from '../client/service-root.js'
import { decide, type DecisionObserver } from '../decision/decide.js'
import { affiliationHint } from '../decision/affiliation-hint.js'
import type { Decision } from '../decision/types.js'
import { InvalidArgumentError, InvalidTokenError, UpstreamError, type UpstreamErrorCode } from '../errors.js'
import { assertGroupId } from '../group-id.js'
import { isRequirement, rolesOf, type Requirement } from '../decision/requirements.js'
import type { GroupWithMembership } from '../types.js'
import { tokenProblem } from '../token.js'
import { createAnswerStore } from './store/answer-store.js'
import { createDecisionLookups } from './decision-lookups.js'
import { createExplainer } from './explain.js'
import { createLookups, type ResolveOptions } from './lookups.js'
import { createMisconfigurationNotice, misconfigurationHint, strayGroupsHint } from './misconfiguration.js'
import { countResolverCreation, warnInsecureHttpInProduction } from './creation-warnings.js'
import { resolveResolverOptions, type MembershipResolverOptions } from './options.js'
import { createTelemetry } from './telemetry.js'
import type { MembershipResolver } from './types.js'
import { createUpstreamGate } from './upstream/upstream-gate.js'
import { createWarmView } from './warm-view.js'
import { registerCheckAt } from './check-at.js'

/** How long after an upstream failure `health()` still reads `degraded`. */
const DEGRADED_FOR = 60_000

/**
 * Creates a {@link MembershipResolver}.
 *
 * Defaults: `timeout` 5000 ms, `maxResponseBytes` 1 MiB, `cache.max` 10 000,
 * `cache.maxBytes` 64 MiB, `cache.ttl` 60 000 ms, `cache.negativeTtl` 10 000 ms,
 * `cache.staleIfError` 0, `roles` `['member', 'manager', 'admin', 'owner']`, `maxInflight`
 * 256, `retries` 1, `retryDelay` 10 ms, `circuitBreaker` off, no shared tier. Invalid or
 * unknown options throw `InvalidOptionError` naming them.
 *
 * Create it (or the guard that creates it) once, at start-up: a resolver per request has an
 * empty cache and connections of its own each time. 50 resolvers created for one `baseUrl`
 * within 10 seconds are taken for that mistake and warned of once, through `logger` or
 * `process.emitWarning` (code `VOOT_GUARD_PER_REQUEST`; not counted while `NODE_ENV` is `test`).
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
  return createServiceResolver(options, undefined)
}

/**
 * {@link createMembershipResolver} for one named service of `createServiceResolvers`:
 * `service` labels its telemetry (the tracing channels' contexts, its events). Internal: an
 * application names its services through `createServiceResolvers`.
 */
export function createServiceResolver(options: MembershipResolverOptions, service: string | undefined): MembershipResolver {
  const settings = resolveResolverOptions(options)
  const { roles, now, sharedCache: shared } = settings
  const ownsClient = !('myGroups' in settings.client)
  const client: GroupsClient = ownsClient ? createGroupsClient(settings.client) : settings.client
  const baseUrl = ownsClient ? options.baseUrl : undefined
  if (baseUrl !== undefined) {
    warnInsecureHttpInProduction(options.allowInsecureHttp, client.baseUrl, settings.logger)
    countResolverCreation(client.baseUrl, settings.logger)
  }

  const telemetry = createTelemetry(settings.onEvent, service)
  // Keyed by the in-process digest with or without a shared tier: a warm request computes
  // no fleet-wide token id; the cold path does, and the store keeps it with the token.
  const store = createAnswerStore(settings)
  const gate = createUpstreamGate({
    ...settings,
    onCircuitChange: (change) => {
      telemetry.circuit(change)
    },
  })
  const notice = createMisconfigurationNotice(baseUrl, settings.logger)
  let lastFailure: { code: UpstreamErrorCode; at: number } | undefined
  const lookup = createLookups({
    ...settings,
    store,
    gate,
    telemetry,
    shared,
    onFailure: (error) => {
      if (error instanceof UpstreamError) lastFailure = { code: error.code, at: now() }
      notice(error)
    },
  })
  const lookupsFor = createDecisionLookups(client, roles, lookup)
  const warm = createWarmView(store, telemetry, roles)
  // Made once: the warm path allocates nothing per request.
  const recordWarmHits = (): void => {
    warm.recordHits()
  }
  const stopSignals = shared?.subscribe((signal) => {
    if (signal.type === 'error') telemetry.sharedError(signal.operation, signal.code)
    else if (signal.tokenId === undefined) dropAll()
    else {
      // One map lookup when the id names no token here.
      const digest = store.digestOf(signal.tokenId)
      if (digest !== undefined) dropToken(digest, true)
    }
  })

  function dropAll(): void {
    store.clear()
    gate.discard(undefined)
  }
  function dropToken(digest: string, keepMarker: boolean): void {
    store.dropToken(digest, keepMarker)
    gate.discard(store.prefixOf(digest))
  }

  function assertToken(token: unknown): asserts token is string {
    if (typeof token !== 'string' || token.length === 0) throw new InvalidArgumentError('A token must be a non-empty string')
  }

  // Requirements are frozen and the roles fixed, so a requirement valid once for this
  // resolver stays valid: it is validated once (when its route is declared), not on every request.
  const accepted = new WeakSet<Requirement>()

  function assertRequirement(requirement: Requirement): void {
    if (accepted.has(requirement)) return
    if (!isRequirement(requirement)) throw new InvalidArgumentError('Not a requirement built by voot-guard (use group(), anyOf(), ...)')
    for (const role of rolesOf(requirement)) {
      if (!roles.includes(role))
        throw new InvalidArgumentError(
          `Unknown role ${JSON.stringify(role)}: the resolver's roles are ${roles.join(' < ')}${affiliationHint(role)}`,
        )
    }
    accepted.add(requirement)
  }

  /**
   * The decision fresh cached answers give, or `undefined`. `digest` is the request's one
   * digest of the token, computed by the caller and reused by the cold path. Hits are
   * counted by {@link used}, once the caller keeps the decision.
   */
  // eslint-disable-next-line max-params -- the warm path's inputs, and explain's observer
  function warmDecision(
    digest: string,
    requirement: Requirement,
    at: number,
    callOptions: ResolveOptions | undefined,
    observer?: DecisionObserver,
  ): Decision | undefined {
    const expiresAt = callOptions?.tokenExpiresAt
    // Written as `!(a < b)` so that a NaN expiry counts as expired: the cold path refuses it.
    if (expiresAt !== undefined && !(at < expiresAt)) return undefined
    return warm.decide(digest, requirement, at, observer)
  }

  // `explain` decides as `check` does: from fresh cached answers when they settle it, else cold.
  const explainFor = createExplainer(client, roles, lookup, (forToken, requirement, observer) =>
    warmDecision(forToken.digest, requirement, forToken.at, forToken.options, observer),
  )

  /** Records a warm decision that is given out: its trace and its cache hits. */
  function used(requirement: Requirement, decision: Decision): Decision {
    telemetry.traceWarmDecision(requirement, decision, recordWarmHits)
    return decision
  }

  /**
   * `check` after validation, for the token that starts at `from` in `source` (0: the
   * whole string; a header's token is read in place): the warm decision at once, else the
   * cold one, from one digest of the token.
   */
  function checkValid(
    source: string,
    from: number,
    requirement: Requirement,
    callOptions: ResolveOptions | undefined,
  ): Decision | Promise<Decision> {
    const at = now()
    const digest = store.digest(source, from)
    const quick = warmDecision(digest, requirement, at, callOptions)
    if (quick !== undefined) return used(requirement, quick)
    const token = from === 0 ? source : source.slice(from)
    // The token's form is checked here, on a miss, and not before the warm attempt: a token
    // whose answers are cached passed this check when they were stored, and the guard hands
    // over a header's token unchecked (`isBearerCandidate` in ../token.ts). Nothing is looked
    // up, sent or stored for a malformed one.
    const malformed = tokenProblem(token)
    if (malformed !== undefined) return Promise.reject(malformed)
    // The miss hands on what the warm attempt computed: the digest and the instant.
    return telemetry.traceDecision(requirement, (decision) =>
      decide(requirement, lookupsFor({ token, digest, options: callOptions, at, slowest: decision })),
    )
  }

  /** Validates `check`'s arguments (a requirement once per resolver); the error, or `undefined`. */
  function invalidCheck(token: unknown, requirement: Requirement): unknown {
    try {
      assertToken(token)
      assertRequirement(requirement)
    } catch (error) {
      return error
    }
    return undefined
  }

  const resolver: MembershipResolver = {
    roles,
    client,

    async groups(token, callOptions) {
      assertToken(token)
      const digest = store.digest(token)
      const showAll = callOptions?.showAll === true
      const answer = await lookup({
        token,
        digest,
        kind: showAll ? 'groupsAll' : 'groups',
        groupId: undefined,
        options: callOptions,
        fetch: (signal) => client.myGroups(token, showAll ? { showAll, signal } : { signal }),
      })
      return showAll ? (answer as readonly GroupWithMembership[]) : (answer as { list: readonly GroupWithMembership[] }).list
    },

    async membership(token, groupId, callOptions) {
      assertToken(token)
      assertGroupId(groupId)
      return lookupsFor({ token, digest: store.digest(token), options: callOptions, at: now() }).membership(groupId)
    },

    check(token, requirement, callOptions) {
      const invalid = invalidCheck(token, requirement)
      if (invalid !== undefined) return Promise.reject(invalid)
      const decided = checkValid(token, 0, requirement, callOptions)
      return decided instanceof Promise ? decided : Promise.resolve(decided)
    },

    checkNow(token, requirement, callOptions) {
      const invalid = invalidCheck(token, requirement)
      return invalid === undefined ? checkValid(token, 0, requirement, callOptions) : Promise.reject(invalid)
    },

    explain(token, requirement, callOptions) {
      const invalid = invalidCheck(token, requirement)
      if (invalid !== undefined) return Promise.reject(invalid)
      return explainFor({ token, digest: store.digest(token), options: callOptions, at: now() }, requirement)
    },

    async invalidate(token) {
      if (token === undefined) {
        dropAll()
        telemetry.invalidated('all')
        await shared?.invalidate()
        return
      }
      assertToken(token)
      dropToken(store.digest(token), false)
      telemetry.invalidated('token')
      await shared?.invalidate(shared.tokenId(token))
    },

    assertRequirement,

    stats() {
      return { ...telemetry.counts, size: store.size, inflight: gate.inflight, circuit: gate.circuit }
    },

    health() {
      const circuit = gate.circuit === 'off' ? 'closed' : gate.circuit
      const sharedTier = shared?.health()
      const recent = lastFailure !== undefined && now() - lastFailure.at < DEGRADED_FOR
      const backingOff = gate.rateLimitedFor() > 0
      const status =
        circuit === 'open' ? 'down' : recent || backingOff || circuit === 'half-open' || sharedTier === 'unreachable' ? 'degraded' : 'ok'
      return {
        status,
        circuit,
        inflight: gate.inflight,
        cacheEntries: store.size,
        ...(lastFailure === undefined ? {} : { lastFailure: { ...lastFailure } }),
        ...(sharedTier === undefined ? {} : { sharedTier }),
      }
    },

    async verify(verifyOptions) {
      const signal = verifyOptions?.signal
      try {
        await client.groupTypes(signal === undefined ? {} : { signal })
      } catch (error) {
        // A 401 to a call without a token is what a group service answers: it is there,
        // unless it is OpenConext's 401 to any path, under a stray /groups.
        if (error instanceof InvalidTokenError) {
          const root = await openConextRootAbove(client, signal)
          if (root === undefined) return
          throw new UpstreamError('ERR_UPSTREAM_STATUS', strayGroupsHint(baseUrl, root), { endpoint: 'grouptypes', upstreamStatus: 401 })
        }
        const found = misconfigurationHint(error, baseUrl)
        if (found !== undefined && error instanceof UpstreamError) {
          throw new UpstreamError(error.code, `The group service at baseUrl does not answer like one: ${found.hint}`, {
            ...(error.endpoint === undefined ? {} : { endpoint: error.endpoint }),
            ...(error.upstreamStatus === undefined ? {} : { upstreamStatus: error.upstreamStatus }),
            cause: error,
          })
        }
        throw error
      }
    },

    async close() {
      stopSignals?.()
      await shared?.close()
      if (ownsClient) await client.close()
    },
  }
  registerCheckAt(resolver, (source, from, requirement, callOptions) => {
    // A token that runs to the end of `source`: not empty, and `from` within it.
    const invalid =
      from >= 0 && from < source.length ? invalidCheck(source, requirement) : new InvalidArgumentError('A token must be a non-empty string')
    return invalid === undefined ? checkValid(source, from, requirement, callOptions) : Promise.reject(invalid)
  })
  return resolver
}

export type { CacheOptions, MembershipResolverOptions, ResolverLogger } from './options.js'
export type { ResolveOptions } from './lookups.js'
export type {
  ExplainedAnswer,
  ExplainedBranch,
  ExplainedLeaf,
  ExplainedMembership,
  ExplainedNode,
  ExplainedPart,
  Explanation,
} from './explain.js'
export type { MembershipResolver, ResolverHealth, ResolverStats } from './types.js'
export type { ResolverEvent } from './telemetry.js'
export { MISCONFIGURED_WARNING } from './misconfiguration.js'
