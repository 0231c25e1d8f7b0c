/**
 * The error model of voot-guard.
 *
 * Every error the library throws on purpose is a {@link VootError}: it carries a stable
 * `code` from {@link VootErrorCode}, the HTTP `status` an adapter answers with, the
 * `headers` that answer needs, and `expose` (whether the message is safe to show a
 * client). Express's `finalhandler` and Koa's `ctx.onerror` read exactly these properties,
 * so the errors can be handed to a framework's own error handling unchanged.
 *
 * No message, property or header of any error ever contains a bearer token.
 *
 * @module
 */
import type { DenialReason } from './decision/types.js'

/**
 * Every code a {@link VootError} can carry.
 *
 * @example
 * ```ts
 * import { VootError } from 'voot-guard'
 * try { await resolver.check(token, requirement) } catch (err) {
 *   if (err instanceof VootError && err.code === 'ERR_UPSTREAM_TIMEOUT') retryLater()
 * }
 * ```
 */
export type VootErrorCode =
  /** No `Authorization` header, or a scheme other than Bearer (401). */
  | 'ERR_TOKEN_MISSING'
  /** A Bearer header whose token is empty, malformed or too long (400). */
  | 'ERR_TOKEN_MALFORMED'
  /** The group service rejected the token: unknown, expired or malformed (401). */
  | 'ERR_TOKEN_INVALID'
  /** The group service refused `me/*` for this token: client-only token or missing scope (403). */
  | 'ERR_INSUFFICIENT_SCOPE'
  /** The token is valid but the requirement is not met (403). */
  | 'ERR_FORBIDDEN'
  /** The group service could not be reached: refused, reset, DNS, TLS (503). */
  | 'ERR_UPSTREAM_NETWORK'
  /** The group service did not answer within the deadline (503). */
  | 'ERR_UPSTREAM_TIMEOUT'
  /** The group service answered with an unexpected status, such as 5xx (503). */
  | 'ERR_UPSTREAM_STATUS'
  /** The group service answered 429 Too Many Requests (503). */
  | 'ERR_UPSTREAM_RATE_LIMITED'
  /** The group service answered with a redirect, which is never followed (503). */
  | 'ERR_UPSTREAM_REDIRECT'
  /** The group service answered with a body that is not JSON of the expected shape (503). */
  | 'ERR_UPSTREAM_BODY'
  /** The group service answered with a body larger than `maxResponseBytes` (503). */
  | 'ERR_UPSTREAM_BODY_TOO_LARGE'
  /** Too many upstream calls are already in flight (503). */
  | 'ERR_UPSTREAM_OVERLOADED'
  /** The circuit breaker is open after a run of upstream failures (503). */
  | 'ERR_UPSTREAM_CIRCUIT_OPEN'
  /** The caller's own `AbortSignal` fired before an answer was available. */
  | 'ERR_ABORTED'
  /** A group id that cannot be sent safely: empty, `.`/`..`, control characters, too long. */
  | 'ERR_INVALID_GROUP_ID'
  /** An argument of a function call is invalid (a requirement, a role, ...). */
  | 'ERR_INVALID_ARGUMENT'
  /** An option given to a factory is invalid; the message names the option. */
  | 'ERR_INVALID_OPTION'
  /** An OAuth/OIDC protocol error (an `error` response, a failed check). */
  | 'ERR_OAUTH'

/**
 * Options shared by the constructors of every {@link VootError}.
 *
 * @example
 * ```ts
 * throw new InvalidTokenError('The access token has expired', { cause: error })
 * ```
 */
export interface VootErrorOptions {
  /** The underlying error. Never a value that contains a token. */
  cause?: unknown
  /** Extra response headers, merged over the class's own. */
  headers?: Readonly<Record<string, string>>
}

/**
 * Base class of every error voot-guard throws on purpose.
 *
 * @example
 * ```ts
 * import { VootError } from 'voot-guard'
 * app.use((err, req, res, next) => {
 *   if (err instanceof VootError) return res.status(err.status).set(err.headers).json({ error: err.code })
 *   next(err)
 * })
 * ```
 */
