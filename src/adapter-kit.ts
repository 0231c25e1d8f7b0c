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
export { createGuardCore, type GuardCore, type GuardOptions, type VootContext } from './guard/guard.js'
export { AUTHENTICATED, createGuards, type Guards } from './guard/guards.js'
export type { Credentials, FoundToken, TokenSource } from './guard/credentials.js'
export type { RequirementOf } from './guard/computed-requirement.js'
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

// The shared tier's seam: what a cache tier such as `voot-guard/redis` implements.
export type {
  SharedAnswerKind,
  SharedCache,
  SharedCacheKey,
  SharedCacheSignal,
  SharedCacheStats,
  SharedEntry,
  SharedLock,
} from './shared-cache.js'
export { isRequirement } from './decision/requirements.js'
