/**
 * The spans: `voot-guard authorize` around each cold decision and, as its children,
 * `voot-guard resolve` around each of its lookups. Each span is started in the `start`
 * store binding (see context-binding.ts), so it is the active span while the traced
 * function runs: the resolve spans of a decision nest under it, and the HTTP client span
 * that undici's instrumentation makes for an upstream call nests under the resolve span.
 *
 * A warm decision (and its lookups), which the publisher marks as answered from the
 * in-process cache (`tier: 'l1'`) from the start, gets no span: see warm-decisions.ts.
 *
 * @module
 */
import { context, diag, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Span, type Tracer } from '@opentelemetry/api'
import type { AuthorizeContext, ResolveContext } from '../src/index.js'
import {
  ATTR_CACHE_TIER,
  ATTR_ENDPOINT,
  ATTR_ERROR_TYPE,
  ATTR_HTTP_STATUS,
  ATTR_REQUIREMENT,
  decisionAttributes,
  decisionOf,
  isServiceFailure,
  isWarm,
  lookupFailure,
  withService,
} from './attributes.js'
import { KEEP_CONTEXT } from './context-binding.js'
import type { Traced } from './traced-calls.js'

/**
 * Span name of a decision.
 *
 * @example
 * ```ts
 * const decisions = exporter.getFinishedSpans().filter((span) => span.name === AUTHORIZE_SPAN)
 * ```
 */
export const AUTHORIZE_SPAN = 'voot-guard authorize'
/**
 * Span name of a lookup.
 *
 * @example
 * ```ts
 * const lookups = exporter.getFinishedSpans().filter((span) => span.name === RESOLVE_SPAN)
 * ```
 */
export const RESOLVE_SPAN = 'voot-guard resolve'

/**
 * Starts and ends the spans of one kind of trace.
 */
export interface SpanKeeper<C extends object> {
  /**
   * Starts the span of a trace under the active context; returns the context to make
   * active ({@link KEEP_CONTEXT} for a warm trace, which gets no span). Never throws.
   */
  readonly begin: (traced: C) => Context
  /** Ends the span of a finished trace; `false` when it has none (a warm trace, or one that started before the keeper). */
  readonly end: (traced: Traced<C>) => boolean
}

function createSpanKeeper<C extends { tier?: unknown }>(
  tracer: Tracer,
  name: string,
  attributesAtStart: (traced: C) => Attributes,
  describeEnd: (span: Span, traced: Traced<C>) => void,
): SpanKeeper<C> {
  // Keyed by the publisher's context object, which stays free of anything of ours.
  const spans = new WeakMap<object, Span>()
  // Spans begun and not yet ended: while there are none (the steady state of a warm cache),
  // ending a trace needs no lookup.
  let open = 0
  return {
    begin(traced) {
      if (isWarm(traced)) return KEEP_CONTEXT
      const active = context.active()
      try {
        const span = tracer.startSpan(name, { kind: SpanKind.INTERNAL, attributes: attributesAtStart(traced) }, active)
        spans.set(traced, span)
        open++
        return trace.setSpan(active, span)
      } catch (error) {
        diag.error(`voot-guard/otel: starting a ${name} span failed`, error)
        return active
      }
    },
    end(traced) {
      if (open === 0) return false
      const span = spans.get(traced)
      if (span === undefined) return false
      spans.delete(traced)
      open--
      describeEnd(span, traced)
      span.end()
      return true
    },
  }
}

function markFailure(span: Span, code: string): void {
  if (!isServiceFailure(code)) return
  span.setAttribute(ATTR_ERROR_TYPE, code)
  // The code only: messages may quote the group service.
  span.setStatus({ code: SpanStatusCode.ERROR, message: code })
}

/**
 * The spans of a cold `voot-guard:authorize`: attributes `voot_guard.requirement` (and
 * `voot_guard.service` for a service of several), then
 * `voot_guard.outcome`, `voot_guard.reason`, `voot_guard.cache.tier`; status ERROR (and
 * `error.type`) when the answer is a 503 (or a 500).
 */
export function createAuthorizeSpans(tracer: Tracer): SpanKeeper<AuthorizeContext> {
  return createSpanKeeper<AuthorizeContext>(
    tracer,
    AUTHORIZE_SPAN,
    (traced) => withService({ [ATTR_REQUIREMENT]: traced.requirement }, traced.service),
    (span, traced) => {
      const decision = decisionOf(traced)
      span.setAttributes(decisionAttributes(decision))
      if (traced.tier !== undefined) span.setAttribute(ATTR_CACHE_TIER, traced.tier)
      if (decision.outcome === 'error') markFailure(span, decision.reason ?? 'unknown')
    },
  )
}

/**
 * The spans of a cold `voot-guard:resolve`: attributes `voot_guard.endpoint` (and
 * `voot_guard.service` for a service of several), then
 * `voot_guard.cache.tier`, `http.response.status_code` when the group service answered;
 * status ERROR (and `error.type`) when the lookup failed for the service's fault.
 */
export function createResolveSpans(tracer: Tracer): SpanKeeper<ResolveContext> {
  return createSpanKeeper<ResolveContext>(
    tracer,
    RESOLVE_SPAN,
    (traced) => withService({ [ATTR_ENDPOINT]: traced.endpoint }, traced.service),
    (span, traced) => {
      if (traced.tier !== undefined) span.setAttribute(ATTR_CACHE_TIER, traced.tier)
      if (traced.upstreamStatus !== undefined) span.setAttribute(ATTR_HTTP_STATUS, traced.upstreamStatus)
      const failure = lookupFailure(traced)
      if (failure !== undefined) markFailure(span, failure)
    },
  )
}
