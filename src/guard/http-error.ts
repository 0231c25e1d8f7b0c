/**
 * The HTTP contract of the adapters (docs/http-contract.md): which status, which
 * `WWW-Authenticate` challenge, which JSON body each error becomes. Adapters only copy
 * these onto their framework's response.
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
 * A complete error answer: status, headers and body, ready to be written.
 *
 * @example
 * ```ts
 * const answer = renderer.answer(err)
 * res.status(answer.status).set(answer.headers).json(answer.body)
 * ```
 */
export interface HttpErrorAnswer {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly body: HttpErrorBody
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
   * `undefined` for any error outside the contract.
   */
  answer(error: unknown): HttpErrorAnswer | undefined
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

    answer(error) {
      if (!(error instanceof VootError)) return undefined
      const code = error instanceof UpstreamError ? 'temporarily_unavailable' : BODY_ERROR[error.code]
      if (code === undefined) return undefined
      const description =
        code === 'temporarily_unavailable' ? 'The group service is temporarily unavailable; try again later' : error.message
      return {
        status: error.status,
        headers: { ...error.headers, 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' },
        body: { error: code, error_description: description },
      }
    },
  }
}
