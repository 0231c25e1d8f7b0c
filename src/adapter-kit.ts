/**
 * The adapter kit: what it takes to put voot-guard's guards into a web framework.
 *
 * Applications do not need this module: they import an adapter (`voot-guard/express`,
 * `voot-guard/koa`, `voot-guard/fastify`, ...) or the resolver from `voot-guard`. It is for
 * people who write an adapter for another framework. Every adapter has the same shape:
 * read the credentials ({@link createCredentialsReader}, {@link authorizationOf}), decide
 * ({@link GuardCore.authorizeNow}: the context at once on a warm cache, else a promise; the
 * token is read and digested once either way), then render the HTTP contract
 * ({@link GuardCore.answer}).
 * For `authenticate({ optional: true })`, {@link createGuards} passes `optional`, and a
 * request that {@link isAnonymous} goes on without a context.
 *
 * @example
 * ```ts
 * import { authorizationOf, createCredentialsReader, createGuardCore, createGuards } from 'voot-guard/adapter-kit'
 *
 * const core = createGuardCore({ baseUrl: 'https://groups-api.example.org/groups' })
 * const credentialsOf = createCredentialsReader(undefined, (req: { rawHeaders: string[] }) => authorizationOf(req))
 * const guard = createGuards(core, (requirement) => async (req: { rawHeaders: string[] }) => {
 *   const result = core.authorizeNow(credentialsOf(req), requirement)
 *   return result instanceof Promise ? await result : result
 * })
 * ```
 *
 * @module
 */
export {
  AUTHENTICATED,
  createCredentialsReader,
  createGuardCore,
  createGuards,
  type Credentials,
  type FoundToken,
  type Guards,
  type GuardCore,
  type GuardOptions,
  type TokenSource,
  type VootContext,
} from './guard/guard.js'
export { createGuardFlow, type FrameworkIO, type GuardFlow, type GuardStep, type Refusal } from './guard/request-flow.js'
export {
  createHttpErrorRenderer,
  prefersProblemDetails,
  quoteHeaderValue,
  type HttpErrorAnswer,
  type HttpErrorBody,
  type HttpErrorCode,
  type HttpErrorRenderer,
  type HttpErrorRendererOptions,
  type ProblemDetails,
} from './guard/http-error.js'
export { authorizationOf, type RequestHeaders } from './guard/authorization-header.js'
export { splitGuardOptions } from './guard/adapter-options.js'
export { isAnonymous, type AuthenticateOptions } from './guard/optional-sign-in.js'
export {
  answerResponse,
  authorizationOfHeaders,
  isHttpError,
  withResponse,
  type HeaderReader,
  type HttpError,
} from './guard/adapter-web.js'
