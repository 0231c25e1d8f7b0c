/**
 * The metrics: decisions, cache lookups, upstream call duration, calls in flight and the
 * circuit's state. Attribute sets are built once per distinct value and reused: the warm
 * path records a decision and a lookup per request.
 *
 * @module
 */
import type { Attributes, Meter, ObservableResult } from '@opentelemetry/api'
import type { AuthorizeContext, CacheTier, CircuitContext, ResolveContext, UpstreamContext } from '../src/tracing-channels.js'
import {
  ATTR_CACHE_RESULT,
  ATTR_CACHE_TIER,
  ATTR_ENDPOINT,
  ATTR_ERROR_TYPE,
  ATTR_HTTP_STATUS,
  ATTR_OUTCOME,
  ATTR_REASON,
  OTHER_ERROR,
  decisionOf,
  lookupFailure,
} from './attributes.js'
import type { Traced } from './traced-calls.js'

/** The values of `voot_guard.circuit.state`. */
export const CIRCUIT_STATE_VALUES = Object.freeze({ closed: 0, 'half-open': 1, open: 2 } as const)

/**
 * Bucket bounds of `voot_guard.upstream.duration`, in seconds: those the semantic
 * conventions advise for `http.client.request.duration`.
 */
const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10]

/**
 * Records the metrics from finished traces and circuit changes.
 */
export interface MetricsRecorder {
  readonly decision: (traced: Traced<AuthorizeContext>) => void
  readonly lookup: (traced: Traced<ResolveContext>) => void
  readonly upstreamStarted: (traced: UpstreamContext) => void
  readonly upstreamFinished: (traced: UpstreamContext) => void
  readonly circuitChanged: (message: CircuitContext) => void
  /** Stops observing the circuit gauge. */
  readonly close: () => void
}

/** A cache of frozen attribute sets by a string key: few distinct values, one object each. */
function attributeSets(): (key: string, build: () => Attributes) => Attributes {
  const sets = new Map<string, Attributes>()
  return (key, build) => {
    let set = sets.get(key)
    if (set === undefined) {
      set = Object.freeze(build())
      sets.set(key, set)
    }
    return set
  }
}

const isCacheHit = (tier: CacheTier): boolean => tier === 'l1' || tier === 'l2'

/**
 * Creates the instruments on `meter` and returns what records into them.
 */
export function createMetricsRecorder(meter: Meter): MetricsRecorder {
  const decisions = meter.createCounter('voot_guard.decisions', {
    description: 'Decisions of voot-guard, by outcome and reason',
    unit: '{decision}',
  })
  const lookups = meter.createCounter('voot_guard.cache.lookups', {
    description: 'Lookups of one answer, by the tier that answered (hit: l1 or l2; miss: coalesced, upstream, or failed before any tier)',
    unit: '{lookup}',
  })
  const duration = meter.createHistogram('voot_guard.upstream.duration', {
    description: 'Duration of calls to the group service',
    unit: 's',
    advice: { explicitBucketBoundaries: DURATION_BUCKETS },
  })
  const active = meter.createUpDownCounter('voot_guard.upstream.active', {
    description: 'Calls to the group service in flight',
    unit: '{call}',
  })
  const circuit = meter.createObservableGauge('voot_guard.circuit.state', {
    description: 'State of the circuit breaker: 0 closed, 1 half-open, 2 open (the last change of any resolver)',
  })
  // Every circuit starts closed (and a resolver without a breaker stays closed).
  let circuitState: number = CIRCUIT_STATE_VALUES.closed
  const observeCircuit = (result: ObservableResult): void => {
    result.observe(circuitState)
  }
  circuit.addCallback(observeCircuit)

  const decisionSets = attributeSets()
  const lookupSets = attributeSets()
  const durationSets = attributeSets()
  const endpointSets = attributeSets()
  const endpointAttributes = (endpoint: string): Attributes => endpointSets(endpoint, () => ({ [ATTR_ENDPOINT]: endpoint }))

  return {
    decision(traced) {
      const { outcome, reason } = decisionOf(traced)
      if (outcome === undefined) return
      const key = `${outcome} ${reason ?? ''}`
      decisions.add(
        1,
        decisionSets(key, () => (reason === undefined ? { [ATTR_OUTCOME]: outcome } : { [ATTR_OUTCOME]: outcome, [ATTR_REASON]: reason })),
      )
    },
    lookup(traced) {
      const tier = traced.tier
      lookups.add(
        1,
        lookupSets(tier ?? '', () =>
          tier === undefined
            ? { [ATTR_CACHE_RESULT]: 'miss' }
            : { [ATTR_CACHE_TIER]: tier, [ATTR_CACHE_RESULT]: isCacheHit(tier) ? 'hit' : 'miss' },
        ),
      )
      // A coalesced lookup waited for another lookup's call: that call is measured once, there.
      const ms = traced.upstreamDurationMs
      if (ms === undefined || tier === 'coalesced') return
      const status = traced.upstreamStatus
      const failure = status === undefined ? (lookupFailure(traced) ?? OTHER_ERROR) : undefined
      const key = `${traced.endpoint} ${status ?? failure}`
      const attributes = durationSets(key, () =>
        status === undefined
          ? { [ATTR_ENDPOINT]: traced.endpoint, [ATTR_ERROR_TYPE]: failure }
          : { [ATTR_ENDPOINT]: traced.endpoint, [ATTR_HTTP_STATUS]: status },
      )
      duration.record(ms / 1000, attributes)
    },
    upstreamStarted(traced) {
      active.add(1, endpointAttributes(traced.endpoint))
    },
    upstreamFinished(traced) {
      active.add(-1, endpointAttributes(traced.endpoint))
    },
    circuitChanged(message) {
      const value = CIRCUIT_STATE_VALUES[message.state]
      if (value !== undefined) circuitState = value
    },
    close() {
      circuit.removeCallback(observeCircuit)
    },
  }
}