export class VootError extends Error {
  /** Stable machine-readable code. */
  readonly code: VootErrorCode
  /** HTTP status an adapter answers with. */
  readonly status: number
  /** Alias of {@link VootError.status}, read by some frameworks. */
  readonly statusCode: number
  /** Response headers the answer needs (`WWW-Authenticate`, `Retry-After`). */
  readonly headers: Readonly<Record<string, string>>
  /** Whether `message` is safe to show to a client (true for 4xx, false for 5xx). */
  readonly expose: boolean

  constructor(code: VootErrorCode, message: string, status: number, options: VootErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    this.name = new.target.name
    this.code = code
    this.status = status
    this.statusCode = status
    this.headers = Object.freeze({ ...options.headers })
    this.expose = status < 500
  }
}

/**
 * The request carries no bearer token (no `Authorization` header, or another scheme).
 * Answered with 401 and a `WWW-Authenticate` challenge without an error attribute.
 *
 * @example
 * ```ts
 * throw new TokenMissingError('Bearer realm="api"')
 * ```
 */
export class TokenMissingError extends VootError {
  constructor(challenge = 'Bearer', options: VootErrorOptions = {}) {
    super('ERR_TOKEN_MISSING', 'The request carries no bearer token', 401, {
      ...options,
      headers: { 'www-authenticate': challenge, ...options.headers },
    })
  }
}

/**
 * The bearer token is empty, malformed (not RFC 6750 `b64token` syntax) or too long.
 * Answered with 400 and `error="invalid_request"`.
 *
 * @example
 * ```ts
 * throw new TokenMalformedError('The bearer token contains characters RFC 6750 does not allow')
 * ```
 */
export class TokenMalformedError extends VootError {
  constructor(message = 'The bearer token is malformed', options: VootErrorOptions = {}) {
    super('ERR_TOKEN_MALFORMED', message, 400, options)
  }
}

/**
 * The group service answered 401: the token is unknown, expired or malformed.
 *
 * @example
 * ```ts
 * if (err instanceof InvalidTokenError) redirectToLogin()
 * ```
 */
export class InvalidTokenError extends VootError {
  constructor(message = 'The access token is invalid or expired', options: VootErrorOptions = {}) {
    super('ERR_TOKEN_INVALID', message, 401, options)
  }
}

/**
 * The group service answered 403 on `me/*`: the token is a client-only token (client
 * credentials grant, no user) or lacks the `groups` scope.
 *
 * @example
 * ```ts
 * if (err instanceof InsufficientScopeError) askForConsentAgain()
 * ```
 */
export class InsufficientScopeError extends VootError {
  constructor(message = 'The access token is not a personal token with the groups scope', options: VootErrorOptions = {}) {
    super('ERR_INSUFFICIENT_SCOPE', message, 403, options)
  }
}

/**
 * Options of {@link ForbiddenError}.
 *
 * @example
 * ```ts
 * new ForbiddenError('This resource requires membership in the group fc:adhoc:1', { reason: 'not_member' })
 * ```
 */
export interface ForbiddenErrorOptions extends VootErrorOptions {
  /** Why the requirement was not met: the decision's reason. */
  reason?: DenialReason
}

/**
 * The token is valid but its user does not meet the requirement. A guard's refusal names
 * the requirement in its message (the answer's `error_description`; with the guard option
 * `denials: 'generic'`, the generic default) and carries the decision's `reason`, which
 * the answer does not show: it is for logs and the application's own error handling.
 *
 * @example
 * ```ts
 * app.use((err, req, res, next) => {
 *   if (err instanceof ForbiddenError) log.info({ reason: err.reason }, 'refused')
 *   next(err)
 * })
 * ```
 */
export class ForbiddenError extends VootError {
  /** Why the requirement was not met (`not_member`, `role_too_low`, ...), when a decision said so. */
  readonly reason: DenialReason | undefined

  constructor(message = 'The group requirement of this resource is not met', options: ForbiddenErrorOptions = {}) {
    super('ERR_FORBIDDEN', message, 403, options)
    this.reason = options.reason
  }
}

/**
 * Codes of {@link UpstreamError}: every way the group service can fail.
 *
 * @example
 * ```ts
 * const retryable = (code: UpstreamErrorCode) => code === 'ERR_UPSTREAM_NETWORK'
 * ```
 */
