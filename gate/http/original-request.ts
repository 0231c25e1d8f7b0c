/**
 * What each check endpoint learns about the request the proxy is asking about, from that
 * proxy's own headers only. A header that is missing, repeated or malformed leaves the
 * original request unknown, and the caller answers 401: never a guess from other headers.
 *
 * @module
 */
import type { IncomingHttpHeaders } from 'node:http'
import { isLoopbackHost } from '../../src/internal.js'
import { normaliseHost } from './path-normalise.js'

/** The request a proxy asks about. */
export interface OriginalRequest {
  /** Upper-case. */
  readonly method: string
  readonly scheme: 'http' | 'https'
  /** Lower-case, without port (rules match it). */
  readonly host: string
  /** The host as sent, with its port (to build URLs back to it). */
  readonly authority: string
  /** The request target as sent: path and query, not decoded. */
  readonly target: string
  /**
   * The host the proxy routed the request by, when it says so apart from the URL
   * (`/_gate/auth-request/<host>`: nginx's `$host`); the check refuses a request whose
   * {@link host} differs from it.
   */
  readonly routedHost?: string
}

/**
 * What the gate reads of a proxy's check request: a `node:http` `IncomingMessage` is one;
 * the policy tests make theirs in memory.
 */
export interface ProxyRequest {
  readonly method?: string | undefined
  readonly headers: IncomingHttpHeaders
  readonly rawHeaders: readonly string[]
  readonly socket: { readonly remoteAddress?: string | undefined }
}

/** The check endpoints, by the proxy protocol they speak (`fastcgi`: Apache's mod_authnz_fcgi, through gate/front/fastcgi-check.ts). */
export type CheckProtocol = 'auth-request' | 'forward-auth' | 'ext-authz' | 'fastcgi'

/** The path of the nginx endpoint; `/<host>` may follow it (the host nginx routed by). */
export const AUTH_REQUEST_PATH = '/_gate/auth-request'

/** The path prefix of the Envoy endpoint. */
export const EXT_AUTHZ_PREFIX = '/_gate/ext-authz'

/** The one value of header `name` (lower-case), or `undefined` when it is missing or repeated. */
export function singleHeader(req: ProxyRequest, name: string): string | undefined {
  const raw = req.rawHeaders
  let found: string | undefined
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const key = raw[i] as string
    if (key.length !== name.length || key.toLowerCase() !== name) continue
    if (found !== undefined) return undefined
    found = raw[i + 1]
  }
  return found
}

const METHOD = /^[A-Za-z]{1,20}$/
// A gate hears about a few hosts, over and over: their reading is kept (bounded).
const hosts = new Map<string, string | undefined>()

/** The lower-case host (no port) an `authority` (`Host` or `X-Forwarded-Host` value) names, or `undefined` when it names none. */
export function hostOf(authority: string): string | undefined {
  if (hosts.has(authority)) return hosts.get(authority)
  if (hosts.size >= 1024) hosts.clear()
  const host = AUTHORITY.test(authority) ? normaliseHost(authority) : undefined
  hosts.set(authority, host)
  return host
}
const AUTHORITY = /^[A-Za-z0-9._~\-[\]:]{1,261}$/

function build(method: string | undefined, scheme: string | undefined, authority: string | undefined, target: string | undefined) {
  if (method === undefined || !METHOD.test(method)) return undefined
  const lowerScheme = scheme?.toLowerCase()
  if (lowerScheme !== 'http' && lowerScheme !== 'https') return undefined
  if (authority === undefined) return undefined
  const host = hostOf(authority)
  if (host === undefined) return undefined
  if (target === undefined || target === '') return undefined
  return { method: method.toUpperCase(), scheme: lowerScheme, host, authority, target } satisfies OriginalRequest
}

/**
 * The original request as the protocol's headers describe it, or `undefined` when they
 * do not (then the answer is 401). The caller has already checked that the peer is trusted.
 *
 * @example
 * ```ts
 * originalRequest('forward-auth', req) // { method: 'GET', scheme: 'https', host: 'wiki.example.org', ... }
 * ```
 */
export function originalRequest(protocol: CheckProtocol, req: ProxyRequest, url: string): OriginalRequest | undefined {
  switch (protocol) {
    case 'auth-request': {
      // nginx: X-Original-URL is $scheme://$host$gate_port$request_uri (docs/gate.md), not
      // resolved by any URL parser. ingress-nginx builds it from $http_host, the client's Host
      // header, while it routes by the request line's host when there is one: it passes that
      // ($host) after the endpoint's path, and the check holds the two to one host.
      const original = singleHeader(req, 'x-original-url')
      const match = original === undefined ? null : /^(https?):\/\/([^/?#\s]*)(\/[^\s]*)$/i.exec(original)
      if (match === null) return undefined
      const path = url.split('?', 1)[0] as string
      if (path === AUTH_REQUEST_PATH) return build(singleHeader(req, 'x-original-method'), match[1], match[2] || undefined, match[3])
      const routed = path.slice(AUTH_REQUEST_PATH.length + 1)
      const routedHost = hostOf(routed)
      if (routedHost === undefined) return undefined
      // HTTP/1.0 without Host: $http_host is empty, and the routed host is the only one there is.
      const built = build(singleHeader(req, 'x-original-method'), match[1], match[2] || routed, match[3])
      return built === undefined ? undefined : { ...built, routedHost }
    }
    // fastcgi: gate/front/fastcgi-check.ts puts the FastCGI params Apache set (never a client's header) in these headers.
    case 'forward-auth':
    case 'fastcgi':
      return build(
        singleHeader(req, 'x-forwarded-method'),
        singleHeader(req, 'x-forwarded-proto'),
        singleHeader(req, 'x-forwarded-host'),
        singleHeader(req, 'x-forwarded-uri'),
      )
    case 'ext-authz': {
      const target = url.slice(EXT_AUTHZ_PREFIX.length) || '/'
      const authority = singleHeader(req, 'host')
      const host = authority === undefined ? undefined : hostOf(authority)
      // Envoy's check request carries no scheme of its own: https, but on loopback.
      const scheme = host !== undefined && isLoopbackHost(host) ? 'http' : 'https'
      return build(req.method, scheme, authority, target.startsWith('/') ? target : undefined)
    }
  }
}

/**
 * Whether the original request came from a browser that can be sent to sign in: a GET or
 * HEAD that accepts HTML and carries no `Authorization` header (an API client's 401 stays a 401).
 */
export function isBrowserRequest(req: ProxyRequest, original: OriginalRequest): boolean {
  if (original.method !== 'GET' && original.method !== 'HEAD') return false
  if (req.headers.authorization !== undefined) return false
  const accept = req.headers.accept
  return typeof accept === 'string' && accept.toLowerCase().includes('text/html')
}
