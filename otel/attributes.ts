/**
 * Attribute names and what a finished trace says, shared by the spans and the metrics.
 * Names follow OpenTelemetry's semantic conventions where one exists (`error.type`,
 * `http.response.status_code`), `voot_guard.*` otherwise. Values come from the channel
 * contexts, which never hold a token or the user's groups; error messages are never read
 * (only codes), so nothing the group service said reaches telemetry.
 *
 * @module
 */
import type { Attributes } from '@opentelemetry/api'
import type { AuthorizeContext, ResolveContext } from '../src/index.js'
import type { Traced } from './traced-calls.js'

/** `allowed`, `denied` or `error`. */
export const ATTR_OUTCOME = 'voot_guard.outcome'
/** The decision's reason (`member`, `not_member`, ...) or the error's code (`ERR_UPSTREAM_TIMEOUT`, ...). */
export const ATTR_REASON = 'voot_guard.reason'
/** The requirement's description (names only group ids the application configured). */
export const ATTR_REQUIREMENT = 'voot_guard.requirement'
/** `l1`, `l2`, `coalesced` or `upstream`. */
export const ATTR_CACHE_TIER = 'voot_guard.cache.tier'
/** `hit` (a cache answered: l1, l2) or `miss`. */
export const ATTR_CACHE_RESULT = 'voot_guard.cache.result'
/** The endpoint template: `me/groups` or `me/groups/{groupid}`. */
export const ATTR_ENDPOINT = 'voot_guard.endpoint'
/**
 * The name of the group service, for a resolver of one of several services
 * (`createServiceResolvers`); absent for any other resolver. Configuration, never the user's.
 */
export const ATTR_SERVICE = 'voot_guard.service'
/** Semantic conventions: the HTTP status of the group service's answer. */
export const ATTR_HTTP_STATUS = 'http.response.status_code'
/** Semantic conventions: the class of error an operation ended with (here the voot-guard code). */
export const ATTR_ERROR_TYPE = 'error.type'
/** Semantic conventions' value of `error.type` when nothing better is known. */
export const OTHER_ERROR = '_OTHER'

/**
 * Codes of failures that are the caller's (answered 4xx), not the service's: no ERROR status.
 * Everything else that ends in an error (503 from the group service, 500 from a bug) is.
 */
const CALLER_ERRORS: ReadonlySet<string> = new Set([
  'ERR_TOKEN_MISSING',
  'ERR_TOKEN_MALFORMED',
  'ERR_TOKEN_INVALID',
  'ERR_INSUFFICIENT_SCOPE',
  'ERR_FORBIDDEN',
  'ERR_ABORTED',
  'ERR_INVALID_GROUP_ID',
])

/**
 * Whether a failure with this code is the service's fault (the span gets status ERROR).
 */
export function isServiceFailure(code: string): boolean {
  return !CALLER_ERRORS.has(code)
}

/** The `code` of a thrown value, when it has a string one; else `_OTHER`. Never its message. */
function codeOf(error: unknown): string {
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined
  return typeof code === 'string' ? code : OTHER_ERROR
}

/**
 * What a finished `voot-guard:authorize` trace decided.
 */
export interface DecisionSummary {
  readonly outcome: 'allowed' | 'denied' | 'error' | undefined
  readonly reason: string | undefined
  /** The service of the resolver that decided, when it is one of several. */
  readonly service: string | undefined
}

/**
 * Whether a trace is of the warm path: a decision or lookup answered synchronously from the
 * in-process cache, which its publisher marks with `tier: 'l1'` from the `start` event on
 * (a cold one learns its tier at the end). It gets metrics and its attributes on the active span, no span.
 */
export function isWarm(traced: { readonly tier?: unknown }): boolean {
  return traced.tier === 'l1'
}

/**
 * The attributes that describe a decision (`voot_guard.outcome`, `voot_guard.reason`, and
 * `voot_guard.service` for a service of several), on its span, the active span (a warm one)
 * and its `voot_guard.decisions` data point alike: the one place to add one. Only values of
 * the decision summary: never a token nor the user's groups.
 */
export function decisionAttributes(decision: DecisionSummary): Attributes {
  const attributes: Attributes = {}
  if (decision.outcome !== undefined) attributes[ATTR_OUTCOME] = decision.outcome
  if (decision.reason !== undefined) attributes[ATTR_REASON] = decision.reason
  if (decision.service !== undefined) attributes[ATTR_SERVICE] = decision.service
  return attributes
}

/** `attributes` with `voot_guard.service` when `service` is given: the label of a service of several. */
export function withService(attributes: Attributes, service: string | undefined): Attributes {
  if (service !== undefined) attributes[ATTR_SERVICE] = service
  return attributes
}

/**
 * Reads the outcome and reason of a finished authorize trace; a trace whose function threw
 * without setting them is an `error` with the thrown value's code.
 */
export function decisionOf(traced: Traced<AuthorizeContext>): DecisionSummary {
  const failed = 'error' in traced
  const outcome = traced.outcome ?? (failed ? 'error' : undefined)
  const reason = traced.reason ?? (failed ? codeOf(traced.error) : undefined)
  return { outcome, reason, service: traced.service }
}

/**
 * The error code a finished resolve trace failed with, or `undefined` when it answered.
 */
export function lookupFailure(traced: Traced<ResolveContext>): string | undefined {
  return traced.errorCode ?? ('error' in traced ? codeOf(traced.error) : undefined)
}
