/**
 * A Koa 3 app under load, in its own process: a bare route and a guarded route side by
 * side. Usage: `koa.ts '<ServerConfig JSON>'`.
 *
 * @module
 */
import type { AddressInfo } from 'node:net'
import Koa, { type Context } from 'koa'
import { createGuard } from '../../adapters/koa/index.js'
import { ORG_ID } from '../../testing/index.js'
import type { ServerConfig, ServerReady } from './config.js'
import { burn } from './burn.js'
import { serveParent } from './ipc.js'
import { createTimings } from './timings.js'

const config = JSON.parse(process.argv[2] ?? '{}') as ServerConfig
const app = new Koa()
const guard = createGuard({ baseUrl: config.baseUrl, realm: 'bench' })
const guarded = guard.requireGroup(ORG_ID, 'admin')

const noop = (_ctx: Context, next: () => Promise<void>): Promise<void> => next()
// The same middlewares, each timed inside the server (see timings.ts).
const timings = createTimings()
const timedNoop = timings.koa('no-op middleware', noop)
const timedGuarded = timings.koa('voot-guard', guarded)

const ok = (ctx: Context): Promise<void> => {
  ctx.body = { ok: true }
  return Promise.resolve()
}

// A two-route dispatcher instead of a router package: both routes pay the same for it.
app.use((ctx) => {
  if (ctx.path === '/bare') return ok(ctx)
  if (ctx.path === '/guarded') return guarded(ctx, () => ok(ctx)) as Promise<void>
  // What any middleware costs here, guard or not: the guard's own share is the rest.
  if (ctx.path === '/noop') return noop(ctx, () => ok(ctx))
  // The burn control (see burn.ts): what any middleware doing the guard's amount of work costs here.
  if (ctx.path === '/burn') {
    burn()
    return noop(ctx, () => ok(ctx))
  }
  if (ctx.path === '/timed/noop') return timedNoop(ctx, () => ok(ctx))
  if (ctx.path === '/timed/guarded') return timedGuarded(ctx, () => ok(ctx))
  ctx.status = 404
  return undefined
})

const server = app.listen(0, '127.0.0.1')
await new Promise<void>((resolve) => server.once('listening', resolve))
server.keepAliveTimeout = 60_000

serveParent({ stats: () => guard.resolver.stats(), timings: () => timings.summary() }, {
  port: (server.address() as AddressInfo).port,
} satisfies ServerReady)
