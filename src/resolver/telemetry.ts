/**
 * Everything the resolver tells the outside about itself, from one place: the counters of
 * `stats()`, the `onEvent` events and the `voot-guard:resolve` tracing channel. Each
 * lookup step is recorded once, here; the lookup code never builds an event itself, and
 * nothing is built when nobody listens.
 *
 * @module
 */
import { channel, tracingChannel, type TracingChannelLike } from '../diagnostics-channel.js'
import type { CircuitChange } from './upstream/circuit-breaker.js'
import type { Decision } from '../decision/types.js'
import { describeRequirement, type Requirement } from '../decision/requirements.js'
import {
  CHANNELS,
  type AuthorizeContext,
  type CacheTier,
  type CircuitContext,
  type ResolveContext,
  type UpstreamContext,
} from '../tracing-channels.js'

/**
 * Something the resolver did, for logging and metrics. Events never carry a token. The
 * events of a service of `createServiceResolvers` name it (`service`).
 *
 * @example
 * ```ts
 * createMembershipResolver({ baseUrl, onEvent: (e) => { if (e.type === 'upstream_error') log.warn(e) } })
 * ```
 */
export type ResolverEvent = (
  | { readonly type: 'cache_hit' | 'cache_miss' | 'coalesced'; readonly endpoint: string; readonly groupId?: string }
  | {
      /** The shared tier (`sharedCache`) had the answer (`shared_hit`), or not (`shared_miss`). */
      readonly type: 'shared_hit' | 'shared_miss'
      readonly endpoint: string
      readonly groupId?: string
    }
  | {
      /** An operation of the shared tier failed or timed out: a miss, never a decision. */
      readonly type: 'shared_error'
      readonly operation: string
      readonly code: string
    }
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
      /** No call was made: too many in flight, the circuit is open, or the service said 429 and its Retry-After has not passed. */
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
) & {
  /** The name of the resolver's group service, for a service of `createServiceResolvers` (one `onEvent` may serve several); absent otherwise. */
  readonly service?: string
}

/** Where a lookup step happened: the endpoint template, and the group id when there is one. */
export interface Place {
  readonly endpoint: 'me/groups' | 'me/groups/{groupid}'
  readonly groupId?: string
}

/** The counters of `stats()` that telemetry keeps. */
export interface TelemetryCounts {
  hits: number
  misses: number
  sharedHits: number
  sharedMisses: number
  sharedErrors: number
  upstreamCalls: number
  coalesced: number
  staleServed: number
  retries: number
  rejected: number
}

/**
 * The resolver's telemetry: counters, events and the resolve channel.
 */
export interface Telemetry {
  readonly counts: Readonly<TelemetryCounts>
  hit(place: Place): void
  miss(place: Place): void
  coalesced(place: Place): void
  shared(place: Place, found: boolean): void
  sharedError(operation: string, code: string): void
  upstreamCall(): void
  upstreamResponse(place: Place, durationMs: number, outcome: 'ok' | 'not_found' | 'invalid_token' | 'insufficient_scope'): void
  upstreamError(place: Place, durationMs: number, code: string, upstreamStatus: number | undefined): void
  retry(place: Place, attempt: number, delayMs: number, code: string): void
  rejected(
    place: Place,
    code: 'ERR_UPSTREAM_OVERLOADED' | 'ERR_UPSTREAM_CIRCUIT_OPEN' | 'ERR_UPSTREAM_RATE_LIMITED',
    retryAfter: number,
  ): void
  stale(place: Place, ageMs: number): void
  invalidated(scope: 'token' | 'all'): void
  circuit(change: CircuitChange): void
  /**
   * Runs one lookup inside a `voot-guard:resolve` trace when the channel has subscribers
   * (the lookup fills the context's tier and upstream fields); otherwise just runs it.
   */
  traceLookup<T>(place: Place, lookup: (context: ResolveContext | undefined) => Promise<T>): Promise<T>
  /** Publishes a synchronous `voot-guard:resolve` trace of an answer the warm path read from L1. */
  traceWarmHit(place: Place): void
  /** Runs one upstream call (its retries inside) in a `voot-guard:upstream` trace when subscribed. */
  traceCall<T>(place: Place, call: () => Promise<T>): Promise<T>
  /**
   * Runs one cold decision inside a `voot-guard:authorize` trace when the channel has
   * subscribers (the lookups fill in the tier); otherwise just runs it.
   */
  traceDecision(requirement: Requirement, run: (context: AuthorizeContext | undefined) => Promise<Decision>): Promise<Decision>
  /**
   * Runs `inside` (the warm path's bookkeeping, whose resolve traces then nest under this one)
   * within a synchronous `voot-guard:authorize` trace of a decision made from L1, when the
   * channel has subscribers; otherwise just runs it.
   */
  traceWarmDecision(requirement: Requirement, decision: Decision, inside: () => void): void
}

const authorizeChannel = tracingChannel<AuthorizeContext>(CHANNELS.authorize)

/**
 * `channel.tracePromise(run, context)`, except that the context's `result` stays
 * `undefined`: Node copies the traced promise's value into the context, and a lookup's value
 * is the user's groups, which no context may hold (an APM agent may record the whole
 * context). The caller still gets the value; `result` is still set, so subscribers know the
 * call finished. `error` stays the failure itself: voot-guard's errors never quote a token or
 * the group service's answer, and subscribers read its `code`.
 */
function traceWithoutResult<C extends object, T>(channel: TracingChannelLike<C>, run: () => Promise<T>, context: C): Promise<T> {
  let value: T | undefined
  return channel
    .tracePromise(
      () =>
        run().then((answer) => {
          value = answer
        }),
      context,
    )
    .then(() => value as T)
}

