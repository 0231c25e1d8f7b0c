/**
 * The control of figure 2's Express rows: the Express adapter's own middleware, called from
 * a plain `node:http` handler (no framework), with a bare and a no-op route beside it. The
 * guard's code is byte for byte what runs inside Express, so what it costs here and there
 * tells the guard's share from Express's. Usage: `node-http.ts '<ServerConfig JSON>'`.
 *
 * @module
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { NextFunction, Request, RequestHandler, Response } from 'express'
import { createGuard } from '../../adapters/express/index.js'
import { ORG_ID } from '../../testing/index.js'
import { burn } from './burn.js'
import { serveParent } from './ipc.js'
import { createTimings } from './timings.js'
import type { ServerConfig, ServerReady } from './config.js'

const config = JSON.parse(process.argv[2] ?? '{}') as ServerConfig
const BODY = JSON.stringify({ ok: true })

function ok(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(BODY) })
  res.end(BODY)
}

const guard = createGuard({ baseUrl: config.baseUrl, realm: 'bench' })
const noop: RequestHandler = (_req, _res, next) => {
  next()
}
const timings = createTimings()
const routes = new Map<string, RequestHandler | undefined>([
  ['/bare', undefined],
  ['/guarded', guard.requireGroup(ORG_ID, 'admin')],
  ['/noop', noop],
  // The burn control (see burn.ts).
  [
    '/burn',
    (_req, _res, next) => {
      burn()
      next()
    },
  ],
  ['/timed/noop', timings.express('no-op middleware', noop)],
  ['/timed/guarded', timings.express('voot-guard', guard.requireGroup(ORG_ID, 'admin'))],
])

const server = createServer((req: IncomingMessage, res: ServerResponse) => {
  const middleware = routes.get(req.url ?? '')
  if (middleware === undefined) {
    if (routes.has(req.url ?? '')) ok(res)
    else res.writeHead(404).end()
    return
  }
  // A guard that refuses answers through Express's response helpers, which a plain
  // response lacks: the control only loads the warm, allowed path.
  middleware(
    req as Request,
    res as Response,
    ((error?: unknown) => {
      if (error === undefined) ok(res)
      else res.writeHead(500).end()
    }) as NextFunction,
  )
})
server.listen(0, '127.0.0.1')
await new Promise<void>((resolve) => server.once('listening', resolve))
server.keepAliveTimeout = 60_000

serveParent({ stats: () => guard.resolver.stats(), timings: () => timings.summary() }, {
  port: (server.address() as AddressInfo).port,
} satisfies ServerReady)
