/**
 * The per-request flow of every adapter, written once: read the credentials (or let an
 * optional sign-in through), decide warm or cold through {@link GuardCore.authorizeNow},
 * then allow, answer the refusal, or hand it to the framework. An adapter supplies only its
 * framework's input and output ({@link FrameworkIO}).
 *
 * @module
 */
import type { Requirement } from '../decision/requirements.js'
import type { VootError } from '../errors.js'
import { splitGuardOptions } from './adapter-options.js'
import { createCredentialsReader, type Credentials, type TokenSource } from './credentials.js'
import { createGuardCore, type GuardCore, type GuardOptions } from './guard.js'
import type { HttpErrorAnswer } from './http-error.js'
import { isAnonymous } from './optional-sign-in.js'
import type { VootContext } from './voot-context.js'
import type { RequirementOf } from './computed-requirement.js'

/**
 * A refused request: the HTTP-shaped error (with `status`, `headers`, `expose`) and the
 * contract's answer for it.
 *
 * @example
 * ```ts
 * const respond = ({ answer }: Refusal, req: Request, res: Response) => res.status(answer.status).set(answer.headers).send(answer.text)
 * ```
 */
export interface Refusal {
  readonly error: VootError
  readonly answer: HttpErrorAnswer
}

/**
 * What an adapter tells {@link createGuardFlow} about its framework: where the request's
 * headers are, and how to go on, answer or fail. `I` is what the framework hands a
 * middleware first (the request, Koa's `ctx`, Hono's `c`), `A` and `B` what it hands after
 * it (`res` and `next`, `reply` and `done`, `next`), `T` what the middleware returns.
 *
 * @example
 * ```ts
 * const io: FrameworkIO<Request, Response, NextFunction, void> = {
 *   authorization: (req) => authorizationOf(req),
 *   accept: (req) => req.headers.accept,
 *   allow: (voot, req, res, next) => { req.voot = voot; next() },
 *   respond: ({ answer }, req, res) => { res.status(answer.status).set(answer.headers).send(answer.text) },
 *   fail: (error, req, res, next) => next(error),
 * }
 * ```
 */
export interface FrameworkIO<I, A, B, T> {
  /** The request's `Authorization` value: a string, every value when it was sent more than once, or `undefined`. */
  readonly authorization: (input: I) => string | readonly string[] | undefined
  /** The request's `Accept` value; read only when a request is refused. */
  readonly accept?: (input: I) => string | null | undefined
  /** The request goes on: with its context, or `undefined` on an optional sign-in without credentials. */
  readonly allow: (context: VootContext | undefined, input: I, a: A, b: B) => T
  /** The guard answers the refusal itself (`errorHandling: 'respond'`, the default). */
  readonly respond: (refusal: Refusal, input: I, a: A, b: B) => T
  /**
   * The refusal goes to the framework's own error handling (`errorHandling: 'delegate'`).
   * Default: {@link FrameworkIO.fail} with the refusal's error.
   */
  readonly delegate?: (refusal: Refusal, input: I, a: A, b: B) => T
  /** An error outside the HTTP contract (a bug, or a `getToken` that threw): the framework's 500. */
  readonly fail: (error: unknown, input: I, a: A, b: B) => T
}

/**
 * One guard, run per request: the framework's arguments in, what `io` returned out (or a
 * promise of it when the decision waits for the group service or an async `getToken`).
 *
 * @example
 * ```ts
 * const step: GuardStep<Request, Response, NextFunction, void> = flow.guard(group('fc:org:example.org'), false)
 * app.get('/staff', (req, res, next) => void step(req, res, next))
 * ```
 */
export type GuardStep<I, A, B, T> = (input: I, a: A, b: B) => T | Promise<T>

/**
 * An adapter's guard core and its guards.
 *
 * @example
 * ```ts
 * const flow = createGuardFlow(options, io)
 * return createGuards(flow.core, flow.guard)
 * ```
 */
