/**
 * A Hono 4 app under load on `@hono/node-server`, in its own process: a bare route and a
 * guarded route side by side. Usage: `hono.ts '<ServerConfig JSON>'`.
 *
 * @module
 */
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { serve } from '@hono/node-server'
import { Hono, type Context, type MiddlewareHandler } from 'hono'
import { createGuard } from '../../adapters/hono/index.js'
import { ORG_ID } from '../../testing/index.js'
import type { ServerConfig, ServerReady } from './config.js'
import { burn } from './burn.js'
import { serveParent } from './ipc.js'
import { createTimings } from './timings.js'

const config = JSON.parse(process.argv[2] ?? '{}') as ServerConfig
const app = new Hono()
const guard = createGuard({ baseUrl: config.baseUrl, realm: 'bench' })

const ok = (c: Context): Response => c.json({ ok: true })
const noop: MiddlewareHandler = (_c, next) => next()
app.get('/bare', ok)
app.get('/guarded', guard.requireGroup(ORG_ID, 'admin'), ok)
// What any middleware costs in this framework, guard or not: the guard's own share is the rest.
app.get('/noop', noop, ok)
// The burn control (see burn.ts): what any middleware doing the guard's amount of work costs here.
app.get(
  '/burn',
  (_c, next) => {
    burn()
    return next()
  },
  ok,
)
// The same middlewares, each timed inside the server (see timings.ts).
const timings = createTimings()
app.get('/timed/noop', timings.hono('no-op middleware', noop), ok)
app.get('/timed/guarded', timings.hono('voot-guard', guard.requireGroup(ORG_ID, 'admin')), ok)

const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }) as Server
await new Promise<void>((resolve) => (server.listening ? resolve() : server.once('listening', resolve)))
server.keepAliveTimeout = 60_000

serveParent({ stats: () => guard.resolver.stats(), timings: () => timings.summary() }, {
  port: (server.address() as AddressInfo).port,
} satisfies ServerReady)