const resolveChannel = tracingChannel<ResolveContext>(CHANNELS.resolve)
/** The traced function of a warm hit, which was read before the trace: made once, not per hit. */
const NOTHING = (): undefined => undefined
const upstreamChannel = tracingChannel<UpstreamContext>(CHANNELS.upstream)
const circuitChannel = channel(CHANNELS.circuit)

/**
 * Creates the {@link Telemetry} of one resolver. `service`, the name of the resolver's group
 * service among several (`createServiceResolvers`), goes on every context and event it
 * publishes: fixed for the resolver, so that nothing is computed for it per request.
 */
export function createTelemetry(onEvent: ((event: ResolverEvent) => void) | undefined, service: string | undefined): Telemetry {
  const counts: TelemetryCounts = {
    hits: 0,
    misses: 0,
    sharedHits: 0,
    sharedMisses: 0,
    sharedErrors: 0,
    upstreamCalls: 0,
    coalesced: 0,
    staleServed: 0,
    retries: 0,
    rejected: 0,
  }
  const deliver = (event: ResolverEvent): void => {
    try {
      onEvent?.(event)
    } catch {
      // A logging hook must never change an authorization outcome.
    }
  }
  const emit =
    service === undefined
      ? deliver
      : (event: ResolverEvent): void => {
          deliver({ ...event, service })
        }
  const listening = onEvent !== undefined

  return {
    counts,
    hit(place) {
      counts.hits++
      if (listening) emit({ type: 'cache_hit', ...place })
    },
    miss(place) {
      counts.misses++
      if (listening) emit({ type: 'cache_miss', ...place })
    },
    coalesced(place) {
      counts.coalesced++
      if (listening) emit({ type: 'coalesced', ...place })
    },
    shared(place, found) {
      if (found) counts.sharedHits++
      else counts.sharedMisses++
      if (listening) emit({ type: found ? 'shared_hit' : 'shared_miss', ...place })
    },
    sharedError(operation, code) {
      counts.sharedErrors++
      if (listening) emit({ type: 'shared_error', operation, code })
    },
    upstreamCall() {
      counts.upstreamCalls++
    },
    upstreamResponse(place, durationMs, outcome) {
      if (listening) emit({ type: 'upstream_response', ...place, durationMs, outcome })
    },
    upstreamError(place, durationMs, code, upstreamStatus) {
      if (!listening) return
      const base = { type: 'upstream_error', ...place, durationMs, code } as const
      emit(upstreamStatus === undefined ? base : { ...base, upstreamStatus })
    },
    retry(place, attempt, delayMs, code) {
      counts.retries++
      if (listening) emit({ type: 'upstream_retry', ...place, attempt, delayMs, code })
    },
    rejected(place, code, retryAfter) {
      counts.rejected++
      if (listening) emit({ type: 'upstream_rejected', ...place, code, retryAfter })
    },
    stale(place, ageMs) {
      counts.staleServed++
      if (listening) emit({ type: 'stale_served', ...place, ageMs })
    },
    invalidated(scope) {
      if (listening) emit({ type: 'invalidated', scope })
    },
    circuit(change) {
      if (circuitChannel.hasSubscribers) {
        const { state } = change
        circuitChannel.publish((service === undefined ? { state } : { state, service }) satisfies CircuitContext)
      }
      if (!listening) return
      if (change.state === 'open') emit({ type: 'circuit_open', failures: change.failures, cooldownMs: change.cooldownMs })
      else emit({ type: change.state === 'closed' ? 'circuit_closed' : 'circuit_half_open' })
    },
    traceLookup(place, lookup) {
      if (!resolveChannel.hasSubscribers) return lookup(undefined)
      const { endpoint } = place
      const context: ResolveContext = service === undefined ? { endpoint } : { endpoint, service }
      return traceWithoutResult(resolveChannel, () => lookup(context), context)
    },
    traceCall(place, call) {
      if (!upstreamChannel.hasSubscribers) return call()
      const { endpoint } = place
      return traceWithoutResult(upstreamChannel, call, service === undefined ? { endpoint } : { endpoint, service })
    },
    traceWarmHit(place) {
      if (!resolveChannel.start.hasSubscribers) return
      const { endpoint } = place
      const tier: CacheTier = 'l1'
      const context: ResolveContext = service === undefined ? { endpoint, tier } : { endpoint, tier, service }
      resolveChannel.traceSync(NOTHING, context)
    },
    traceDecision(requirement, run) {
      if (!authorizeChannel.hasSubscribers) return run(undefined)
      const described = describeRequirement(requirement)
      const context: AuthorizeContext = service === undefined ? { requirement: described } : { requirement: described, service }
      return traceWithoutResult(
        authorizeChannel,
        () =>
          run(context).then(
            (decision) => {
              context.outcome = decision.allowed ? 'allowed' : 'denied'
              context.reason = decision.reason
              return decision
            },
            (error: unknown) => {
              context.outcome = 'error'
              context.reason = typeof (error as { code?: unknown }).code === 'string' ? (error as { code: string }).code : 'ERR_INTERNAL'
              throw error
            },
          ),
        context,
      )
    },
    traceWarmDecision(requirement, decision, inside) {
      // `start` alone on the warm path: one check instead of five (a tracing subscriber
      // subscribes to every event of the channel, `start` among them).
      if (!authorizeChannel.start.hasSubscribers) {
        inside()
        return
      }
      const described = describeRequirement(requirement)
      const outcome = decision.allowed ? 'allowed' : 'denied'
      const { reason } = decision
      const tier: CacheTier = 'l1'
      const context: AuthorizeContext =
        service === undefined
          ? { requirement: described, outcome, reason, tier }
          : { requirement: described, outcome, reason, tier, service }
      authorizeChannel.traceSync(inside, context)
    },
  }
}
