/**
 * An opt-in circuit breaker for the group service.
 *
 * When the service is down, every cache miss would otherwise wait for its own timeout and
 * add load to a service that is trying to come back. After `failureThreshold` failures in
 * a row the circuit opens: calls fail at once (503 `ERR_UPSTREAM_CIRCUIT_OPEN`) for
 * `cooldown` ms. Then exactly one probe call is let through; its success closes the
 * circuit, its failure opens it again for another cool-down.
 *
 * Only failures of the service count: a timeout, a connection refused or reset, a 5xx, a
 * 429. Answers about a token or a group (401, 403, 404, other 4xx) prove the service
 * works, so nobody can open the circuit by spraying bad tokens or unknown group ids. An
 * answer whose body is too large or unreadable, or a redirect, is a 503 for the lookup
 * that got it but counts neither way: such an answer can be determined by one token's
 * data (a user in thousands of groups, a login proxy redirecting one bad token), and one
 * user must not be able to pause every other user's lookups.
 *
 * @module
 */
import { InvalidOptionError, UpstreamError } from '../../errors.js'
import { integerOption, objectOption, rejectUnknownKeys } from '../../option-checks.js'

/**
 * Options of the circuit breaker (the resolver's `circuitBreaker` option).
 *
 * @example
 * ```ts
 * createMembershipResolver({ baseUrl, circuitBreaker: { failureThreshold: 5, cooldown: 30_000 } })
 * ```
 */
export interface CircuitBreakerOptions {
  /** Upstream failures in a row that open the circuit. Integer 1..1000; default `5`. */
  failureThreshold?: number
  /** How long the circuit stays open before one probe is let through, in ms. Integer 1..3600000; default `30_000`. */
  cooldown?: number
}

/**
 * The state of a circuit: `closed` (calls go through), `open` (calls fail at once), or
 * `half-open` (one probe is under way or may start).
 *
 * @example
 * ```ts
 * if (resolver.stats().circuit === 'open') metrics.gauge('groups.circuit_open', 1)
 * ```
 */
export type CircuitState = 'closed' | 'open' | 'half-open'

/**
 * A change of state, reported to `onChange`.
 *
 * @example
 * ```ts
 * const breaker = createCircuitBreaker({ ...settings, onChange: (change: CircuitChange) => console.warn(`circuit ${change.state}`) })
 * ```
 */
export type CircuitChange =
  | { readonly state: 'open'; readonly failures: number; readonly cooldownMs: number }
  | { readonly state: 'half-open' }
  | { readonly state: 'closed' }

/**
 * The right to make one upstream call, to be settled exactly once with its outcome.
 *
 * @example
 * ```ts
 * const permit: CircuitPermit | undefined = breaker.admit()
 * permit?.settle('success')
 * ```
 */
export interface CircuitPermit {
  /** `success`: the service answered; `failure`: it failed; `neutral`: the call proves nothing either way. */
  settle(outcome: CircuitOutcome): void
}

/**
 * What a settled call says about the service.
 *
 * @example
 * ```ts
 * const outcome: CircuitOutcome = response.status >= 500 ? 'failure' : 'success'
 * ```
 */
export type CircuitOutcome = 'success' | 'failure' | 'neutral'

/**
 * A circuit breaker. Created by {@link createCircuitBreaker}.
 *
 * @example
 * ```ts
 * const breaker: CircuitBreaker = createCircuitBreaker(settings)
 * if (breaker.state === 'open') console.warn('the group service is given a rest')
 * ```
 */
export interface CircuitBreaker {
  /** The state now (an open circuit past its cool-down reads as `half-open`). */
  readonly state: CircuitState
  /** A permit for one call, or `undefined` when the circuit refuses it. */
  admit(): CircuitPermit | undefined
  /** The error for a refused call, with the rest of the cool-down as `retryAfter`. */
  openError(endpoint: string): UpstreamError
}

/**
 * Settings of {@link createCircuitBreaker}, validated.
 *
 * @example
 * ```ts
 * const settings: CircuitBreakerSettings = { failureThreshold: 5, cooldown: 30_000, now: Date.now }
 * ```
 */
export interface CircuitBreakerSettings {
  readonly failureThreshold: number
  readonly cooldown: number
  /** Clock in ms since the epoch. */
  readonly now: () => number
  /** Told of every change of state. Exceptions it throws are ignored. */
  readonly onChange?: (change: CircuitChange) => void
}

/** Default `failureThreshold`. */
const DEFAULT_FAILURE_THRESHOLD = 5
/** Default `cooldown`, in ms. */
const DEFAULT_COOLDOWN = 30_000

/**
 * Validates the resolver's `circuitBreaker` option: `undefined` or `false` (off, the
 * default), `true` (on with the defaults) or {@link CircuitBreakerOptions}. Returns the
 * settings, or `undefined` when the breaker is off. Throws `InvalidOptionError` naming
 * the option.
 */
