/**
 * What a warm decision records besides the metrics: its attributes on the span active when
 * the guard ran (the HTTP server span of the request, when the application traces its
 * requests): `voot_guard.requirement`, `voot_guard.outcome`, `voot_guard.reason`,
 * `voot_guard.cache.tier` = `l1`, and `voot_guard.service` for a service of several. No
 * span, no event.
 *
 * Why attributes: a warm decision is the common case, answered from memory in well under a
 * microsecond. A span of its own (and of each lookup) costs many times the decision (a span
 * start, two context switches, a span end and an export); an event costs about as much as
 * the decision again (the SDK copies its attributes twice, takes a high-resolution time and
 * keeps one more object per request until export), while setting attributes on a span that
 * exists anyway costs a fraction of either, and attributes are what trace backends index
 * and filter on ("which requests were denied, and why"). The metrics count every decision
 * whether or not a span is active. Sampling instead would make the trace of one request say
 * nothing about its decision, at random. What it gives up: when several guards decide warm
 * within one request, the span keeps the last decision's attributes (the one that denied, if
 * any did, since a denial ends the request). Cold decisions, their lookups and the upstream
 * calls keep their spans: they are where time goes.
 *
 * @module
 */
import { trace, type Attributes } from '@opentelemetry/api'
import type { AuthorizeContext } from '../src/index.js'
import { ATTR_CACHE_TIER, ATTR_OUTCOME, ATTR_REASON, ATTR_REQUIREMENT, decisionAttributes, decisionOf } from './attributes.js'
import type { Traced } from './traced-calls.js'

/**
 * Records warm decisions as attributes of the active span.
 */
export interface WarmDecisionAttributes {
  /** Sets the attributes of a finished warm decision on the active span, when one is recording. Never throws. */
  readonly record: (traced: Traced<AuthorizeContext>) => void
}

/** The attributes a warm decision sets on the active span. */
function warmDecisionAttributes(traced: Traced<AuthorizeContext>): Attributes {
  const attributes = decisionAttributes(decisionOf(traced))
  attributes[ATTR_REQUIREMENT] = traced.requirement
  attributes[ATTR_CACHE_TIER] = 'l1'
  return attributes
}

/** Requirements whose last warm attributes are kept (routes declare a few; services that build requirements per request may make many). */
const KEPT_REQUIREMENTS = 256

/**
 * Creates the recorder.
 */
export function createWarmDecisionAttributes(): WarmDecisionAttributes {
  // The last attribute set of each requirement, frozen: a route's warm decisions mostly
  // repeat one outcome and reason, so most need no new object (the SDK copies the values).
  // Those of resolvers without a service, then those of each service of several (two
  // services may decide requirements of one description).
  const unlabelled = new Map<string, Attributes>()
  const byService = new Map<string, Map<string, Attributes>>()
  function keptOf(service: string | undefined): Map<string, Attributes> {
    if (service === undefined) return unlabelled
    let kept = byService.get(service)
    if (kept === undefined) byService.set(service, (kept = new Map<string, Attributes>()))
    return kept
  }
  function attributesOf(traced: Traced<AuthorizeContext>): Attributes {
    const kept = keptOf(traced.service)
    const last = kept.get(traced.requirement)
    if (last !== undefined && last[ATTR_OUTCOME] === traced.outcome && last[ATTR_REASON] === traced.reason) return last
    const built = Object.freeze(warmDecisionAttributes(traced))
    if (last !== undefined || kept.size < KEPT_REQUIREMENTS) kept.set(traced.requirement, built)
    return built
  }
  return {
    record(traced) {
      const span = trace.getActiveSpan()
      if (span === undefined || !span.isRecording()) return
      span.setAttributes(attributesOf(traced))
    },
  }
}
