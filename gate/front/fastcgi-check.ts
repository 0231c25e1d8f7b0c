/**
 * The gate as a FastCGI authorizer (Apache httpd's mod_authnz_fcgi): the request's params
 * become the request the check endpoints read, and the check's answer becomes the
 * authorizer's response: on 200, `Variable-` headers (Apache turns them into environment
 * variables, which its `RequestHeader` passes to the app); otherwise the status and the
 * headers the client should get (`WWW-Authenticate`, `Location`, `Retry-After`).
 *
 * The original request is read from what Apache itself set, never from a header a client
 * sent: `REQUEST_METHOD`, `REQUEST_SCHEME`, `SERVER_NAME` (the host the virtual host serves
 * with `UseCanonicalName On`), and `REQUEST_URI` (the request line's target, raw). The one
 * exception is the port, as nginx's snippet takes it: the one the browser wrote in its
 * `Host` header (`HTTP_HOST`; none there is the scheme's default), so that the sign-in
 * links the gate builds lead back to the port the browser used. `SERVER_PORT` is the
 * ServerName's port, 80 when it names none even where Apache listens on another; it is read
 * only for a request without `Host`. The port decides no rule and no session: rules match
 * the host without it, and sessions are bound to the host. The credentials and the
 * browser's `Accept` come from the client's headers as Apache passes them
 * (`HTTP_AUTHORIZATION` only with `CGIPassAuth On`).
 *
 * @module
 */
import { STATUS_CODES } from 'node:http'
import type { Answer } from '../http/answer.js'
import type { CheckHandler } from './check.js'
import type { GateSettings } from '../config/types.js'
import type { FastCgiAnswer, FastCgiAuthorizer, FastCgiRequest } from './fastcgi.js'
import type { ProxyRequest } from '../http/original-request.js'

/** The client headers an authorizer reads, by the param Apache passes each in. */
const CLIENT_HEADERS = [
  ['authorization', 'HTTP_AUTHORIZATION'],
  ['cookie', 'HTTP_COOKIE'],
  ['accept', 'HTTP_ACCEPT'],
  ['x-request-id', 'HTTP_X_REQUEST_ID'],
] as const

/** The environment variable a header of the answer becomes: `X-Voot-User` is `X_VOOT_USER` (never a client header's `HTTP_` name). */
export function variableName(header: string): string {
  return header.toUpperCase().replace(/[^A-Z0-9]/g, '_')
}

/** A header value that a CGI-style response can carry (no line breaks or other controls). */
const SAFE_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/

/** The authorizer's answer when the gate itself failed: fail closed, and say when to try again. */
export const FASTCGI_UNAVAILABLE: FastCgiAnswer = 'Status: 503 Service Unavailable\r\nRetry-After: 5\r\nCache-Control: no-store\r\n\r\n'

/**
 * The request the check endpoints read, made from the params: the original request in
 * the `X-Forwarded-*` headers `forward-auth` reads (so that both read it the same way),
 * from values only Apache sets; the client's credentials and `Accept` as their own headers.
 * A param that is missing leaves its header out, and the check answers 401.
 */
export function proxyRequestOf(request: FastCgiRequest): ProxyRequest {
  const { params } = request
  const rawHeaders: string[] = []
  const headers: Record<string, string> = {}
  const add = (name: string, value: string | undefined) => {
    if (value === undefined) return
    rawHeaders.push(name, value)
    headers[name] = value
  }
  const scheme = params.get('REQUEST_SCHEME')
  add('x-forwarded-method', params.get('REQUEST_METHOD'))
  add('x-forwarded-proto', scheme)
  const browserPort = portOfHost(params.get('HTTP_HOST'))
  add('x-forwarded-host', authorityOf(params.get('SERVER_NAME'), browserPort ?? params.get('SERVER_PORT'), scheme))
  const target = params.get('REQUEST_URI')
  // The request line's target; an absolute-form one ("GET http://host/path") names a host of its own: not read.
  add('x-forwarded-uri', target?.startsWith('/') === true ? target : undefined)
  for (const [header, param] of CLIENT_HEADERS) {
    // mod_unique_id's id of this request (Apache's own, in its access log as %{UNIQUE_ID}e)
    // is the decision log's requestId; a client's X-Request-Id only where Apache has none.
    add(header, header === 'x-request-id' ? (params.get('UNIQUE_ID') ?? params.get(param)) : params.get(param))
  }
  return { method: 'GET', headers, rawHeaders, socket: { remoteAddress: request.remoteAddress } }
}

