/**
 * The gate every call to the group service goes through: one flight per answer (concurrent
 * lookups share it), admission (the service's 429 back-off, the bound on calls in flight,
 * the circuit breaker), and retries within the call's deadline. A caller that gives up
 * (its signal aborts) stops waiting; the shared flight goes on for the others.
 *
 * @module
 */
import {
  circuitOutcome,
  createCircuitBreaker,
  type CircuitBreaker,
  type CircuitBreakerOptions,
  type CircuitChange,
  type CircuitPermit,
  type CircuitState,
} from './circuit-breaker.js'
import { raceAbort } from '../../client/abort-race.js'
import { AbortedError, UpstreamError } from '../../errors.js'
import { createRetrier, type RetryInfo } from './retry.js'

/**
 * One shared call under way, and whether its answer may still be stored.
 */
export interface Flight {
  readonly promise: Promise<unknown>
  /** Set when the cache was invalidated while the call was under way: do not store its answer. */
  discard: boolean
}

/**
 * Why no call may be made now, as the error to fail with: `ERR_UPSTREAM_RATE_LIMITED`,
 * `ERR_UPSTREAM_OVERLOADED` or `ERR_UPSTREAM_CIRCUIT_OPEN`.
 */
export type Admission = UpstreamError | CircuitPermit | undefined

/** Settings of {@link createUpstreamGate}, validated by the resolver. */
export interface UpstreamGateSettings {
  readonly maxInflight: number
  readonly retries: number
  readonly retryDelay: number
  /** The whole-call deadline a call and its retries share. */
  readonly budget: number
  readonly breaker: Required<CircuitBreakerOptions> | undefined
  readonly now: () => number
  readonly onCircuitChange: (change: CircuitChange) => void
}

/**
 * The upstream gate of one resolver.
 */
export interface UpstreamGate {
  /** The flight already under way for `key`, if any. */
  join(key: string): Flight | undefined
  /** Runs `work` as the flight of `key` until it settles. */
  start(key: string, work: (flight: Flight) => Promise<unknown>): Flight
  /**
   * Whether a call may be made now: a circuit permit (settle it with the call's outcome),
   * `undefined` (no breaker: go ahead), or the refusal to fail with.
   */
  admit(endpoint: string): Admission
  /** One call with its retries; `onRetry` hears of each retry. Settles `permit` with the outcome. */
  call<T>(
    fetch: (signal: AbortSignal | undefined) => Promise<T>,
    permit: CircuitPermit | undefined,
    onRetry: (info: RetryInfo) => void,
  ): Promise<T>
  /** Drops the flights whose key starts with `prefix` (all without one): their answers will not be stored. */
  discard(prefix: string | undefined): void
  /** Seconds left of the service's 429 back-off (0 when none). */
  rateLimitedFor(): number
  /** Flights under way now. */
  readonly inflight: number
  /** The breaker's state, or `'off'`. */
  readonly circuit: CircuitState | 'off'
}

/**
 * Creates an {@link UpstreamGate}.
 */
export function createUpstreamGate(settings: UpstreamGateSettings): UpstreamGate {
  const { now, maxInflight } = settings
  const flights = new Map<string, Flight>()
  // Flights under way, counted apart from the map: a discarded flight leaves the map (no
  // lookup may join it) but its call is still open at the service until it settles.
  let running = 0
  const retrier = createRetrier({ retries: settings.retries, delay: settings.retryDelay, budget: settings.budget })
  const breaker: CircuitBreaker | undefined =
    settings.breaker && createCircuitBreaker({ ...settings.breaker, now, onChange: settings.onCircuitChange })
  // A 429 is per client address at the real service: one token's 429 means every cold
  // lookup would get one, so the whole service is left alone until its Retry-After.
  let rateLimitedUntil = 0

  function rateLimitRefusal(endpoint: string): UpstreamError | undefined {
    if (rateLimitedUntil === 0) return undefined
    const left = rateLimitedUntil - now()
    if (!(left > 0)) {
      rateLimitedUntil = 0
      return undefined
    }
    const retryAfter = Math.ceil(left / 1000)
    return new UpstreamError(
      'ERR_UPSTREAM_RATE_LIMITED',
      `The group service rate-limited this application; waiting before asking about ${endpoint} again`,
      {
        endpoint,
        retryAfter,
        headers: { 'retry-after': String(retryAfter) },
      },
    )
  }

  return {
    join: (key) => flights.get(key),
    start(key, work) {
      const flight: Flight = { discard: false, promise: Promise.resolve() }
      // Registered before `work` starts: its admission counts itself among the flights.
      flights.set(key, flight)
      running++
      ;(flight as { promise: Promise<unknown> }).promise = work(flight)
      const done = (): void => {
        running--
        if (flights.get(key) === flight) flights.delete(key)
      }
      void flight.promise.then(done, done)
      return flight
    },
    admit(endpoint) {
      const refusal = rateLimitRefusal(endpoint)
      if (refusal !== undefined) return refusal
      if (running > maxInflight) {
        return new UpstreamError('ERR_UPSTREAM_OVERLOADED', 'Too many group service calls are in flight', { endpoint, retryAfter: 1 })
      }
      // Asked last: a permit is a promise to call (the one probe of a half-open circuit).
      if (breaker === undefined) return undefined
      return breaker.admit() ?? breaker.openError(endpoint)
    },
    call(fetch, permit, onRetry) {
      return retrier.run(fetch, onRetry).then(
        (value) => {
          permit?.settle('success')
          return value
        },
        (error: unknown) => {
          permit?.settle(circuitOutcome(error))
          if (error instanceof UpstreamError && error.code === 'ERR_UPSTREAM_RATE_LIMITED' && error.retryAfter !== undefined) {
            const until = now() + error.retryAfter * 1000
            if (until > rateLimitedUntil) rateLimitedUntil = until
          }
          throw error
        },
      )
    },
    discard(prefix) {
      for (const [key, flight] of flights) {
        if (prefix === undefined || key.startsWith(prefix)) {
          flight.discard = true
          flights.delete(key)
        }
      }
    },
    rateLimitedFor() {
      const left = rateLimitedUntil - now()
      return left > 0 ? Math.ceil(left / 1000) : 0
    },
    get inflight() {
      return running
    },
    get circuit() {
      return breaker === undefined ? 'off' : breaker.state
    },
  }
}

/**
 * Waits for `promise`, or rejects with `AbortedError` when `signal` aborts first (the
 * promise goes on for whoever else waits for it).
 */
export function waitFor<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  return signal === undefined ? promise : raceAbort(promise, signal, () => new AbortedError())
}
