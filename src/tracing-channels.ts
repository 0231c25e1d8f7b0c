/**
 * The `node:diagnostics_channel` tracing channels voot-guard publishes, and the context
 * objects they carry. Subscribe with `diagnostics_channel.tracingChannel(CHANNELS.resolve)`;
 * `voot-guard/otel` turns them into OpenTelemetry spans and metrics.
 *
 * Contexts never hold a token or the user's groups, on any event: the `result` that
 * `TracingChannel` adds is always `undefined` (a lookup's answer is the user's groups), and
 * voot-guard's own errors (the `error` it adds) never quote a token or the service's answer. The
 * requirement's description names group ids the application configured (configuration, not
 * the user's data), and so does `service`, the name of a resolver's group service among
 * several (`createServiceResolvers`), fixed per resolver. Nothing is built or published
 * while a channel has no subscriber.
 *
 * The work of a trace (the decision, the lookup with its upstream call) runs inside
 * `tracePromise` / `traceSync`, so stores bound with `start.bindStore()` are active during it:
 * an HTTP client span made by undici's instrumentation nests under the lookup that caused it.
 *
 * @module
 */

/**
 * The names of voot-guard's tracing channels.
 *
 * @example
 * ```ts
 * import { tracingChannel } from 'node:diagnostics_channel'
 * import { CHANNELS, type AuthorizeContext } from 'voot-guard'
 *
 * tracingChannel<unknown, AuthorizeContext>(CHANNELS.authorize).subscribe({
 *   start() {}, end() {}, asyncStart() {}, error() {},
 *   asyncEnd(context) { console.info(context.requirement, context.outcome, context.reason) },
 * })
 * ```
 */
export const CHANNELS = Object.freeze({
  /** One decision (a guard's, or `resolver.check`): {@link AuthorizeContext}. */
  authorize: 'voot-guard:authorize',
  /** One cache lookup of one answer: {@link ResolveContext}. */
  resolve: 'voot-guard:resolve',
  /**
   * One call to the group service (once per single-flight call, its retries inside):
   * `UpstreamContext`. What `voot_guard.upstream.active` counts.
   */
  upstream: 'voot-guard:upstream',
  /** A plain channel (not a tracing one): each change of a circuit breaker's state, `CircuitContext`. */
  circuit: 'voot-guard:circuit',
} as const)

/**
 * Where an answer came from: the in-process cache, the shared tier, another caller's call in
 * flight, or the group service.
 *
 * @example
 * ```ts
 * const tier: CacheTier = 'l1'
 * ```
 */
export type CacheTier = 'l1' | 'l2' | 'coalesced' | 'upstream'

/**
 * The context of one `voot-guard:authorize` trace. Fields marked "at the end" are set before
 * `end` (a synchronous warm decision) or `asyncEnd` / `error`. A warm decision (made
 * synchronously from the in-process cache, traced with `traceSync`) carries them from
 * `start` on, `tier` being `l1`: a subscriber can tell it from a cold one at once
 * (`voot-guard/otel` gives it an event on the active span instead of a span).
 *
 * @example
 * ```ts
 * const context: AuthorizeContext = { requirement: 'group fc:org:example.org (admin)' }
 * ```
 */
export interface AuthorizeContext {
  /** Description of the requirement, as in `Decision.requirement`. */
  readonly requirement: string
  /** At the end: `allowed`, `denied`, or `error` (unknown: the answer will be a 401, 403 scope, or 503). */
  outcome?: 'allowed' | 'denied' | 'error'
  /** At the end: the decision's `reason`, or the error's `code` (`ERR_UPSTREAM_TIMEOUT`, ...). */
  reason?: string
  /** At the end: the slowest tier the decision needed (`l1` for a warm decision). */
  tier?: CacheTier
  /** The name of the group service the resolver belongs to, for a service of `createServiceResolvers`; absent otherwise. */
  readonly service?: string
}

/**
 * The context of one `voot-guard:resolve` trace: one answer looked up for one token. A
 * lookup of the warm path (read synchronously from the in-process cache) has `tier: 'l1'`
 * from `start` on; any other learns its tier at the end.
 *
 * @example
 * ```ts
 * const context: ResolveContext = { endpoint: 'me/groups' }
 * ```
 */
export interface ResolveContext {
  /** The endpoint template (`me/groups` or `me/groups/{groupid}`), never the group id. */
  readonly endpoint: 'me/groups' | 'me/groups/{groupid}'
  /** At the end: where the answer came from (absent when the lookup failed before any tier answered). */
  tier?: CacheTier
  /** At the end, when the group service was called and answered: its HTTP status. */
  upstreamStatus?: number
  /** At the end, when the group service was called: the call's duration in ms. */
  upstreamDurationMs?: number
  /** At the end, on failure: the error's `code`. */
  errorCode?: string
  /** The name of the group service the resolver belongs to, for a service of `createServiceResolvers`; absent otherwise. */
  readonly service?: string
}

/**
 * The context of one `voot-guard:upstream` trace: one call to the group service, traced
 * around the whole call (retries included) once per single-flight call, so that its
 * `start` and its end (`asyncEnd`, or `end` after a synchronous throw) bracket exactly one
 * call in flight. Lookups that join the call (`coalesced`) do not trace it again.
 *
 * @example
 * ```ts
 * const context: UpstreamContext = { endpoint: 'me/groups' }
 * ```
 */
export interface UpstreamContext {
  /** The endpoint template, never the group id. */
  readonly endpoint: 'me/groups' | 'me/groups/{groupid}'
  /** The name of the group service called, for a service of `createServiceResolvers`; absent otherwise. */
  readonly service?: string
}

/**
 * The message of the `voot-guard:circuit` channel: a circuit breaker changed state.
 * Published on each change (`diagnostics_channel.channel(CHANNELS.circuit).publish(...)`),
 * only while the channel has subscribers.
 *
 * @example
 * ```ts
 * import { channel } from 'node:diagnostics_channel'
 * channel(CHANNELS.circuit).subscribe((message) => console.warn('circuit', (message as CircuitContext).state))
 * ```
 */
export interface CircuitContext {
  /** The state now. */
  readonly state: 'closed' | 'half-open' | 'open'
  /** The name of the group service whose breaker it is, for a service of `createServiceResolvers`; absent otherwise. */
  readonly service?: string
}