export interface GuardFlow<I, A, B, T> {
  readonly core: GuardCore
  /**
   * The guard of a requirement (validated here, once), or of one computed per request
   * (`core.computedGroup`, `core.computedRequirement`: called first, before the
   * credentials are read; a refusal it throws is answered, any other error is `fail`'s).
   * `optional` is `authenticate({ optional: true })`'s flag: a request that presents no
   * credentials goes on without a context.
   */
  readonly guard: (requirement: Requirement | RequirementOf<I>, optional: boolean) => GuardStep<I, A, B, T>
}

/**
 * Builds an adapter's guards from its options and its framework's input and output. The
 * options are checked and split here (`getToken` for the credentials, the rest for the
 * core), once.
 *
 * @example
 * ```ts
 * export function createGuard(options: GuardOptions & { getToken?: TokenSource<Request> }) {
 *   const flow = createGuardFlow(options, io)
 *   return createGuards(flow.core, flow.guard)
 * }
 * ```
 */
export function createGuardFlow<I, A, B, T>(
  options: GuardOptions & { getToken?: TokenSource<I> | undefined },
  io: FrameworkIO<I, A, B, T>,
): GuardFlow<I, A, B, T> {
  const { getToken, coreOptions } = splitGuardOptions(options)
  const credentialsOf = createCredentialsReader(getToken, io.authorization)
  const core = createGuardCore(coreOptions)
  const { allow, respond, fail, accept } = io
  const delegate = io.delegate ?? ((refusal: Refusal, input: I, a: A, b: B): T => fail(refusal.error, input, a, b))

  function refuse(error: unknown, input: I, a: A, b: B): T {
    const answer = core.answer(error, accept?.(input))
    if (answer === undefined) return fail(error, input, a, b)
    const refusal: Refusal = { error: error as VootError, answer }
    return core.delegateErrors ? delegate(refusal, input, a, b) : respond(refusal, input, a, b)
  }

  /** Decides `requirement` for `credentials` and answers: allowed, refused, or later. */
  // eslint-disable-next-line max-params -- the requirement, and the framework's arguments
  function authorize(credentials: Credentials, requirement: Requirement, input: I, a: A, b: B): T | Promise<T> {
    // Warm cache: decided synchronously, no promise and no closure per request.
    const result = core.authorizeNow(credentials, requirement)
    if (!(result instanceof Promise)) return allow(result, input, a, b)
    return result.then(
      (context) => allow(context, input, a, b),
      (error: unknown) => refuse(error, input, a, b),
    )
  }

  function guard(declared: Requirement | RequirementOf<I>, optional: boolean): GuardStep<I, A, B, T> {
    if (typeof declared === 'function') return computedGuard(declared)
    const requirement = core.prepare(declared)

    function decide(credentials: Credentials, input: I, a: A, b: B): T | Promise<T> {
      if (optional && isAnonymous(credentials)) return allow(undefined, input, a, b)
      return authorize(credentials, requirement, input, a, b)
    }

    return (input, a, b) => {
      let credentials: Credentials | Promise<Credentials>
      try {
        credentials = credentialsOf(input)
      } catch (error) {
        return refuse(error, input, a, b)
      }
      if (!(credentials instanceof Promise)) return decide(credentials, input, a, b)
      return credentials.then(
        (found) => decide(found, input, a, b),
        (error: unknown) => refuse(error, input, a, b),
      )
    }
  }

  /**
   * The guard of a requirement computed per request: the same steps, with the request's
   * requirement worked out first (a refusal then costs no token read and no call).
   */
  function computedGuard(computed: RequirementOf<I>): GuardStep<I, A, B, T> {
    return (input, a, b) => {
      let requirement: Requirement
      let credentials: Credentials | Promise<Credentials>
      try {
        requirement = computed(input)
        credentials = credentialsOf(input)
      } catch (error) {
        return refuse(error, input, a, b)
      }
      if (!(credentials instanceof Promise)) return authorize(credentials, requirement, input, a, b)
      return credentials.then(
        (found) => authorize(found, requirement, input, a, b),
        (error: unknown) => refuse(error, input, a, b),
      )
    }
  }

  return { core, guard }
}
