/**
 * One cached lookup of one answer for one token: the in-process store (L1), then the
 * shared tier (L2, when configured), then the group service through the upstream gate;
 * on a failure, a stale answer within `staleIfError`. Every step is recorded by telemetry.
 *
 * @module
 */
import { InvalidTokenError, UpstreamError, VootError } from '../errors.js'
import type { SharedCache, SharedCacheKey, SharedEntry } from '../shared-cache.js'
import { tokenExpiry } from './store/token-expiry.js'
import type { CacheTier, ResolveContext } from '../tracing-channels.js'
import type { AnswerKind, AnswerStore } from './store/answer-store.js'
import type { Place, Telemetry } from './telemetry.js'
import { waitFor, type Flight, type UpstreamGate } from './upstream/upstream-gate.js'

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
 * One lookup to make.
 */
export interface Lookup {
  readonly token: string
  readonly digest: string
  readonly kind: AnswerKind
  readonly groupId: string | undefined
  readonly options: ResolveOptions | undefined
  /** The upstream call, given the retry's share of the deadline (never the caller's signal: the call is shared). */
  readonly fetch: (signal: AbortSignal | undefined) => Promise<unknown>
  /**
   * Learns the slowest tier the lookups of one decision needed, if anyone asks: the traced
   * decision's context, or `explain`'s record of one lookup.
   */
  readonly slowest?: SlowestTier | undefined
  /** The token's JWT `exp` (see `tokenExpiry`), read once for every lookup of one decision; read here when absent. */
  readonly jwtExpiry?: (() => number | undefined) | undefined
  /**
   * Shared by the lookups of one decision: the shared tier's token id, computed by the
   * first of them that asks the tier, so a cold decision computes it once; without it,
   * each cold lookup computes its own.
   */
  readonly sharedId?: { tokenId?: string } | undefined
}

/**
 * What learns the slowest tier (`l1` < `coalesced` < `l2` < `upstream`) some lookups needed:
 * an authorize trace's context is one.
 */
export interface SlowestTier {
  tier?: CacheTier | undefined
}

/** One cold lookup under way: what it is for, its flight, and its trace. */
interface Attempt {
  readonly lookup: Lookup
  readonly place: Place
  readonly self: Flight
  /** When the token expires: nothing is cached past it. */
  readonly deadline: number
  readonly context: ResolveContext | undefined
  /** With a shared tier: the token's fleet-wide id, computed once per cold attempt (never on the warm path). */
  readonly tokenId: string | undefined
  /**
   * The shared tier's key of the answer, made once per attempt: the tier derives its names
   * from it once, and writes the answer only under the token generation it read with it.
   */
  readonly sharedKey: SharedCacheKey | undefined
}

const TIER_RANK: Readonly<Record<CacheTier, number>> = { l1: 0, coalesced: 1, l2: 2, upstream: 3 }

/** Records where an answer came from, on the lookup's trace and on what learns the slowest tier. */
function mark(lookup: Lookup, context: ResolveContext | undefined, tier: CacheTier): void {
  if (context !== undefined) context.tier = tier
  const slowest = lookup.slowest
  if (slowest !== undefined && (slowest.tier === undefined || TIER_RANK[tier] > TIER_RANK[slowest.tier])) slowest.tier = tier
}

/** What the lookups are built from. */
export interface LookupParts {
  readonly store: AnswerStore
  readonly gate: UpstreamGate
  readonly telemetry: Telemetry
  readonly shared: SharedCache | undefined
  readonly now: () => number
  readonly ttl: number
  readonly negativeTtl: number
  /** Hears of every upstream failure (the misconfiguration notice, health). */
  readonly onFailure: (error: unknown) => void
}

/**
 * The lookup function of one resolver.
 */
