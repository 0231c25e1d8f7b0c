/**
 * The adapter kit: what it takes to put voot-guard's guards into a web framework.
 *
 * Applications do not need this module: they import an adapter (`voot-guard/express`,
 * `voot-guard/koa`, `voot-guard/fastify`, ...) or the resolver from `voot-guard`. It is for
 * people who write an adapter for another framework (docs/adapter-kit.md), and for the
 * packages built on the core (a shared tier, the gate, tools): the same option checks and
 * circuit breaker the core uses. Every adapter runs one per-request flow,
 * {@link createGuardFlow}: it reads the credentials, lets an optional sign-in without them
 * go on, decides with {@link GuardCore.authorizeNow} (the context at once on a warm cache,
 * else a promise; the token is read and digested once either way), and allows, answers the
 * refusal with the HTTP contract ({@link GuardCore.answer}) or hands it to the framework.
 * The adapter gives only its framework's input and output, a {@link FrameworkIO}.
 *
 * @example
 * ```ts
 * import type { IncomingMessage, ServerResponse } from 'node:http'
 * import { authorizationOf, createGuardFlow, createGuards } from 'voot-guard/adapter-kit'
 *
 * const flow = createGuardFlow<IncomingMessage, ServerResponse, () => void, void>(
 *   { baseUrl: 'https://groups-api.example.org/groups' },
 *   {
 *     authorization: (req) => authorizationOf(req),
 *     allow: (_voot, _req, _res, next) => next(),
 *     respond: ({ answer }, _req, res) => void res.writeHead(answer.status, answer.headers).end(answer.text),
 *     fail: (_error, _req, res) => void res.writeHead(500).end(),
 *   },
 * )
 * const guard = createGuards(flow.core, flow.guard)
 * ```
 *
 * @module
 */
export {
  AUTHENTICATED,
  createGuardCore,
  createGuards,
  type Guards,
  type GuardCore,
  type GuardOptions,
  type VootContext,
} from './guard/guard.js'
export type { Credentials, FoundToken, TokenSource } from './guard/credentials.js'
export type { GroupIdOf, RequirementOf } from './guard/computed-requirement.js'
export { createGuardFlow, type FrameworkIO, type GuardFlow, type GuardStep, type Refusal } from './guard/request-flow.js'
export {
  prefersProblemDetails,
  quoteHeaderValue,
  type HttpErrorAnswer,
  type HttpErrorBody,
  type HttpErrorCode,
  type ProblemDetails,
} from './guard/http-error.js'
export { authorizationOf, type RequestHeaders } from './guard/authorization-header.js'
export { readAuthenticateOptions, type AuthenticateOptions } from './guard/optional-sign-in.js'
export {
  answerResponse,
  authorizationOfHeaders,
  isHttpError,
  withResponse,
  type HeaderReader,
  type HttpError,
} from './guard/adapter-web.js'

// For packages built on the core: options checked as the core checks its own, the circuit
// breaker of the upstream gate (a shared tier stops asking a failing Redis with it), and
// the shared tier's seam.
export { functionOption, integerOption, nearestKey, objectOption, rejectUnknownKeys, type IntegerBounds } from './option-checks.js'
export {
  createCircuitBreaker,
  type CircuitBreaker,
  type CircuitBreakerSettings,
  type CircuitChange,
  type CircuitOutcome,
  type CircuitPermit,
} from './resolver/upstream/circuit-breaker.js'
export type {
  SharedAnswerKind,
  SharedCache,
  SharedCacheKey,
  SharedCacheSignal,
  SharedCacheStats,
  SharedEntry,
  SharedLock,
} from './shared-cache.js'
export { isLoopbackHost } from './client/loopback-host.js'
export { misconfigurationHint } from './resolver/misconfiguration.js'
export { DEFAULT_TIMEOUT, MAX_TIMEOUT } from './client/options.js'
export { DEFAULT_CACHE_TTL } from './resolver/options.js'
export { deepFreeze } from './resolver/store/deep-freeze.js'
export { requiredText } from './decision/required-text.js'
