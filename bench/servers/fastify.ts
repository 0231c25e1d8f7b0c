/**
 * A Fastify 5 app under load, in its own process: a bare route and a guarded route side by
 * side. Usage: `fastify.ts '<ServerConfig JSON>'`.
 *
 * @module
 */
import type { AddressInfo } from 'node:net'
import Fastify, { type FastifyReply, type FastifyRequest, type onRequestHookHandler } from 'fastify'
import vootGuard from '../../adapters/fastify/index.js'
import { ORG_ID } from '../../testing/index.js'
import type { ServerConfig, ServerReady } from './config.js'
import { burn } from './burn.js'
import { serveParent } from './ipc.js'
import { createTimings } from './timings.js'

const config = JSON.parse(process.argv[2] ?? '{}') as ServerConfig
const app = Fastify({ keepAliveTimeout: 60_000 })
// As the adapter's docs show: the plugin, which also declares `request.voot` (Fastify's
// decorateRequest), so that every request keeps one shape whether a guard ran or not.
await app.register(vootGuard, { baseUrl: config.baseUrl, realm: 'bench' })
const guard = app.voot
const guarded = guard.requireGroup(ORG_ID, 'admin')

const OK = { ok: true }
const ok = (_request: FastifyRequest, reply: FastifyReply): void => {
  reply.send(OK)
}
const noop: onRequestHookHandler = (_request, _reply, done) => {
  done()
}
app.get('/bare', ok)
app.get('/guarded', { onRequest: guarded }, ok)
// What any hook costs in this framework, guard or not: the guard's own share is the rest.
app.get('/noop', { onRequest: noop }, ok)
// The burn control (see burn.ts): what any hook doing the guard's amount of work costs here.
const burning: onRequestHookHandler = (_request, _reply, done) => {
  burn()
  done()
}
app.get('/burn', { onRequest: burning }, ok)
// The same hooks, each timed inside the server (see timings.ts).
const timings = createTimings()
app.get('/timed/noop', { onRequest: timings.fastify('no-op middleware', noop) }, ok)
app.get('/timed/guarded', { onRequest: timings.fastify('voot-guard', guard.requireGroup(ORG_ID, 'admin')) }, ok)

await app.listen({ port: 0, host: '127.0.0.1' })

serveParent({ stats: () => guard.resolver.stats(), timings: () => timings.summary() }, {
  port: (app.server.address() as AddressInfo).port,
} satisfies ServerReady)