export function createLookups(parts: LookupParts): (lookup: Lookup) => Promise<unknown> {
  const { store, gate, telemetry, shared, now } = parts

  const placeOf = (lookup: Lookup): Place =>
    lookup.groupId === undefined ? { endpoint: 'me/groups' } : { endpoint: 'me/groups/{groupid}', groupId: lookup.groupId }
  const lifeOf = (answer: unknown): number => (answer === null ? parts.negativeTtl : parts.ttl)
  const sharedKey = (lookup: Lookup, tokenId: string): SharedCacheKey =>
    lookup.groupId === undefined ? { tokenId, kind: lookup.kind } : { tokenId, kind: lookup.kind, groupId: lookup.groupId }

  function tokenDeadline(lookup: Lookup): number {
    const given = lookup.options?.tokenExpiresAt
    const fromJwt = lookup.jwtExpiry === undefined ? tokenExpiry(lookup.token) : lookup.jwtExpiry()
    if (given === undefined) return fromJwt ?? Infinity
    return fromJwt === undefined ? given : Math.min(given, fromJwt)
  }

  function run(lookup: Lookup, place: Place, context: ResolveContext | undefined): Promise<unknown> {
    const at = now()
    // A token past the expiry the caller knows of gets nothing, not even a cached answer.
    const expiresAt = lookup.options?.tokenExpiresAt
    if (expiresAt !== undefined && !(at < expiresAt)) return Promise.reject(new InvalidTokenError('The access token has expired'))
    const entry = store.fresh(lookup.digest, lookup.kind, lookup.groupId, at)
    if (entry !== undefined) {
      telemetry.hit(place)
      mark(lookup, context, 'l1')
      return Promise.resolve(entry.value)
    }
    telemetry.miss(place)
    if (store.isMarkedInvalid(lookup.digest, at)) return Promise.reject(new InvalidTokenError())
    const deadline = tokenDeadline(lookup)
    if (deadline <= at) return Promise.reject(new InvalidTokenError('The access token has expired'))

    const key = store.keyOf(lookup.digest, lookup.kind, lookup.groupId)
    const running = gate.join(key)
    if (running !== undefined) {
      telemetry.coalesced(place)
      mark(lookup, context, 'coalesced')
      return waitFor(running.promise, lookup.options?.signal)
    }
    const flight = gate.start(key, (self) => {
      if (shared === undefined) return callUpstream({ lookup, place, self, deadline, context, tokenId: undefined, sharedKey: undefined })
      // The fleet-wide id, only now that the tier is asked; the store keeps it with the
      // token while this lookup runs and while the token has entries, so that another
      // instance's invalidation, which names the id, finds them.
      const memo = lookup.sharedId
      const tokenId = memo === undefined ? shared.tokenId(lookup.token) : (memo.tokenId ??= shared.tokenId(lookup.token))
      const release = store.hold(lookup.digest, tokenId)
      const attempt: Attempt = { lookup, place, self, deadline, context, tokenId, sharedKey: sharedKey(lookup, tokenId) }
      return fill(shared, attempt, attempt.sharedKey ?? sharedKey(lookup, tokenId)).finally(release)
    })
    return waitFor(flight.promise, lookup.options?.signal)
  }

  /** The shared tier's answer, another instance's (when it holds the lock), or our own call. */
  async function fill(tier: SharedCache, attempt: Attempt, key: SharedCacheKey): Promise<unknown> {
    const { lookup, place, self, context } = attempt
    // Read at once with the answer: another instance's 401 for this token (its revocation).
    const [hit, refused] = await Promise.all([tier.get(key), tier.get({ tokenId: key.tokenId, kind: 'invalid' })])
    telemetry.shared(place, hit !== undefined || refused !== undefined)
    if (refused !== undefined) {
      mark(lookup, context, 'l2')
      if (!self.discard) {
        store.markInvalid(lookup.digest, now())
        gate.discard(store.prefixOf(lookup.digest))
      }
      throw new InvalidTokenError()
    }
    if (hit !== undefined) return fromShared(attempt, hit)
    const lock = await tier.acquire(key)
    if (!lock.owned) {
      const filled = await tier.waitFor(key)
      if (filled !== undefined) return fromShared(attempt, filled)
    }
    try {
      return await callUpstream(attempt)
    } finally {
      if (lock.owned) void lock.release()
    }
  }

  function fromShared(attempt: Attempt, found: SharedEntry): unknown {
    const { lookup, self, deadline, context } = attempt
    mark(lookup, context, 'l2')
    const at = now()
    // The L1 copy never outlives what the shared tier had left, nor the expiry its writer gave it.
    const life = Math.min(lifeOf(found.value), found.ttlMs)
    return store.put({
      digest: lookup.digest,
      kind: lookup.kind,
      groupId: lookup.groupId,
      answer: found.value,
      at,
      life,
      deadline,
      keep: !self.discard,
    })
  }

  async function callUpstream(attempt: Attempt): Promise<unknown> {
    const { lookup, place, self, deadline, context } = attempt
    const admission = gate.admit(place.endpoint)
    if (admission instanceof UpstreamError) {
      const code = admission.code as 'ERR_UPSTREAM_OVERLOADED' | 'ERR_UPSTREAM_CIRCUIT_OPEN' | 'ERR_UPSTREAM_RATE_LIMITED'
      telemetry.rejected(place, code, admission.retryAfter ?? 1)
      return staleOr(attempt, admission)
    }
    telemetry.upstreamCall()
    mark(lookup, context, 'upstream')
    const started = now()
    let answer: unknown
    try {
      answer = await telemetry.traceCall(place, () =>
        gate.call(lookup.fetch, admission, (info) => {
          telemetry.retry(place, info.attempt, info.delayMs, info.error.code)
        }),
      )
    } catch (error) {
      const durationMs = now() - started
      if (context !== undefined) context.upstreamDurationMs = durationMs
      return failed(attempt, error, durationMs)
    }
    const done = now()
    if (context !== undefined) {
      context.upstreamDurationMs = done - started
      context.upstreamStatus = answer === null ? 404 : 200
    }
    telemetry.upstreamResponse(place, done - started, answer === null ? 'not_found' : 'ok')
    const life = lifeOf(answer)
    const prepared = store.put({
      digest: lookup.digest,
      kind: lookup.kind,
      groupId: lookup.groupId,
      answer,
      at: done,
      life,
      deadline,
      keep: !self.discard,
    })
    if (shared !== undefined && attempt.sharedKey !== undefined && !self.discard && life > 0 && done < deadline) {
      void shared.set(attempt.sharedKey, answer, Math.min(life, deadline - done))
    }
    return prepared
  }

  function failed(attempt: Attempt, error: unknown, durationMs: number): unknown {
    const { lookup, place, self, context } = attempt
    const at = now()
    if (error instanceof InvalidTokenError) {
      if (context !== undefined) context.upstreamStatus = 401
      telemetry.upstreamResponse(place, durationMs, 'invalid_token')
      if (!self.discard) revoke(lookup.digest, attempt.tokenId, at)
      throw error
    }
    if (error instanceof UpstreamError) {
      if (context !== undefined && error.upstreamStatus !== undefined) context.upstreamStatus = error.upstreamStatus
      telemetry.upstreamError(place, durationMs, error.code, error.upstreamStatus)
      parts.onFailure(error)
      return staleOr(attempt, error)
    }
    if (error instanceof VootError) {
      if (context !== undefined) context.upstreamStatus = error.status
      telemetry.upstreamResponse(place, durationMs, 'insufficient_scope')
    }
    throw error
  }

  function staleOr(attempt: Attempt, error: UpstreamError): unknown {
    const { lookup, place, context } = attempt
    const at = now()
    const stale = store.stale(lookup.digest, lookup.kind, lookup.groupId, at)
    if (stale === undefined) {
      if (context !== undefined) context.errorCode = error.code
      throw error
    }
    telemetry.stale(place, at - stale.storedAt)
    mark(lookup, context, 'l1')
    return stale.value
  }

  /** A 401: nothing cached for the token is served again, here or (through the shared tier) on any instance. */
  function revoke(digest: string, tokenId: string | undefined, at: number): void {
    store.markInvalid(digest, at)
    gate.discard(store.prefixOf(digest))
    if (shared !== undefined && tokenId !== undefined) {
      const tier = shared
      // Every instance drops its answers (and the tier the token's generation, so that no
      // value written before is accepted again); the marker is written after, as
      // invalidate drops it too.
      void tier.invalidate(tokenId).then(() => tier.set({ tokenId, kind: 'invalid' }, true, parts.negativeTtl))
    }
  }

  return (lookup) => {
    const place = placeOf(lookup)
    return telemetry.traceLookup(place, (context) => run(lookup, place, context))
  }
}
