/**
 * What a warm decision records besides the metrics: an event named `voot-guard authorize`
 * on the span active when the guard ran (the HTTP server span of the request, when the
 * application traces its requests), with the decision's attributes (`voot_guard.requirement`,
 * `voot_guard.outcome`, `voot_guard.reason`, `voot_guard.cache.tier` = `l1`). No span.
 *
 * Why an event: a warm decision is the common case, answered from memory in about a
 * microsecond, and a span of its own (and of each lookup) costs far more than the decision
 * (a span start, two context switches, a span end and an export). An event keeps the
 * decision in the request's trace, where it is looked for, at a fraction of that; the
 * metrics count every decision whether or not a span is active. Sampling instead would make
 * the trace of one request say nothing about its decision, at random. Cold decisions, their
 * lookups and the upstream calls keep their spans: they are where time goes.
 *
 * @module
 */
import { trace } from '@opentelemetry/api'
import type { AuthorizeContext } from '../src/index.js'
import { ATTR_CACHE_TIER, ATTR_REQUIREMENT, decisionAttributes, decisionOf } from './attributes.js'
import { AUTHORIZE_SPAN } from './spans.js'
import type { Traced } from './traced-calls.js'

/**
 * Records warm decisions as events on the active span.
 */
export interface WarmDecisionEvents {
  /** Adds the event for a finished warm decision to the active span, when one is recording. Never throws. */
  readonly record: (traced: Traced<AuthorizeContext>) => void
}

/**
 * Creates the recorder.
 */
export function createWarmDecisionEvents(): WarmDecisionEvents {
  return {
    record(traced) {
      const span = trace.getActiveSpan()
      if (span === undefined || !span.isRecording()) return
      // Built anew each time: the SDK copies an event's attributes anyway, and the
      // requirement's description is a new string on each decision (a cache keyed by it
      // would hash it each time).
      const attributes = decisionAttributes(decisionOf(traced))
      attributes[ATTR_REQUIREMENT] = traced.requirement
      attributes[ATTR_CACHE_TIER] = 'l1'
      span.addEvent(AUTHORIZE_SPAN, attributes)
    },
  }
}
