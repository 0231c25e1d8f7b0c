/**
 * The OAuth client's only way onto the network: one undici `request` per call, with a
 * deadline over the whole call (headers and body), a cap on the body size, and no
 * redirect following. Transport failures become {@link UpstreamError}s that name the
 * endpoint by its role (`token`, `jwks`, ...) and never hold a credential.
 *
 * @module
 */
import { request, type Dispatcher } from 'undici'
import { UpstreamError } from '../src/errors.js'

/** Which provider endpoint a call goes to; used in error messages instead of the URL. */
export type EndpointRole = 'discovery' | 'jwks' | 'token' | 'userinfo' | 'pushed_authorization_request'

/** One HTTP exchange. */
export interface HttpRequest {
  readonly role: EndpointRole
  readonly method: 'GET' | 'POST'
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
  readonly body?: string
}

/** A complete answer whose status was not a redirect. */
export interface HttpResponse {
  readonly status: number
  readonly headers: Readonly<Record<string, string | string[] | undefined>>
  readonly body: string
}

/** Limits shared by every call of one client. */
export interface HttpLimits {
  readonly timeout: number
  readonly maxResponseBytes: number
  readonly dispatcher: Dispatcher | undefined
}

/** Sends HTTP requests within the given limits. */
export type HttpSend = (req: HttpRequest) => Promise<HttpResponse>

/**
 * Creates the send function of one client.
 *
 * @example
 * ```ts
 * const send = createHttpSend({ timeout: 5_000, maxResponseBytes: 1 << 20, dispatcher: undefined })
 * const res = await send({ role: 'jwks', method: 'GET', url: jwksUri, headers: { accept: 'application/json' } })
 * ```
 */
export function createHttpSend(limits: HttpLimits): HttpSend {
  return async (req) => {
    const controller = new AbortController()
    const timer = setTimeout(() => controller.abort(), limits.timeout)
    try {
      let res: Dispatcher.ResponseData
      try {
        res = await request(req.url, {
          method: req.method,
          headers: req.headers,
          ...(req.body === undefined ? {} : { body: req.body }),
          signal: controller.signal,
          // A dispatcher with undici's redirect interceptor would otherwise follow redirects.
          ...({ maxRedirections: 0 } as object),
          ...(limits.dispatcher === undefined ? {} : { dispatcher: limits.dispatcher }),
        })
      } catch (err) {
        throw transportError(req.role, controller.signal.aborted, limits.timeout, err)
      }
      const status = res.statusCode
      if (status >= 300 && status < 400) {
        res.body.destroy()
        throw new UpstreamError('ERR_UPSTREAM_REDIRECT', `The ${req.role} endpoint answered with a redirect, which is not followed`, {
          upstreamStatus: status,
          endpoint: req.role,
        })
      }
      const body = await readBody(res, req.role, limits, controller.signal)
      return { status, headers: res.headers, body }
    } finally {
      clearTimeout(timer)
    }
  }
}

async function readBody(res: Dispatcher.ResponseData, role: EndpointRole, limits: HttpLimits, signal: AbortSignal): Promise<string> {
  const declared = Number(res.headers['content-length'])
  if (Number.isFinite(declared) && declared > limits.maxResponseBytes) {
    res.body.destroy()
    throw tooLarge(role, limits, res.statusCode)
  }
  const chunks: Buffer[] = []
  let size = 0
  try {
    for await (const chunk of res.body) {
      const buf = chunk as Buffer
      size += buf.length
      if (size > limits.maxResponseBytes) {
        res.body.destroy()
        throw tooLarge(role, limits, res.statusCode)
      }
      chunks.push(buf)
    }
  } catch (err) {
    if (err instanceof UpstreamError) throw err
    throw transportError(role, signal.aborted, limits.timeout, err)
  }
  return Buffer.concat(chunks).toString('utf8')
}

function tooLarge(role: EndpointRole, limits: HttpLimits, status: number): UpstreamError {
  return new UpstreamError(
    'ERR_UPSTREAM_BODY_TOO_LARGE',
    `The ${role} endpoint answered with a body larger than ${limits.maxResponseBytes} bytes`,
    { upstreamStatus: status, endpoint: role },
  )
}

function transportError(role: EndpointRole, timedOut: boolean, timeout: number, err: unknown): UpstreamError {
  if (timedOut) {
    return new UpstreamError('ERR_UPSTREAM_TIMEOUT', `The ${role} endpoint did not answer within ${timeout} ms`, {
      endpoint: role,
    })
  }
  const code = typeof err === 'object' && err !== null && 'code' in err ? String(err.code) : 'unknown'
  // Only the error code is kept: undici errors are safe, but a cause chain is not ours to vouch for.
  return new UpstreamError('ERR_UPSTREAM_NETWORK', `The ${role} endpoint could not be reached (${code})`, {
    endpoint: role,
  })
}

/**
 * Parses a JSON body; `undefined` when it is not JSON.
 *
 * @example
 * ```ts
 * const doc = parseJson(res.body)
 * ```
 */
export function parseJson(body: string): unknown {
  try {
    return JSON.parse(body) as unknown
  } catch {
    return undefined
  }
}

/**
 * Whether `value` is a plain JSON object (not an array, not null).
 *
 * @example
 * ```ts
 * if (!isJsonObject(doc)) throw new OAuthValidationError('metadata', 'not a JSON object')
 * ```
 */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/**
 * The upstream error for a status the caller does not handle: 429 as rate limited,
 * anything else as an unexpected status.
 *
 * @example
 * ```ts
 * if (res.status !== 200) throw unexpectedStatus('jwks', res.status)
 * ```
 */
export function unexpectedStatus(role: EndpointRole, status: number): UpstreamError {
  if (status === 429) {
    return new UpstreamError('ERR_UPSTREAM_RATE_LIMITED', `The ${role} endpoint answered 429 Too Many Requests`, {
      upstreamStatus: status,
      endpoint: role,
    })
  }
  return new UpstreamError('ERR_UPSTREAM_STATUS', `The ${role} endpoint answered with unexpected status ${status}`, {
    upstreamStatus: status,
    endpoint: role,
  })
}