/**
 * The port of a `Host` header (`''` when it names none: the scheme's default), or
 * `undefined` when there is no `Host`, or none of the shape Apache accepts.
 */
function portOfHost(host: string | undefined): string | undefined {
  if (host === undefined) return undefined
  const match = /^(?:\[[0-9A-Fa-f:.]+\]|[^:[\]\s]+)(?::(\d{1,5}))?$/.exec(host)
  return match === null ? undefined : (match[1] ?? '')
}

/** `SERVER_NAME` with the port, left out when it is `''` or the scheme's default (as a browser writes the URL). */
function authorityOf(name: string | undefined, port: string | undefined, scheme: string | undefined): string | undefined {
  if (name === undefined || port === undefined || !/^(\d{1,5})?$/.test(port)) return undefined
  const lower = scheme?.toLowerCase()
  if (port === '' || (lower === 'http' && port === '80') || (lower === 'https' && port === '443')) return name
  // Apache writes an IPv6 SERVER_NAME in brackets already; a bare one is bracketed here.
  const host = name.includes(':') && !name.startsWith('[') ? `[${name}]` : name
  return `${host}:${port}`
}

/**
 * The CGI-style response for Apache: on 200, the gate's headers for the app as `Variable-`
 * headers only (any other header of a 200 would reach the client with the app's answer);
 * otherwise the status and the headers for the client. No body: Apache serves a refusal
 * with its own error page (or the `ErrorDocument`), as `text/html`, so the gate's JSON is
 * not sent where it would be mislabelled.
 */
export function fastCgiAnswerOf(answer: Answer, settings: GateSettings): FastCgiAnswer | undefined {
  const lines = [`Status: ${answer.status} ${STATUS_CODES[answer.status] ?? ''}`.trimEnd()]
  const { user, rule, service, token } = settings.headers
  const forApp = new Set([user, rule, service, token].map((name) => name?.toLowerCase()))
  for (const name in answer.headers) {
    const value = answer.headers[name] as string | readonly string[]
    const values = typeof value === 'string' ? [value] : value
    if (answer.status === 200) {
      if (forApp.has(name.toLowerCase())) lines.push(...values.map((each) => `Variable-${variableName(name)}: ${each}`))
      continue
    }
    if (name === 'content-type' || name === 'content-length') continue
    lines.push(...values.map((each) => `${name}: ${each}`))
  }
  // A value that would break the response's framing (from a provider's `sub`, say) is never written.
  for (const line of lines) if (!SAFE_VALUE.test(line)) return undefined
  return `${lines.join('\r\n')}\r\n\r\n`
}

/**
 * The authorizer: each FastCGI request through the gate's check (as protocol `fastcgi`).
 *
 * @example
 * ```ts
 * const server = createFastCgiServer({ authorize: createFastCgiAuthorizer(check, settings), trusted, unavailable: FASTCGI_UNAVAILABLE })
 * ```
 */
export function createFastCgiAuthorizer(check: CheckHandler, settings: GateSettings): FastCgiAuthorizer {
  const respond = (answer: Answer): FastCgiAnswer => fastCgiAnswerOf(answer, settings) ?? FASTCGI_UNAVAILABLE
  return (request) => {
    const answer = check('fastcgi', proxyRequestOf(request), '')
    return answer instanceof Promise ? answer.then(respond) : respond(answer)
  }
}
