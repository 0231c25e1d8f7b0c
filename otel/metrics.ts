/**
 * The metrics: decisions, cache lookups, upstream call duration, calls in flight and the
 * circuit's state. Attribute sets are built once per distinct value and reused. A resolver
 * of one of several services (`createServiceResolvers`) puts its service's name on every
 * context it publishes; its points carry it as `voot_guard.service`, counted apart.
 *
 * Decisions and lookups, which the warm path records on every request, are counted here
 * (one increment in a map of a few entries) and read by the SDK at each collection through
 * observable counters: the same monotonic sums, by the same attributes, without a call
 * into the SDK per request, which would cost several times the decision itself.
 *
 * @module
 */
import type { Attributes, Meter, ObservableResult } from '@opentelemetry/api'
import type { AuthorizeContext, CacheTier, CircuitContext, ResolveContext, UpstreamContext } from '../src/index.js'
import {
  ATTR_CACHE_RESULT,
  ATTR_CACHE_TIER,
  ATTR_ENDPOINT,
  ATTR_ERROR_TYPE,
  ATTR_HTTP_STATUS,
  ATTR_SERVICE,
  OTHER_ERROR,
  decisionAttributes,
  decisionOf,
  lookupFailure,
  withService,
} from './attributes.js'
import type { Traced } from './traced-calls.js'

/**
 * The values of `voot_guard.circuit.state`.
 *
 * @example
 * ```ts
 * if (gauge.value === CIRCUIT_STATE_VALUES.open) page('the group service is failing')
 * ```
 */
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
  /** Stops observing the circuit gauge and the counts. */
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

/** The counts of one service in `byService`, made at its first point. */
function ofService<T>(byService: Map<string, Map<string, T>>, service: string): Map<string, T> {
  let counts = byService.get(service)
  if (counts === undefined) byService.set(service, (counts = new Map<string, T>()))
  return counts
}

/** A count of one attribute set. */
interface Count {
  readonly attributes: Attributes
  value: number
}

/** Reports every count of `counts` (nested maps of {@link Count}) to an observable counter. */
function observeAll(counts: ReadonlyMap<unknown, Count | ReadonlyMap<unknown, Count>>, result: ObservableResult): void {
  for (const entry of counts.values()) {
    if (entry instanceof Map) observeAll(entry as ReadonlyMap<unknown, Count>, result)
    else result.observe((entry as Count).value, (entry as Count).attributes)
  }
}

/**
 * Creates the instruments on `meter` and returns what records into them.
 */
export function createMetricsRecorder(meter: Meter): MetricsRecorder {
  const decisions = meter.createObservableCounter('voot_guard.decisions', {
    description: 'Decisions of voot-guard, by outcome and reason',
    unit: '{decision}',
  })
  const lookups = meter.createObservableCounter('voot_guard.cache.lookups', {
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
  // Every circuit starts closed (and a resolver without a breaker stays closed). The
  // resolvers without a service share the series without attributes; each service of
  // several has its own, from its breaker's first change on.
  let circuitState: number = CIRCUIT_STATE_VALUES.closed
  const serviceCircuits = new Map<string, { readonly attributes: Attributes; value: number }>()
  const observeCircuit = (result: ObservableResult): void => {
    result.observe(circuitState)
    for (const { attributes, value } of serviceCircuits.values()) result.observe(value, attributes)
  }
  circuit.addCallback(observeCircuit)

  // By outcome, then reason; by tier ('' when no tier answered). Those of resolvers without
  // a service, then those of each service (looked up only for a service's own points).
  const decisionCounts = new Map<string, Map<string | undefined, Count>>()
  const lookupCounts = new Map<string, Count>()
  const serviceDecisionCounts = new Map<string, Map<string, Map<string | undefined, Count>>>()
  const serviceLookupCounts = new Map<string, Map<string, Count>>()
  const decisionCountsOf = (service: string | undefined): Map<string, Map<string | undefined, Count>> =>
    service === undefined ? decisionCounts : ofService(serviceDecisionCounts, service)
  const lookupCountsOf = (service: string | undefined): Map<string, Count> =>
    service === undefined ? lookupCounts : ofService(serviceLookupCounts, service)
  const observeDecisions = (result: ObservableResult): void => {
    observeAll(decisionCounts, result)
    for (const counts of serviceDecisionCounts.values()) observeAll(counts, result)
  }
  const observeLookups = (result: ObservableResult): void => {
    observeAll(lookupCounts, result)
    for (const counts of serviceLookupCounts.values()) observeAll(counts, result)
  }
  decisions.addCallback(observeDecisions)
  lookups.addCallback(observeLookups)

  const durationSets = attributeSets()
  const endpointSets = attributeSets()
  const endpointAttributes = (traced: UpstreamContext): Attributes => {
    const { endpoint, service } = traced
    return endpointSets(service === undefined ? endpoint : `${endpoint} ${service}`, () =>
      withService({ [ATTR_ENDPOINT]: endpoint }, service),
    )
  }

  return {
    decision(traced) {
      const decision = decisionOf(traced)
      const { outcome, reason } = decision
      if (outcome === undefined) return
      const counts = decisionCountsOf(decision.service)
      let byReason = counts.get(outcome)
      if (byReason === undefined) counts.set(outcome, (byReason = new Map<string | undefined, Count>()))
      const count = byReason.get(reason)
      if (count !== undefined) count.value++
      else byReason.set(reason, { attributes: Object.freeze(decisionAttributes(decision)), value: 1 })
    },
    lookup(traced) {
      const { tier, service } = traced
      const counts = lookupCountsOf(service)
      const count = counts.get(tier ?? '')
      if (count !== undefined) count.value++
      else {
        const attributes: Attributes =
          tier === undefined
            ? { [ATTR_CACHE_RESULT]: 'miss' }
            : { [ATTR_CACHE_TIER]: tier, [ATTR_CACHE_RESULT]: isCacheHit(tier) ? 'hit' : 'miss' }
        counts.set(tier ?? '', { attributes: Object.freeze(withService(attributes, service)), value: 1 })
      }
      // A coalesced lookup waited for another lookup's call: that call is measured once, there.
      const ms = traced.upstreamDurationMs
      if (ms === undefined || tier === 'coalesced') return
      const status = traced.upstreamStatus
      const failure = status === undefined ? (lookupFailure(traced) ?? OTHER_ERROR) : undefined
      const key = service === undefined ? `${traced.endpoint} ${status ?? failure}` : `${traced.endpoint} ${status ?? failure} ${service}`
      const attributes = durationSets(key, () =>
        withService(
          status === undefined
            ? { [ATTR_ENDPOINT]: traced.endpoint, [ATTR_ERROR_TYPE]: failure }
            : { [ATTR_ENDPOINT]: traced.endpoint, [ATTR_HTTP_STATUS]: status },
          service,
        ),
      )
      duration.record(ms / 1000, attributes)
    },
    upstreamStarted(traced) {
      active.add(1, endpointAttributes(traced))
    },
    upstreamFinished(traced) {
      active.add(-1, endpointAttributes(traced))
    },
    circuitChanged(message) {
      const value = CIRCUIT_STATE_VALUES[message.state]
      if (value === undefined) return
      const { service } = message
      if (service === undefined) {
        circuitState = value
        return
      }
      const series = serviceCircuits.get(service)
      if (series !== undefined) series.value = value
      else serviceCircuits.set(service, { attributes: Object.freeze({ [ATTR_SERVICE]: service }), value })
    },
    close() {
      circuit.removeCallback(observeCircuit)
      decisions.removeCallback(observeDecisions)
      lookups.removeCallback(observeLookups)
    },
  }
}
