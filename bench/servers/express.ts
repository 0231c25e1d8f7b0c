/**
 * An Express app under load, in its own process: a bare route and a guarded route side by
 * side (plus, on request, the JWT peers, the coalescing controls and failing upstreams).
 * Usage: `express.ts '<ServerConfig JSON>'`.
 *
 * @module
 */
import type { AddressInfo } from 'node:net'
import type { RequestHandler } from 'express'
import { createGuard } from '../../adapters/express/index.js'
import { authorizationOf, createGuardCore, type VootContext } from '../../src/adapter-kit.js'
import { ORG_ID } from '../../testing/index.js'
import { createPeers, type Peers } from './jwt-peers.js'
import { burn } from './burn.js'
import { serveParent } from './ipc.js'
import { createNaiveGuards } from './naive-guards.js'
import { createTimings } from './timings.js'
import { COALESCE_GROUP_ID, type ServerConfig, type ServerReady } from './config.js'

const config = JSON.parse(process.argv[2] ?? '{}') as ServerConfig
// `express4` is the npm alias of Express 4; its types are Express 5's, which is all we use.
const framework = config.framework === 'express4' ? await import('express4') : await import('express')
const app = framework.default()
app.disable('x-powered-by')
app.set('etag', false)

const ok: RequestHandler = (_req, res) => {
  res.json({ ok: true })
}

const guard = createGuard({ baseUrl: config.baseUrl, realm: 'bench' })
const noop: RequestHandler = (_req, _res, next) => {
  next()
}
app.get('/bare', ok)
app.get('/guarded', guard.requireGroup(ORG_ID, 'admin'), ok)
// What any middleware costs in this framework, guard or not: the guard's own share is the rest.
app.get('/noop', noop, ok)
// The burn control (see burn.ts): what any middleware doing the guard's amount of work costs here.
app.get(
  '/burn',
  (_req, _res, next) => {
    burn()
    next()
  },
  ok,
)
// The same middlewares, each timed inside the server (see timings.ts).
const timings = createTimings()
app.get('/timed/noop', timings.express('no-op middleware', noop), ok)
app.get('/timed/guarded', timings.express('voot-guard', guard.requireGroup(ORG_ID, 'admin')), ok)

// Whether `req.voot` behind the accessor on Express's request prototype (the adapter) pays
// for itself against a plain own property once the handler reads it: the same core, the
// context stored either way, timed from the guard's start to the handler's read.
const core = createGuardCore({ resolver: guard.resolver, realm: 'bench' })
const requirement = core.groupRequirement(ORG_ID, 'admin')
const ownProperty: RequestHandler = (req, _res, next) => {
  const store = (context: VootContext): void => {
    // An own data property, as an assignment makes one (the accessor would catch an assignment).
    Object.defineProperty(req, 'voot', { value: context, writable: true, enumerable: true, configurable: true })
  }
  const result = core.authorizeNow({ authorization: authorizationOf(req) }, requirement)
  if (result instanceof Promise) {
    result.then((context) => {
      store(context)
      next()
    }, next)
    return
  }
  store(result)
  next()
}
const startedAt = new WeakMap<object, number>()
const startTimer: RequestHandler = (req, _res, next) => {
  startedAt.set(req, performance.now())
  next()
}
const readVoot =
  (name: string): RequestHandler =>
  (req, res) => {
    const allowed = req.voot?.decision.allowed === true
    timings.record(name, performance.now() - (startedAt.get(req) ?? Number.NaN))
    res.json({ ok: allowed })
  }
app.get('/timed/guarded-own', timings.express('voot-guard, own property', ownProperty), ok)
app.get('/timed/read/accessor', startTimer, guard.requireGroup(ORG_ID, 'admin'), readVoot('guard + handler read, accessor'))
app.get('/timed/read/own', startTimer, ownProperty, readVoot('guard + handler read, own property'))
app.get('/timed/read/noop', startTimer, noop, readVoot('no-op + handler read'))

let peers: Peers | undefined
if (config.peers === true) {
  peers = await createPeers()
  for (const route of peers.routes) app.get(route.path, route.middleware, ok)
}

if (config.coalescing === true) {
  app.get('/coalesce', guard.requireGroup(COALESCE_GROUP_ID), ok)
  const controls = createNaiveGuards(config.baseUrl, COALESCE_GROUP_ID)
  app.get('/naive', controls.naive, ok)
  app.get('/cache-only', controls.cacheOnly, ok)
}

if (config.failures !== undefined) {
  const { timeout, refusedUrl } = config.failures
  // The defaults first (what a user gets), then without the retry and with the breaker.
  app.get('/hang', createGuard({ baseUrl: config.baseUrl, timeout }).requireGroup(ORG_ID, 'admin'), ok)
  app.get('/refused', createGuard({ baseUrl: refusedUrl, timeout }).requireGroup(ORG_ID, 'admin'), ok)
  app.get('/refused-no-retry', createGuard({ baseUrl: refusedUrl, timeout, retries: 0 }).requireGroup(ORG_ID, 'admin'), ok)
  app.get('/refused-breaker', createGuard({ baseUrl: refusedUrl, timeout, circuitBreaker: true }).requireGroup(ORG_ID, 'admin'), ok)
}

const server = app.listen(0, '127.0.0.1')
await new Promise<void>((resolve) => server.once('listening', resolve))
server.keepAliveTimeout = 60_000

serveParent({ stats: () => guard.resolver.stats(), timings: () => timings.summary() }, {
  port: (server.address() as AddressInfo).port,
  ...(peers === undefined
    ? {}
    : { peers: peers.routes.map(({ path, algorithm, label }) => ({ path, algorithm, label })), jwt: peers.tokens }),
} satisfies ServerReady)
