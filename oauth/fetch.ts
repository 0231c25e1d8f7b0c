/**
 * The client's only way onto the network, openid-client's `customFetch`: undici, a deadline
 * over headers and body, a cap on the body, no redirects; failures are {@link UpstreamError}s
 * naming the endpoint by its role, never holding a credential.
 *
 * @module
 */
import { request, type Dispatcher } from 'undici'
import { UpstreamError } from '../src/index.js'

/** Which provider endpoint a call goes to; used in error messages instead of the URL. */
export type EndpointRole = 'discovery' | 'jwks' | 'token' | 'userinfo' | 'pushed_authorization_request'

/** Limits shared by every call of one client: deadline (ms), body size (bytes), dispatcher. */
export interface FetchLimits {
  readonly timeout: number
  readonly maxResponseBytes: number
  readonly dispatcher: Dispatcher | undefined
}

/** What openid-client (and discovery, and the JWKS cache) call to reach the provider. */
export type ProviderFetch = (url: string, init?: { method?: string; headers?: Record<string, string>; body?: unknown }) => Promise<Response>

// Form fields whose values are credentials: an answer that echoes one must have it redacted.
const SECRET_FIELDS = ['code', 'code_verifier', 'refresh_token', 'client_secret', 'client_assertion']

// Statuses whose Response must have no body.
const NULL_BODY = new Set([101, 204, 205, 304])

/**
 * The fetch function for calls to one endpoint role. Every credential it sends (form fields
 * such as `code`, the `authorization` and `dpop` headers) goes into `sent`, for redaction.
 */
export function providerFetch(limits: FetchLimits, role: EndpointRole, sent: string[] = []): ProviderFetch {
  return async (url, init = {}) => {
    const form = init.body instanceof URLSearchParams ? init.body : new URLSearchParams(typeof init.body === 'string' ? init.body : '')
    for (const field of SECRET_FIELDS) sent.push(...form.getAll(field))
    const { authorization, dpop } = init.headers ?? {}
    sent.push(...[authorization?.replace(/^\S+\s+/, ''), dpop].filter((value) => value !== undefined))
    const controller = new AbortController()
    const timer = setTimeout(() => controller.abort(), limits.timeout)
    try {
      let res: Dispatcher.ResponseData
      try {
        res = await request(url, {
          method: init.method ?? 'GET',
          headers: init.headers ?? {},
          body: typeof init.body === 'string' || init.body instanceof URLSearchParams ? init.body.toString() : null,
          signal: controller.signal,
          ...(limits.dispatcher === undefined ? {} : { dispatcher: limits.dispatcher }),
        })
      } catch (err) {
        throw transportError(role, controller.signal.aborted, limits.timeout, err)
      }
      if (res.statusCode >= 300 && res.statusCode < 400) {
        res.body.destroy()
        const text = `The ${role} endpoint answered with a redirect, which is not followed`
        throw new UpstreamError('ERR_UPSTREAM_REDIRECT', text, { upstreamStatus: res.statusCode, endpoint: role })
      }
      const body = await readBody(res, role, limits, controller.signal)
      const headers = new Headers()
      for (const [name, value] of Object.entries(res.headers)) {
        for (const one of Array.isArray(value) ? value : [value ?? '']) headers.append(name, one)
      }
      return new Response(NULL_BODY.has(res.statusCode) ? null : body, { status: res.statusCode, headers })
    } finally {
      clearTimeout(timer)
    }
  }
}

async function readBody(res: Dispatcher.ResponseData, role: EndpointRole, limits: FetchLimits, signal: AbortSignal): Promise<Buffer> {
  const declared = Number(res.headers['content-length'])
  let tooLarge = Number.isFinite(declared) && declared > limits.maxResponseBytes
  const chunks: Buffer[] = []
  let size = 0
  try {
    for await (const chunk of tooLarge ? [] : res.body) {
      size += (chunk as Buffer).length
      tooLarge = size > limits.maxResponseBytes
      if (tooLarge) break
      chunks.push(chunk as Buffer)
    }
  } catch (err) {
    throw transportError(role, signal.aborted, limits.timeout, err)
  }
  if (tooLarge) res.body.destroy()
  const text = `The ${role} endpoint answered with a body larger than ${limits.maxResponseBytes} bytes`
  if (tooLarge) throw new UpstreamError('ERR_UPSTREAM_BODY_TOO_LARGE', text, { upstreamStatus: res.statusCode, endpoint: role })
  return Buffer.concat(chunks)
}

function transportError(role: EndpointRole, timedOut: boolean, timeout: number, err: unknown): UpstreamError {
  const endpoint = { endpoint: role }
  if (timedOut) return new UpstreamError('ERR_UPSTREAM_TIMEOUT', `The ${role} endpoint did not answer within ${timeout} ms`, endpoint)
  const code = typeof err === 'object' && err !== null && 'code' in err ? String(err.code) : 'unknown'
  // Only the error code is kept: undici errors are safe, but a cause chain is not ours to vouch for.
  return new UpstreamError('ERR_UPSTREAM_NETWORK', `The ${role} endpoint could not be reached (${code})`, endpoint)
}

/** The upstream error for a status the caller does not handle (429 as rate limited). */
export function unexpectedStatus(role: EndpointRole, status: number): UpstreamError {
  const limited = status === 429
  return new UpstreamError(
    limited ? 'ERR_UPSTREAM_RATE_LIMITED' : 'ERR_UPSTREAM_STATUS',
    limited ? `The ${role} endpoint answered 429 Too Many Requests` : `The ${role} endpoint answered with unexpected status ${status}`,
    { upstreamStatus: status, endpoint: role },
  )
}

/** A JSON object body, or `undefined` when the body is not one. */
export async function jsonObject(res: Response): Promise<Record<string, unknown> | undefined> {
  try {
    const value: unknown = await res.json()
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined
  } catch {
    return undefined
  }
}
