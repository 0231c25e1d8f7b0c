/**
 * One instance of an app, as its own process, for the fleet tests: a resolver with the
 * shared Redis tier behind a tiny HTTP API on a free loopback port, printed as
 * `listening <url>` on stdout. Reads REDIS_URL, BASE_URL and VOOT_CACHE_SECRET from the
 * environment (REDIS_TIMEOUT: the tier's deadline; NO_TIER=1: no shared tier, for the bench's
 * baseline); SIGTERM closes it. Instead of REDIS_URL, REDIS_CLUSTER (`<url>,<url>,…`, the
 * root nodes) makes it a node-redis cluster client, and REDIS_SENTINEL
 * (`<master name>@<host>:<port>,<host>:<port>,…`) a sentinel client.
 *
 *   GET  /groups             -> the token's groups (me/groups)
 *   GET  /check?group=<id>   -> { outcome: 'allowed' | 'denied' | 'invalid' | 'error <status>' }
 *   POST /invalidate         -> drops the token's answers (on every instance)
 *   GET  /stats              -> the tier's stats and its error signals by code
 */
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createClient, createCluster, createSentinel } from 'redis'
import { createRedisCache, type RedisClientLike } from '../../redis/index.js'
import { InvalidTokenError } from '../../src/errors.js'
import { createMembershipResolver, group } from '../../src/index.js'

const withTier = process.env.NO_TIER !== '1'
/** Every connection the app makes: no offline queue, a quick reconnection. */
const nodeOptions = { disableOfflineQueue: true, socket: { reconnectStrategy: () => 50, connectTimeout: 500 } }

function makeClient() {
  const { REDIS_CLUSTER: cluster, REDIS_SENTINEL: sentinel } = process.env
  if (cluster !== undefined && cluster !== '') {
    return createCluster({ rootNodes: cluster.split(',').map((url) => ({ url })), defaults: nodeOptions })
  }
  if (sentinel !== undefined && sentinel !== '') {
    const [name = '', nodes = ''] = sentinel.split('@')
    const sentinelRootNodes = nodes.split(',').map((address) => {
      const [host = '', port = ''] = address.split(':')
      return { host, port: Number(port) }
    })
    return createSentinel({ name, sentinelRootNodes, nodeClientOptions: nodeOptions })
  }
  return createClient({ url: process.env.REDIS_URL ?? '', ...nodeOptions })
}
const client = makeClient()
client.on('error', () => {})
if (withTier) await client.connect()
const timeout = process.env.REDIS_TIMEOUT === undefined ? {} : { timeout: Number(process.env.REDIS_TIMEOUT) }
const tier = withTier ? createRedisCache({ client, secret: process.env.VOOT_CACHE_SECRET ?? '', ...timeout }) : undefined
const errorCodes: Record<string, number> = {}
tier?.subscribe((signal) => {
  if (signal.type === 'error') errorCodes[`error ${signal.code}`] = (errorCodes[`error ${signal.code}`] ?? 0) + 1
})
const resolver = createMembershipResolver({ baseUrl: process.env.BASE_URL ?? '', ...(tier === undefined ? {} : { sharedCache: tier }) })

const server = createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://instance')
  const token = (req.headers.authorization ?? '').replace(/^Bearer /, '')
  const reply = (body: unknown): void => {
    res.setHeader('content-type', 'application/json')
    res.end(JSON.stringify(body))
  }
  void (async () => {
    if (url.pathname === '/groups') return reply(await resolver.groups(token))
    if (url.pathname === '/stats') return reply({ ...tier?.stats(), ...errorCodes })
    if (url.pathname === '/invalidate') {
      resolver.invalidate(token)
      return reply({ ok: true })
    }
    try {
      const decision = await resolver.check(token, group(url.searchParams.get('group') ?? ''))
      return reply({ outcome: decision.allowed ? 'allowed' : 'denied' })
    } catch (error) {
      return reply({ outcome: error instanceof InvalidTokenError ? 'invalid' : `error ${(error as { status?: number }).status ?? '?'}` })
    }
  })().catch(() => {
    res.statusCode = 500
    res.end()
  })
})
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`listening http://127.0.0.1:${(server.address() as AddressInfo).port}\n`)
})
process.once('SIGTERM', () => {
  server.closeAllConnections()
  server.close()
  void resolver
    .close()
    .then(() => tier?.close())
    .then(() => (withTier ? client.destroy() : undefined))
})
