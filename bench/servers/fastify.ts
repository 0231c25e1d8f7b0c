/**
 * A Fastify 5 app under load, in its own process: a bare route and a guarded route side by
 * side. Usage: `fastify.ts '<ServerConfig JSON>'`.
 *
 * @module
 */
import type { AddressInfo } from 'node:net'
import Fastify, { type FastifyReply, type FastifyRequest, type onRequestHookHandler } from 'fastify'
import vootGuard from '../../adapters/fastify/index.js'
import { authorizationOf, createGuardCore } from '../../src/adapter-kit.js'
import { extractBearerToken, group } from '../../src/index.js'
import { createCacheKeys } from '../../src/resolver/store/cache-key.js'
import { checkAtOf } from '../../src/resolver/check-at.js'
import { BEARER_TOKEN_START, bearerCandidate } from '../../src/token.js'
import { ORG_ID } from '../../testing/index.js'
import type { ServerConfig, ServerReady } from './config.js'
import { stageName, type WarmStage } from '../suites/warm-stages.js'
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

// The warm path cut after each of its steps, each a hook of its own, timed the same way:
// where the guard's time inside the server goes (figure 2's stage row, `WARM_STAGES`).
// The digest stage uses keys of its own (the same algorithm under another key), reading the
// token in place in the header as the guard does; the decision stage digests again inside
// the resolver's `checkAt`, as the guard does (the token sliced out for the context).
const requirement = group(ORG_ID, 'admin')
const core = createGuardCore({ resolver: guard.resolver, realm: 'bench' })
const keys = createCacheKeys()
let sink = 0
const header = (request: FastifyRequest): string => authorizationOf(request.raw) as string
// The token as the guard reads a header's: its characters are checked on a miss only (issue 41).
const tokenOf = (value: string): string => bearerCandidate(value) ?? extractBearerToken(value)
const stage =
  (work: (request: FastifyRequest) => unknown): onRequestHookHandler =>
  (request, _reply, done) => {
    if (work(request) === sink) sink++
    done()
  }
const checkAt = checkAtOf(guard.resolver)
if (checkAt === undefined) throw new Error("the plugin's resolver has no checkAt")
const stages: Record<WarmStage, onRequestHookHandler> = {
  header: stage(header),
  token: stage((request) => tokenOf(header(request))),
  digest: stage((request) => {
    const value = header(request)
    return tokenOf(value) === undefined ? undefined : keys.digest(value, BEARER_TOKEN_START)
  }),
  decision: stage((request) => {
    const value = header(request)
    return tokenOf(value) === undefined ? undefined : checkAt(value, BEARER_TOKEN_START, requirement, undefined)
  }),
  core: stage((request) => core.authorizeNow({ authorization: authorizationOf(request.raw) }, requirement)),
}
for (const [name, hook] of Object.entries(stages) as [WarmStage, onRequestHookHandler][])
  app.get(`/timed/stage/${name}`, { onRequest: timings.fastify(stageName(name), hook) }, ok)

await app.listen({ port: 0, host: '127.0.0.1' })

serveParent({ stats: () => guard.resolver.stats(), timings: () => timings.summary() }, {
  port: (app.server.address() as AddressInfo).port,
} satisfies ServerReady)
