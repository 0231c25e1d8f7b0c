/**
 * Where a browser's request to `/_gate/signin`, `/_gate/callback` or `/_gate/signout` was
 * sent: the proxy's `X-Forwarded-Proto` and `X-Forwarded-Host` when the peer is trusted,
 * else the request's own `Host` over plain http (the gate itself speaks http only).
 *
 * @module
 */
import type { IncomingMessage } from 'node:http'
import { hostOf, singleHeader } from './original-request.js'
import type { TrustCheck } from './trusted-proxies.js'

/** A browser request's origin: scheme, host (lower-case, no port) and authority (with port). */
export interface BrowserOrigin {
  readonly scheme: 'http' | 'https'
  readonly host: string
  readonly authority: string
}

/** The origin of `req`, or `undefined` when its headers do not name one. */
export function browserOrigin(req: IncomingMessage, trusted: TrustCheck): BrowserOrigin | undefined {
  let scheme = 'http'
  let authority = singleHeader(req, 'host')
  if (trusted(req.socket.remoteAddress)) {
    const proto = singleHeader(req, 'x-forwarded-proto')
    const forwardedHost = singleHeader(req, 'x-forwarded-host')
    if (proto !== undefined) scheme = proto.toLowerCase()
    if (forwardedHost !== undefined) authority = forwardedHost
  }
  if ((scheme !== 'http' && scheme !== 'https') || authority === undefined) return undefined
  const host = hostOf(authority)
  return host === undefined ? undefined : { scheme, host, authority }
}
