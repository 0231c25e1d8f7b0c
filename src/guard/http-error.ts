/**
 * The HTTP contract of the adapters (docs/http-contract.md): which status, which
 * `WWW-Authenticate` challenge, which JSON body each error becomes, and, for a client whose
 * `Accept` names `application/problem+json`, the same answer as RFC 9457 problem details.
 * Adapters only copy these onto their framework's response.
 *
 * @module
 */
import {
  ForbiddenError,
  InsufficientScopeError,
  InvalidTokenError,
  TokenMalformedError,
  TokenMissingError,
  UpstreamError,
  VootError,
} from '../errors.js'

/**
 * The `error` member of a JSON error body.
 *
 * @example
 * ```ts
 * const code: HttpErrorCode = 'invalid_token'
 * ```
 */
export type HttpErrorCode =
  'unauthorized' | 'invalid_request' | 'invalid_token' | 'insufficient_scope' | 'forbidden' | 'temporarily_unavailable'

/**
 * A JSON error body: `{"error": "...", "error_description": "..."}`.
 *
 * @example
 * ```ts
 * const body: HttpErrorBody = { error: 'forbidden', error_description: 'The group requirement of this resource is not met' }
 * ```
 */
export interface HttpErrorBody {
  readonly error: HttpErrorCode
  readonly error_description: string
}

/**
 * An RFC 9457 problem details document, answered to a client whose `Accept` names
 * `application/problem+json`. It keeps the contract's `error` code and `error_description`
 * as extension members, so a client that reads either form understands both.
 *
 * @example
 * ```ts
 * const problem: ProblemDetails = {
 *   type: 'https://github.com/voot-guard/voot-guard/blob/main/docs/http-contract.md#forbidden',
 *   title: 'Group requirement not met',
 *   status: 403,
 *   detail: 'This resource requires membership in the group fc:adhoc:1',
 *   error: 'forbidden',
 *   error_description: 'This resource requires membership in the group fc:adhoc:1',
 * }
 * ```
 */
export interface ProblemDetails extends HttpErrorBody {
  /** A URI naming the problem: the section of docs/http-contract.md about this `error`. */
  readonly type: string
  /** A short summary of the problem type, the same for every occurrence. */
  readonly title: string
  /** The HTTP status. */
  readonly status: number
  /** This occurrence in words: the same text as `error_description`. */
  readonly detail: string
}

/**
 * A complete error answer: status, headers (`content-type` included) and body, ready to be
 * written. `text` is the body as it goes on the wire; write it verbatim.
 *
 * @example
 * ```ts
 * const answer = renderer.answer(err, req.headers.accept)
 * res.status(answer.status).set(answer.headers).send(answer.text)
 * ```
 */
export interface HttpErrorAnswer {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  /** The body as an object: the contract's JSON body, or problem details (which extend it). */
  readonly body: HttpErrorBody | ProblemDetails
  /** The body serialized, as the `content-type` header says. */
  readonly text: string
}

/**
 * Turns errors into the contract's HTTP errors for one realm.
 *
 * @example
 * ```ts
 * const renderer = createHttpErrorRenderer({ realm: 'api', retryAfter: 5 })
 * ```
 */
export interface HttpErrorRenderer {
  /**
   * A fresh error of the same class carrying the realm's `WWW-Authenticate` (or
   * `Retry-After`) header, or `undefined` for errors outside the contract (programming
   * errors, which belong to the framework's own error handling as a 500).
   */
  toHttpError(error: unknown): VootError | undefined
  /**
   * The complete answer for an error returned by {@link HttpErrorRenderer.toHttpError};
   * `undefined` for any error outside the contract. `accept` is the request's `Accept`
   * header: problem details when it names `application/problem+json` (at a quality not
   * below `application/json`'s), the contract's JSON otherwise (no header, `*\/*`,
   * `application/json`).
   */
  answer(error: unknown, accept?: string | null): HttpErrorAnswer | undefined
}

/**
 * Options of {@link createHttpErrorRenderer}.
 *
 * @example
 * ```ts
 * const options: HttpErrorRendererOptions = { realm: 'my-app', retryAfter: 5 }
 * ```
 */
export interface HttpErrorRendererOptions {
  /** The protection space named in challenges. */
  realm: string
  /** Seconds for `Retry-After` on a 503 when the upstream gave none. */
  retryAfter: number
}

/**
 * Quotes a value for an auth-param (RFC 9110 quoted-string): backslash and double quote
 * are escaped.
 *
 * @example
 * ```ts
 * quoteHeaderValue('my "api"') // '"my \\"api\\""'
 * ```
 */
export function quoteHeaderValue(value: string): string {
  return `"${value.replace(/[\\"]/g, '\\$&')}"`
}

/** Where each `error` is explained: a section of docs/http-contract.md, by its heading. */
const PROBLEM_TYPE_BASE = 'https://github.com/voot-guard/voot-guard/blob/main/docs/http-contract.md#'

const PROBLEM_TITLE: Readonly<Record<HttpErrorCode, string>> = {
  unauthorized: 'Authentication required',
  invalid_request: 'Malformed bearer token',
  invalid_token: 'Invalid or expired access token',
  insufficient_scope: 'Not a personal token with the groups scope',
  forbidden: 'Group requirement not met',
  temporarily_unavailable: 'Group service temporarily unavailable',
}

