/**
 * The spans: `voot-guard authorize` around each decision and, as its children,
 * `voot-guard resolve` around each lookup. Each span is started in the `start` store
 * binding (see context-binding.ts), so it is the active span while the traced function
 * runs: the resolve spans of a decision nest under it, and the HTTP client span that
 * undici's instrumentation makes for an upstream call nests under the resolve span.
 *
 * @module
 */
import { context, diag, SpanKind, SpanStatusCode, trace, type Context, type Span, type Tracer } from '@opentelemetry/api'
import type { AuthorizeContext, ResolveContext } from '../src/tracing-channels.js'
import {
  ATTR_CACHE_TIER,
  ATTR_ENDPOINT,
  ATTR_ERROR_TYPE,
  ATTR_HTTP_STATUS,
  ATTR_OUTCOME,
  ATTR_REASON,
  ATTR_REQUIREMENT,
  decisionOf,
  isServiceFailure,
  lookupFailure,
} from './attributes.js'
import type { Traced } from './traced-calls.js'

/** Span name of a decision. */
export const AUTHORIZE_SPAN = 'voot-guard authorize'
/** Span name of a lookup. */
export const RESOLVE_SPAN = 'voot-guard resolve'

/**
 * Starts and ends the spans of one kind of trace.
 */
export interface SpanKeeper<C extends object> {
  /** Starts the span of a trace under the active context; returns the context to make active. Never throws. */
  readonly begin: (traced: C) => Context
  /** Ends the span of a finished trace (nothing when it started before the keeper). */
  readonly end: (traced: Traced<C>) => void
}

function createSpanKeeper<C extends object>(
  tracer: Tracer,
  name: string,
  attributesAtStart: (traced: C) => Record<string, string>,
  describeEnd: (span: Span, traced: Traced<C>) => void,
): SpanKeeper<C> {
  // Keyed by the publisher's context object, which stays free of anything of ours.
  const spans = new WeakMap<object, Span>()
  return {
    begin(traced) {
      const active = context.active()
      try {
        const span = tracer.startSpan(name, { kind: SpanKind.INTERNAL, attributes: attributesAtStart(traced) }, active)
        spans.set(traced, span)
        return trace.setSpan(active, span)
      } catch (error) {
        diag.error(`voot-guard/otel: starting a ${name} span failed`, error)
        return active
      }
    },
    end(traced) {
      const span = spans.get(traced)
      if (span === undefined) return
      spans.delete(traced)
      describeEnd(span, traced)
      span.end()
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
 * The spans of `voot-guard:authorize`: attributes `voot_guard.requirement`, then
 * `voot_guard.outcome`, `voot_guard.reason`, `voot_guard.cache.tier`; status ERROR (and
 * `error.type`) when the answer is a 503 (or a 500).
 */
export function createAuthorizeSpans(tracer: Tracer): SpanKeeper<AuthorizeContext> {
  return createSpanKeeper<AuthorizeContext>(
    tracer,
    AUTHORIZE_SPAN,
    (traced) => ({ [ATTR_REQUIREMENT]: traced.requirement }),
    (span, traced) => {
      const { outcome, reason } = decisionOf(traced)
      if (outcome !== undefined) span.setAttribute(ATTR_OUTCOME, outcome)
      if (reason !== undefined) span.setAttribute(ATTR_REASON, reason)
      if (traced.tier !== undefined) span.setAttribute(ATTR_CACHE_TIER, traced.tier)
      if (outcome === 'error') markFailure(span, reason ?? 'unknown')
    },
  )
}

/**
 * The spans of `voot-guard:resolve`: attributes `voot_guard.endpoint`, then
 * `voot_guard.cache.tier`, `http.response.status_code` when the group service answered;
 * status ERROR (and `error.type`) when the lookup failed for the service's fault.
 */
export function createResolveSpans(tracer: Tracer): SpanKeeper<ResolveContext> {
  return createSpanKeeper<ResolveContext>(
    tracer,
    RESOLVE_SPAN,
    (traced) => ({ [ATTR_ENDPOINT]: traced.endpoint }),
    (span, traced) => {
      if (traced.tier !== undefined) span.setAttribute(ATTR_CACHE_TIER, traced.tier)
      if (traced.upstreamStatus !== undefined) span.setAttribute(ATTR_HTTP_STATUS, traced.upstreamStatus)
      const failure = lookupFailure(traced)
      if (failure !== undefined) markFailure(span, failure)
    },
  )
}