export type UpstreamErrorCode = Extract<
  VootErrorCode,
  | 'ERR_UPSTREAM_NETWORK'
  | 'ERR_UPSTREAM_TIMEOUT'
  | 'ERR_UPSTREAM_STATUS'
  | 'ERR_UPSTREAM_RATE_LIMITED'
  | 'ERR_UPSTREAM_REDIRECT'
  | 'ERR_UPSTREAM_BODY'
  | 'ERR_UPSTREAM_BODY_TOO_LARGE'
  | 'ERR_UPSTREAM_OVERLOADED'
  | 'ERR_UPSTREAM_CIRCUIT_OPEN'
>

/**
 * Options of {@link UpstreamError}.
 *
 * @example
 * ```ts
 * new UpstreamError('ERR_UPSTREAM_RATE_LIMITED', 'rate-limited', { upstreamStatus: 429, retryAfter: 30, endpoint: 'me/groups' })
 * ```
 */
export interface UpstreamErrorOptions extends VootErrorOptions {
  /** The upstream HTTP status, when there was an answer. */
  upstreamStatus?: number
  /** Seconds after which a retry makes sense (from a 429's `Retry-After`, or a cool-down). */
  retryAfter?: number
  /** The endpoint that failed, as a template such as `me/groups/{groupid}` (never a token). */
  endpoint?: string
}

/**
 * The group service failed, so the answer is unknown. Fails closed: adapters answer 503
 * with `Retry-After`, never "allowed" and never "not a member".
 *
 * @example
 * ```ts
 * try { await resolver.check(token, group('fc:org:example.org')) } catch (err) {
 *   if (err instanceof UpstreamError) console.warn('group service down:', err.code, err.upstreamStatus)
 * }
 * ```
 */
export class UpstreamError extends VootError {
  declare readonly code: UpstreamErrorCode
  /** The upstream HTTP status, when there was an answer. */
  readonly upstreamStatus: number | undefined
  /** Seconds after which a retry makes sense, when known. */
  readonly retryAfter: number | undefined
  /** The endpoint template that failed. */
  readonly endpoint: string | undefined

  constructor(code: UpstreamErrorCode, message: string, options: UpstreamErrorOptions = {}) {
    super(code, message, 503, options)
    this.upstreamStatus = options.upstreamStatus
    this.retryAfter = options.retryAfter
    this.endpoint = options.endpoint
  }
}

/**
 * The caller's `AbortSignal` fired before an answer was available. Other callers that
 * share the same upstream call are not affected.
 *
 * @example
 * ```ts
 * await resolver.groups(token, { signal: AbortSignal.timeout(100) })
 * ```
 */
export class AbortedError extends VootError {
  constructor(options: VootErrorOptions = {}) {
    super('ERR_ABORTED', 'The operation was aborted by the caller', 499, options)
  }
}

/**
 * A group id that cannot be sent as one path segment: empty, `.` or `..` (or their
 * encodings), containing control characters, or longer than 1024 characters.
 *
 * @example
 * ```ts
 * group('..') // throws InvalidGroupIdError
 * ```
 */
export class InvalidGroupIdError extends VootError {
  constructor(message: string, options: VootErrorOptions = {}) {
    super('ERR_INVALID_GROUP_ID', message, 400, options)
  }
}

/**
 * An invalid argument to a function: a malformed requirement, an unknown role, ...
 *
 * @example
 * ```ts
 * anyOf() // throws InvalidArgumentError: anyOf() needs at least one requirement
 * ```
 */
export class InvalidArgumentError extends VootError {
  constructor(message: string, options: VootErrorOptions = {}) {
    super('ERR_INVALID_ARGUMENT', message, 500, options)
  }
}

/**
 * An invalid option given to a factory. Thrown at creation, never per request; the
 * message names the option.
 *
 * @example
 * ```ts
 * createMembershipResolver({ baseUrl: 'ftp://x' }) // throws InvalidOptionError: options.baseUrl ...
 * ```
 */
export class InvalidOptionError extends VootError {
  /** Dotted path of the offending option, such as `cache.ttl`. */
  readonly option: string

  constructor(option: string, message: string, options: VootErrorOptions = {}) {
    super('ERR_INVALID_OPTION', `options.${option}: ${message}`, 500, options)
    this.option = option
  }
}
