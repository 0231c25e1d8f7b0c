/**
 * Reading the `Authorization` header straight from Node's raw header list.
 *
 * @module
 */

/**
 * What the reader needs of a request: Node's `IncomingMessage` (and `Http2ServerRequest`)
 * have both.
 *
 * @example
 * ```ts
 * const request: RequestHeaders = { rawHeaders: ['Authorization', 'Bearer abc'] }
 * authorizationOf(request) // 'Bearer abc'
 * ```
 */
export interface RequestHeaders {
  readonly rawHeaders?: readonly string[]
  readonly headers?: { readonly authorization?: string | readonly string[] | undefined }
}

const NAME = 'authorization'

/**
 * The request's `Authorization` value: a string when there is one header, every value
 * (an array) when there are several, `undefined` when there is none.
 *
 * Read from `rawHeaders` rather than `headers`, for two reasons. Node keeps only the first
 * of several `Authorization` headers and drops the rest without a trace; a proxy in front
 * may have used the last one, so which user is meant is ambiguous, and the guard answers
 * 400 instead of choosing (`extractBearerToken` refuses an array). And `req.headers` is
 * built on first use, a cost the guard need not add to a request whose other middleware
 * never reads it. Requests without `rawHeaders` (a test double) fall back to `headers`.
 *
 * @example
 * ```ts
 * authorizationOf(req) // 'Bearer abc'
 * authorizationOf({ rawHeaders: ['Authorization', 'Bearer a', 'authorization', 'Bearer b'] }) // ['Bearer a', 'Bearer b']
 * ```
 */
export function authorizationOf(request: RequestHeaders): string | readonly string[] | undefined {
  const raw = request.rawHeaders
  if (!Array.isArray(raw)) return request.headers?.authorization
  let found: string | undefined
  let all: string[] | undefined
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i] as string
    // The length test first: most names are not 13 characters long.
    if (name.length !== NAME.length || name.toLowerCase() !== NAME) continue
    const value = raw[i + 1] as string
    if (found === undefined) found = value
    else (all ??= [found]).push(value)
  }
  return all ?? found
}
