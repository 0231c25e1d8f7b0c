/**
 * The adapter kit's pieces for Web-standard `Request`/`Response` frameworks (fetch
 * handlers, Hono): the `Authorization` header read from a `Headers` object, the contract's
 * answer as a `Response`, and the HTTP error that can turn itself into one.
 *
 * @module
 */
import type { VootError } from '../errors.js'
import type { HttpErrorAnswer } from './http-error.js'

/**
 * What {@link authorizationOfHeaders} needs: a Web `Headers` object, or anything with its
 * `get`.
 *
 * @example
 * ```ts
 * const headers: HeaderReader = request.headers
 * ```
 */
export interface HeaderReader {
  get(name: string): string | null
}

// RFC 9110 token characters; an auth-param is `token BWS "=" ...`.
const TOKEN_START = /^[!#$%&'*+.^_`|~0-9A-Za-z-]/
const AUTH_PARAM = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+[ \t]*=/

/**
 * The request's `Authorization` value, like `authorizationOf` for Node requests: a string,
 * every credential (an array) when the request carried several, or `undefined`.
 *
 * Web `Headers` join repeated headers with `", "`, so two `Authorization` headers arrive as
 * one value. A single credential only has commas between its auth-params (`name=value`);
 * anything else after a comma (outside a quoted string) starts another credential. So
 * `Bearer a, Bearer b` is two (400, as in Express) while `Digest a="x, y", b=c` is one.
 * Bearer tokens never hold a comma, so the usual header skips the scan.
 *
 * @example
 * ```ts
 * authorizationOfHeaders(new Headers({ authorization: 'Bearer abc' })) // 'Bearer abc'
 * authorizationOfHeaders(new Headers([['authorization', 'Bearer a'], ['authorization', 'Bearer b']])) // ['Bearer a', 'Bearer b']
 * ```
 */
export function authorizationOfHeaders(headers: HeaderReader): string | readonly string[] | undefined {
  const value = headers.get('authorization')
  if (value === null) return undefined
  if (!value.includes(',')) return value
  const credentials: string[] = []
  let start = 0
  let quoted = false
  for (let i = 0; i < value.length; i++) {
    const char = value[i]
    if (quoted) {
      if (char === '\\') i++
      else if (char === '"') quoted = false
    } else if (char === '"') {
      quoted = true
    } else if (char === ',') {
      const rest = value.slice(i + 1).trimStart()
      if (TOKEN_START.test(rest) && !AUTH_PARAM.test(rest)) {
        credentials.push(value.slice(start, i).trim())
        start = i + 1
      }
    }
  }
  credentials.push(value.slice(start).trim())
  return credentials.length === 1 ? credentials[0] : credentials
}

/**
 * The contract's answer as a Web `Response` of the runtime's global class.
 *
 * @example
 * ```ts
 * const answer = core.answer(error)
 * if (answer !== undefined) return answerResponse(answer)
 * ```
 */
export function answerResponse(answer: HttpErrorAnswer): Response {
  return new Response(answer.text, { status: answer.status, headers: answer.headers })
}

/**
 * The adapter kit's HTTP error: a `VootError` (with `code`, `status`, `statusCode`,
 * `headers`, `expose`) that also renders the contract's answer as a `Response`.
 *
 * @example
 * ```ts
 * try {
 *   await guard.requireGroup(id)(request)
 * } catch (error) {
 *   if (isHttpError(error)) return error.toResponse()
 *   throw error
 * }
 * ```
 */
export type HttpError = VootError & {
  /** The contract's answer (status, headers, JSON body) as a new `Response`. */
  toResponse(): Response
}

/**
 * Gives a contract error (one that `core.answer` answered) its `toResponse()`. The error
 * is the fresh one `core.authorizeNow` rejected with, so adding to it touches no shared object.
 *
 * @example
 * ```ts
 * const answer = core.answer(error)
 * if (answer !== undefined) throw withResponse(error as VootError, answer)
 * ```
 */
export function withResponse(error: VootError, answer: HttpErrorAnswer): HttpError {
  return Object.defineProperty(error, 'toResponse', { value: () => answerResponse(answer), enumerable: false }) as HttpError
}

/**
 * Whether `value` is an {@link HttpError} a guard threw in `errorHandling: 'delegate'` mode.
 *
 * @example
 * ```ts
 * if (isHttpError(error)) return error.toResponse()
 * ```
 */
export function isHttpError(value: unknown): value is HttpError {
  return value instanceof Error && typeof (value as Partial<HttpError>).toResponse === 'function'
}
