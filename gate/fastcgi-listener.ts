/**
 * The gate's FastCGI authorizer listener (`fastcgi: { listen }`), beside its HTTP server:
 * the protocol of gate/front/fastcgi.ts over the gate's check, for peers in `trustedProxies` only.
 *
 * @module
 */
import type { AddressInfo, Server, Socket } from 'node:net'
import { createFastCgiAuthorizer, FASTCGI_UNAVAILABLE } from './front/fastcgi-check.js'
import { createFastCgiServer, type FastCgiAuthorizer } from './front/fastcgi.js'
import type { Gate } from './gate.js'
import { createTrustCheck, type TrustCheck } from './http/trusted-proxies.js'

/** What the listener needs of a gate: its settings and its check. */
export type FastCgiGate = Pick<Gate, 'settings' | 'check'>

/** A listening FastCGI authorizer. */
export interface FastCgiListener {
  readonly server: Server
  /** `host:port` as bound (for `AuthnzFcgiDefineProvider ... fcgi://host:port/`). */
  readonly address: string
  /** Stops accepting; answers under way finish, connections still open after `drainTimeout` ms are cut. */
  close(drainTimeout: number): Promise<void>
}

/**
 * Listens on `fastcgi.listen` (or `port`, for tests); `undefined` when the configuration has no `fastcgi`.
 *
 * @example
 * ```ts
 * const fastcgi = await listenFastCgi(() => gate)
 * console.log(fastcgi?.address) // 127.0.0.1:4182
 * ```
 */
export async function listenFastCgi(gate: () => FastCgiGate, port?: number): Promise<FastCgiListener | undefined> {
  const { fastcgi } = gate().settings
  if (fastcgi === undefined) return undefined
  // Each request goes to the gate current when it comes (a reload makes another): its
  // authorizer and its trusted proxies, made once per gate.
  let made: { readonly gate: FastCgiGate; readonly authorize: FastCgiAuthorizer; readonly trusted: TrustCheck } | undefined
  const current = () => {
    const now = gate()
    if (made?.gate !== now) {
      made = {
        gate: now,
        authorize: createFastCgiAuthorizer(now.check, now.settings),
        trusted: createTrustCheck(now.settings.trustedProxies),
      }
    }
    return made
  }
  const server = createFastCgiServer({
    authorize: (request) => current().authorize(request),
    trusted: (address) => current().trusted(address),
    unavailable: FASTCGI_UNAVAILABLE,
  })
  const sockets = new Set<Socket>()
  server.on('connection', (socket) => {
    sockets.add(socket)
    socket.once('close', () => sockets.delete(socket))
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(port ?? fastcgi.listen.port, fastcgi.listen.host, () => {
      server.off('error', reject)
      resolve()
    })
  })
  const bound = server.address() as AddressInfo
  const address = bound.family === 'IPv6' ? `[${bound.address}]:${bound.port}` : `${bound.address}:${bound.port}`
  return {
    server,
    address,
    async close(drainTimeout) {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()))
      const timer = setTimeout(() => {
        for (const socket of sockets) socket.destroy()
      }, drainTimeout)
      timer.unref()
      await closed
      clearTimeout(timer)
    },
  }
}
