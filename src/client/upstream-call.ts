/**
 * One call to the group service over the network: the deadline for the whole exchange,
 * no redirects, the body limit, the status and body checks, and errors that never carry
 * the bearer token. The groups client (`groups-client.ts`) builds each call; this module
 * sends it through the runtime's transport (`transport.ts`), the same rules on every runtime.
 *
 * @module
 */
import { AbortedError, InsufficientScopeError, InvalidTokenError, UpstreamError, VootError } from '../errors.js'
import type { UpstreamErrorCode } from '../errors.js'
import type { ResolvedGroupsClientOptions } from './options.js'
import { BodyShapeError, parseJson } from './parse.js'
import { parseRetryAfter } from './retry-after.js'
import { sendBy, SendExpiredError } from './send-by.js'
import type { Transport, UpstreamResponse } from './transport.js'

/**
 * The endpoint templates, as they appear in `UpstreamError.endpoint`.
 */
export type GroupsEndpoint = 'me/groups' | 'me/groups/{groupid}' | 'groups/{groupid}' | 'groups/{groupid}/members' | 'groups' | 'grouptypes'

/**
 * Every endpoint a call may name: the six, and OpenConext's health, which `verify()` asks
 * one `/groups` above the base URL (`service-root.ts`).
 */
export type CallEndpoint = GroupsEndpoint | 'internal/health'

const JSON_MEDIA_TYPE = /^(?:application\/json|[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]*\+json)\s*(?:;.*)?$/i

export interface Call {
  readonly endpoint: CallEndpoint
  /** Path and query, starting with the base path; every group id already encoded. */
  readonly path: string
  readonly token: string | undefined
  readonly signal: AbortSignal | undefined
  /** Whether a 404 means "no such membership/group" ({@link NOT_FOUND}) rather than a failure. */
  readonly notFoundIsNull: boolean
}

/**
 * What {@link send} resolves with for a 404 that means "no such membership/group". Not
 * `null`: a 200 whose JSON body is `null` is a broken answer (503), never "not a member".
 */
export const NOT_FOUND: unique symbol = Symbol('not found')

/**
 * One upstream call: resolves to the parsed JSON of a 200, or {@link NOT_FOUND} for a 404 when
 * `spec.notFoundIsNull`; rejects with a `VootError` otherwise.
 */
export async function send(settings: ResolvedGroupsClientOptions, transport: Transport, spec: Call): Promise<unknown> {
  const { endpoint, signal: callerSignal } = spec
  if (callerSignal?.aborted) throw new AbortedError({ cause: callerSignal.reason })
  // A call that must wait for a slot is not sent after this (see send-by.ts).
  const last = sendBy(performance.now(), settings.timeout)

  // One controller per call instead of AbortSignal.any([caller, AbortSignal.timeout()]):
  // `any` keeps every combined signal alive as long as the caller's (possibly
  // process-wide) signal lives (nodejs/node#54614, #55351), and `timeout` keeps its timer
  // until it fires. Here the timer is cleared and the listener removed when the call ends.
  const controller = new AbortController()
  let abortedBy: 'timeout' | 'caller' | undefined
  // The controller's reasons are always DOMExceptions, never the caller's reason: a
  // rejection that is a VootError is then certainly one of ours, not an abort.
  const onCallerAbort = (): void => {
    abortedBy ??= 'caller'
    controller.abort(new DOMException('The caller gave up', 'AbortError'))
  }
  const timer = setTimeout(() => {
    abortedBy ??= 'timeout'
    controller.abort(new DOMException('The group service did not answer in time', 'TimeoutError'))
  }, settings.timeout)
  callerSignal?.addEventListener('abort', onCallerAbort, { once: true })

  let response: UpstreamResponse | undefined
  // Set once the status line arrived: a connection lost after it is not a failure "before
  // any answer", and must not be retried as one.
  let answeredStatus: number | undefined
  try {
    const headers: Record<string, string> = { accept: 'application/json', 'user-agent': settings.userAgent }
    if (spec.token !== undefined) headers['authorization'] = `Bearer ${spec.token}`
    response = await transport.request(settings.origin + spec.path, headers, controller.signal, last)
    answeredStatus = response.status
    return await readResponse(response, spec, settings.maxResponseBytes)
  } catch (err) {
    if (err instanceof VootError) throw err
    // Refused unsent because it waited for a slot until its deadline was all but over.
    if (abortedBy === 'timeout' || err instanceof SendExpiredError) {
      throw new UpstreamError('ERR_UPSTREAM_TIMEOUT', `The group service did not answer ${endpoint} within ${settings.timeout} ms`, {
        endpoint,
      })
    }
    if (abortedBy === 'caller') throw new AbortedError({ cause: callerSignal?.reason })
    const cause = withoutSecret(err, spec.token)
    if (answeredStatus !== undefined) {
      throw new UpstreamError('ERR_UPSTREAM_NETWORK', `The connection to the group service broke while it answered ${endpoint}`, {
        endpoint,
        upstreamStatus: answeredStatus,
        cause,
      })
    }
    throw new UpstreamError('ERR_UPSTREAM_NETWORK', `The group service could not be reached for ${endpoint}`, { endpoint, cause })
  } finally {
    clearTimeout(timer)
    callerSignal?.removeEventListener('abort', onCallerAbort)
    // An unread body holds its connection until it is released.
    response?.discard()
  }
}