const JSON_TYPE = 'application/json; charset=utf-8'
const PROBLEM_TYPE = 'application/problem+json'
const PROBLEM_CONTENT_TYPE = 'application/problem+json; charset=utf-8'

/**
 * Whether an `Accept` header value asks for problem details: it names
 * `application/problem+json` with a quality above 0 and not below that of an
 * `application/json` it also names. Wildcards (`*\/*`, `application/*`) do not count: a
 * client that did not name the type gets the contract's JSON, as before.
 *
 * @example
 * ```ts
 * prefersProblemDetails('application/problem+json')                       // true
 * prefersProblemDetails('application/json, application/problem+json;q=0.5') // false
 * prefersProblemDetails('*\/*')                                            // false
 * ```
 */
export function prefersProblemDetails(accept: string | null | undefined): boolean {
  // The usual request does not mention it: one search and done.
  if (typeof accept !== 'string' || !accept.toLowerCase().includes('application/problem+json')) return false
  let problem = 0
  let json = 0
  for (const range of accept.split(',')) {
    const [name = '', ...params] = range.split(';')
    const type = name.trim().toLowerCase()
    if (type !== PROBLEM_TYPE && type !== 'application/json') continue
    let quality = 1
    for (const param of params) {
      const [key = '', value = ''] = param.split('=')
      // An unreadable quality counts as 0: not asked for.
      if (key.trim().toLowerCase() === 'q') quality = /^(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/.test(value.trim()) ? Number(value.trim()) : 0
    }
    if (type === PROBLEM_TYPE) problem = Math.max(problem, quality)
    else json = Math.max(json, quality)
  }
  return problem > 0 && problem >= json
}

const BODY_ERROR: Partial<Record<string, HttpErrorCode>> = {
  ERR_TOKEN_MISSING: 'unauthorized',
  ERR_TOKEN_MALFORMED: 'invalid_request',
  ERR_TOKEN_INVALID: 'invalid_token',
  ERR_INSUFFICIENT_SCOPE: 'insufficient_scope',
  ERR_FORBIDDEN: 'forbidden',
}

/**
 * Creates an {@link HttpErrorRenderer}. The challenge strings are built once here.
 *
 * @example
 * ```ts
 * const renderer = createHttpErrorRenderer({ realm: 'api', retryAfter: 5 })
 * const http = renderer.toHttpError(err)
 * ```
 */
export function createHttpErrorRenderer(options: HttpErrorRendererOptions): HttpErrorRenderer {
  const realm = `Bearer realm=${quoteHeaderValue(options.realm)}`
  const challenge = {
    missing: realm,
    malformed: `${realm}, error="invalid_request"`,
    invalid: `${realm}, error="invalid_token"`,
    scope: `${realm}, error="insufficient_scope", scope="groups"`,
  }
  const defaultRetryAfter = String(options.retryAfter)

  return {
    toHttpError(error) {
      if (!(error instanceof VootError)) return undefined
      const cause = { cause: error }
      if (error instanceof TokenMissingError) return new TokenMissingError(challenge.missing, cause)
      if (error instanceof TokenMalformedError) {
        return new TokenMalformedError(error.message, { ...cause, headers: { 'www-authenticate': challenge.malformed } })
      }
      if (error instanceof InvalidTokenError) {
        return new InvalidTokenError(error.message, { ...cause, headers: { 'www-authenticate': challenge.invalid } })
      }
      if (error instanceof InsufficientScopeError) {
        return new InsufficientScopeError(error.message, { ...cause, headers: { 'www-authenticate': challenge.scope } })
      }
      if (error instanceof ForbiddenError) return error
      if (error instanceof UpstreamError) {
        const retryAfter = error.retryAfter === undefined ? defaultRetryAfter : String(Math.max(1, Math.ceil(error.retryAfter)))
        const options = { ...cause, headers: { 'retry-after': retryAfter }, retryAfter: Number(retryAfter) }
        return new UpstreamError(
          error.code,
          error.message,
          error.upstreamStatus === undefined ? options : { ...options, upstreamStatus: error.upstreamStatus },
        )
      }
      return undefined
    },

    answer(error, accept) {
      if (!(error instanceof VootError)) return undefined
      const code = error instanceof UpstreamError ? 'temporarily_unavailable' : BODY_ERROR[error.code]
      if (code === undefined) return undefined
      const description =
        code === 'temporarily_unavailable' ? 'The group service is temporarily unavailable; try again later' : error.message
      const problem = prefersProblemDetails(accept)
      const body: HttpErrorBody | ProblemDetails = problem
        ? {
            type: PROBLEM_TYPE_BASE + code,
            title: PROBLEM_TITLE[code],
            status: error.status,
            detail: description,
            error: code,
            error_description: description,
          }
        : { error: code, error_description: description }
      return {
        status: error.status,
        headers: { ...error.headers, 'content-type': problem ? PROBLEM_CONTENT_TYPE : JSON_TYPE, 'cache-control': 'no-store' },
        body,
        text: JSON.stringify(body),
      }
    },
  }
}