export function circuitBreakerOption(value: unknown): Required<CircuitBreakerOptions> | undefined {
  if (value === undefined || value === false) return undefined
  if (value === true) return { failureThreshold: DEFAULT_FAILURE_THRESHOLD, cooldown: DEFAULT_COOLDOWN }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new InvalidOptionError('circuitBreaker', 'must be true, false or an object { failureThreshold, cooldown }')
  }
  const options = objectOption<CircuitBreakerOptions>('circuitBreaker', value)
  rejectUnknownKeys('circuitBreaker.', options, ['failureThreshold', 'cooldown'])
  return {
    failureThreshold: integerOption('circuitBreaker.failureThreshold', options.failureThreshold, {
      fallback: DEFAULT_FAILURE_THRESHOLD,
      min: 1,
      max: 1000,
    }),
    cooldown: integerOption('circuitBreaker.cooldown', options.cooldown, { fallback: DEFAULT_COOLDOWN, min: 1, max: 3_600_000 }),
  }
}

/**
 * Failures that say the service itself is failing, whoever asked: it did not answer in
 * time, could not be reached, broke the connection, failed (5xx) or asked everyone to slow
 * down (429). Every other `UpstreamError` is about one answer.
 */
const SERVICE_FAILURES: ReadonlySet<string> = new Set(['ERR_UPSTREAM_TIMEOUT', 'ERR_UPSTREAM_NETWORK', 'ERR_UPSTREAM_RATE_LIMITED'])

/**
 * What an upstream call's result says about the service: `failure` for a failure of the
 * service (a timeout, a network failure, a 5xx, a 429), `success` for an answer about the
 * token or group (200, 401, 403, 404 and other 4xx), `neutral` for anything else: a
 * failure that never reached the service, and an answer that is a 503 for its lookup but
 * may be determined by the token's own data (a body too large or unreadable, a redirect).
 */
export function circuitOutcome(error: unknown): CircuitOutcome {
  if (!(error instanceof UpstreamError)) {
    // A 401 or 403 from the service is an answer; a malformed token, a bad group id or an
    // abort never reached it.
    const code = (error as { code?: unknown } | null)?.code
    return code === 'ERR_TOKEN_INVALID' || code === 'ERR_INSUFFICIENT_SCOPE' ? 'success' : 'neutral'
  }
  if (error.code === 'ERR_UPSTREAM_STATUS') {
    // Other 4xx answers are about the request (an odd token or id), not the service's
    // health; a 5xx is the service failing; any other status is an odd answer, not an outage.
    const status = error.upstreamStatus ?? 500
    return status >= 500 ? 'failure' : status >= 400 ? 'success' : 'neutral'
  }
  // Fast failures made here (overload, an open circuit) say nothing about the service; a
  // body or a redirect may be one token's doing (see the module comment).
  return SERVICE_FAILURES.has(error.code) ? 'failure' : 'neutral'
}

/**
 * Creates a {@link CircuitBreaker}, closed.
 *
 * @example
 * ```ts
 * const breaker = createCircuitBreaker({ failureThreshold: 5, cooldown: 30_000, now: Date.now })
 * const permit = breaker.admit() // undefined while open: answer as a miss
 * permit?.settle(ok ? 'success' : 'failure')
 * ```
 */
export function createCircuitBreaker(settings: CircuitBreakerSettings): CircuitBreaker {
  const { failureThreshold, cooldown, now, onChange } = settings
  let state: 'closed' | 'open' | 'half-open' = 'closed'
  let failures = 0
  let openedAt = 0
  let probing = false
  // Permits of an earlier period (before the circuit last opened) are ignored, so a slow
  // call started while closed cannot close or re-open the circuit later.
  let period = 0

  function tell(change: CircuitChange): void {
    try {
      onChange?.(change)
    } catch {
      // A logging hook must never change an authorization outcome.
    }
  }

  function open(at: number): void {
    state = 'open'
    openedAt = at
    probing = false
    period++
    tell({ state: 'open', failures, cooldownMs: cooldown })
  }

  function refresh(at: number): void {
    if (state === 'open' && at - openedAt >= cooldown) {
      state = 'half-open'
      tell({ state: 'half-open' })
    }
  }

  function permit(of: number, probe: boolean): CircuitPermit {
    let settled = false
    return {
      settle(outcome) {
        if (settled) return
        settled = true
        if (of !== period) return
        if (probe) {
          probing = false
          if (outcome === 'success') {
            state = 'closed'
            failures = 0
            period++
            tell({ state: 'closed' })
          } else if (outcome === 'failure') {
            failures++
            open(now())
          }
          return
        }
        if (state !== 'closed') return
        if (outcome === 'success') failures = 0
        else if (outcome === 'failure' && ++failures >= failureThreshold) open(now())
      },
    }
  }

  return {
    get state() {
      refresh(now())
      return state
    },

    admit() {
      refresh(now())
      if (state === 'closed') return permit(period, false)
      if (state === 'open' || probing) return undefined
      probing = true
      return permit(period, true)
    },

    openError(endpoint) {
      const left = state === 'open' ? Math.max(0, openedAt + cooldown - now()) : 0
      return new UpstreamError('ERR_UPSTREAM_CIRCUIT_OPEN', 'The group service is failing; calls are paused for a while', {
        endpoint,
        retryAfter: Math.max(1, Math.ceil(left / 1000)),
      })
    },
  }
}