async function readResponse(response: UpstreamResponse, spec: Call, maxResponseBytes: number): Promise<unknown> {
  const { status } = response
  const { endpoint } = spec
  if (status !== 200) {
    await response.drain()
    if (status === 404 && spec.notFoundIsNull) return NOT_FOUND
    throw statusError(status, response, endpoint)
  }

  const contentType = response.header('content-type')
  if (contentType === undefined || !JSON_MEDIA_TYPE.test(contentType.trim())) {
    throw upstream('ERR_UPSTREAM_BODY', `The group service answered ${endpoint} with a body that is not JSON`, endpoint, status)
  }
  const contentEncoding = response.header('content-encoding')
  if (!response.decodesContent && contentEncoding !== undefined && !/^\s*identity\s*$/i.test(contentEncoding)) {
    // No Accept-Encoding is sent, so an encoded body is unexpected and is not decoded.
    throw upstream('ERR_UPSTREAM_BODY', `The group service answered ${endpoint} with an encoded body`, endpoint, status)
  }
  const tooLarge = (): UpstreamError =>
    upstream(
      'ERR_UPSTREAM_BODY_TOO_LARGE',
      `The group service answered ${endpoint} with a body larger than ${maxResponseBytes} bytes`,
      endpoint,
      status,
    )
  const declaredLength = response.header('content-length')
  if (declaredLength !== undefined && Number(declaredLength) > maxResponseBytes) throw tooLarge()

  const bytes = await response.read(maxResponseBytes, tooLarge)
  try {
    // RFC 8259: JSON between systems is UTF-8; a leading BOM is dropped by the decoder.
    const text = new TextDecoder('utf-8', { fatal: true }).decode(bytes)
    return parseJson(text)
  } catch (err) {
    const reason = err instanceof BodyShapeError ? err.message : 'the body is not valid UTF-8'
    throw upstream('ERR_UPSTREAM_BODY', `The group service answered ${endpoint} with a bad body: ${reason}`, endpoint, status)
  }
}

function statusError(status: number, response: UpstreamResponse, endpoint: CallEndpoint): VootError {
  if (status === 401) return new InvalidTokenError()
  if (status === 403) {
    // The upstream's own message is left out: it could echo parts of the request.
    return new InsufficientScopeError(
      endpoint.startsWith('me/')
        ? `The group service refused ${endpoint}: it requires a personal token with the groups scope`
        : `The group service refused ${endpoint} for this token`,
    )
  }
  if (status === 429) {
    const retryAfter = parseRetryAfter(response.header('retry-after'))
    return new UpstreamError('ERR_UPSTREAM_RATE_LIMITED', `The group service rate-limited ${endpoint}`, {
      endpoint,
      upstreamStatus: status,
      ...(retryAfter === undefined ? {} : { retryAfter, headers: { 'retry-after': String(retryAfter) } }),
    })
  }
  if (status >= 300 && status < 400) {
    return upstream(
      'ERR_UPSTREAM_REDIRECT',
      `The group service answered ${endpoint} with a redirect (${status}), which is never followed`,
      endpoint,
      status,
    )
  }
  return upstream('ERR_UPSTREAM_STATUS', `The group service answered ${endpoint} with status ${status}`, endpoint, status)
}

function upstream(code: UpstreamErrorCode, message: string, endpoint: CallEndpoint, status: number): UpstreamError {
  return new UpstreamError(code, message, { endpoint, upstreamStatus: status })
}

export function parsed<T>(endpoint: GroupsEndpoint, parse: () => T): T {
  try {
    return parse()
  } catch (err) {
    if (!(err instanceof BodyShapeError)) throw err
    throw new UpstreamError('ERR_UPSTREAM_BODY', `The group service answered ${endpoint} with a bad body: ${err.message}`, {
      endpoint,
      upstreamStatus: 200,
    })
  }
}

/**
 * Returns `err`, or a stand-in when anything reachable from it (message, stack, string
 * properties, causes) contains the token. undici's own errors never do, but a custom
 * dispatcher's might (undici's MockAgent puts the request headers into its message).
 */
function withoutSecret(err: unknown, token: string | undefined): unknown {
  if (token === undefined || !mentions(err, token, 0, new Set())) return err
  const standIn = new Error('The underlying network error was withheld because it contained the bearer token')
  const code = (err as { code?: unknown } | null)?.code
  if (typeof code === 'string' && !code.includes(token)) Object.assign(standIn, { code })
  return standIn
}

function mentions(value: unknown, secret: string, depth: number, seen: Set<object>): boolean {
  if (typeof value === 'string') return value.includes(secret)
  if (typeof value !== 'object' || value === null || seen.has(value) || ArrayBuffer.isView(value)) return false
  // Deeper than this is not an error object worth keeping: withhold it.
  if (depth > 5) return true
  seen.add(value)
  try {
    if (value instanceof Error && (mentions(value.message, secret, depth, seen) || mentions(value.stack, secret, depth, seen))) {
      return true
    }
    // `cause` and AggregateError's `errors` are own but not enumerable.
    const keys = [...Object.keys(value), ...(value instanceof Error ? ['cause', 'errors'] : [])]
    return keys.some((key) => mentions((value as Record<string, unknown>)[key], secret, depth + 1, seen))
  } catch {
    return true
  }
}
