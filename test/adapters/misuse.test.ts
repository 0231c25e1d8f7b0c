/**
 * Misuse gets the fix, not a riddle (issue #52 item 4): a guard factory handed to the
 * framework uncalled (`app.use(guard.authenticate)`) is a 500 of the framework's own error
 * handling, with an error that says to call it, never a 4xx for the client; a space-padded
 * group id is refused when the route is declared. Real frameworks on 127.0.0.1:0, the emulator.
 */
import { createServer, type Server } from 'node:http'
import express, { type ErrorRequestHandler, type RequestHandler } from 'express'
import Fastify, { type onRequestHookHandler } from 'fastify'
import { Hono, type MiddlewareHandler } from 'hono'
import Koa, { type Middleware } from 'koa'
import { getRequestListener } from '@hono/node-server'
import { request } from 'undici'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createGuard as createExpressGuard } from '../../adapters/express/index.js'
import { createGuard as createFastifyGuard } from '../../adapters/fastify/index.js'
import { createGuard as createFetchGuard } from '../../adapters/fetch/index.js'
import { createGuard as createHonoGuard } from '../../adapters/hono/index.js'
import { createGuard as createKoaGuard } from '../../adapters/koa/index.js'
import { InvalidArgumentError, InvalidGroupIdError } from '../../src/index.js'
import { ORG_ID, startEmulator, type Emulator } from '../../testing/index.js'
import { closer, listen } from '../support/apps.js'

let emulator: Emulator
beforeAll(async () => {
  emulator = await startEmulator()
})
afterAll(async () => {
  await emulator.close()
})

/** The factories a developer may hand over uncalled, and what the error tells them to write. */
const UNCALLED = [
  ['authenticate', 'call it: `guard.authenticate()`'],
  ['requireGroup', "call it: `guard.requireGroup('fc:org:example.org', 'admin')`"],
  ['requireAnyGroup', 'call it: `guard.requireAnyGroup('],
  ['require', 'call it: `guard.require(group('],
] as const

type Factory = (typeof UNCALLED)[number][0]

async function get(url: string, token?: string): Promise<{ status: number; text: string }> {
  const response = await request(url, { headers: token === undefined ? {} : { authorization: `Bearer ${token}` } })
  return { status: response.statusCode, text: await response.body.text() }
}

/** Serves `listener`, asks it with and without a token, closes it; the answers' statuses. */
async function statuses(listener: Parameters<typeof createServer>[1]): Promise<number[]> {
  const server: Server = createServer(listener)
  const url = await listen(server)
  try {
    return [(await get(url, emulator.issueToken('alice'))).status, (await get(url)).status, (await get(url, 'bad token!')).status]
  } finally {
    await closer(server)()
  }
}

describe.each(UNCALLED)('guard.%s handed over uncalled', (factory: Factory, fix) => {
  it('Express: a 500 through next(err), the error saying to call it', async () => {
    const guard = createExpressGuard({ baseUrl: emulator.baseUrl })
    const seen: unknown[] = []
    const app = express()
    app.use(guard[factory] as unknown as RequestHandler)
    app.get('/', (_req, res) => res.send('reached'))
    const handler: ErrorRequestHandler = (error, _req, _res, next) => {
      seen.push(error)
      next(error) // on to Express's own final handler
    }
    app.use(handler)
    expect(await statuses(app)).toEqual([500, 500, 500])
    expect(seen).toHaveLength(3)
    expect(seen[0]).toBeInstanceOf(InvalidArgumentError)
    expect((seen[0] as Error).message).toContain(`guard.${factory} was used as a middleware without being called`)
    expect((seen[0] as Error).message).toContain(fix)
  })

  it('Koa: a 500 from ctx.onerror, the body not exposing it', async () => {
    const guard = createKoaGuard({ baseUrl: emulator.baseUrl })
    const seen: unknown[] = []
    const app = new Koa()
    app.silent = true
    app.on('error', (error: unknown) => seen.push(error))
    app.use(guard[factory] as unknown as Middleware)
    app.use((ctx) => {
      ctx.body = 'reached'
    })
    expect(await statuses(app.callback())).toEqual([500, 500, 500])
    expect((seen[0] as Error).message).toContain(fix)
  })

  it('Fastify: a 500 from the onRequest hook', async () => {
    const guard = createFastifyGuard({ baseUrl: emulator.baseUrl })
    const seen: unknown[] = []
    const app = Fastify()
    app.setErrorHandler((error, _request, reply) => {
      seen.push(error)
      void reply.code((error as { statusCode?: number }).statusCode ?? 500).send({ error: 'server_error' })
    })
    app.get('/', { onRequest: guard[factory] as unknown as onRequestHookHandler }, () => 'reached')
    await app.ready()
    expect(await statuses((req, res) => app.routing(req, res))).toEqual([500, 500, 500])
    expect((seen[0] as Error).message).toContain(fix)
    await app.close()
  })

  it('Hono: a 500 through app.onError', async () => {
    const guard = createHonoGuard({ baseUrl: emulator.baseUrl })
    const seen: unknown[] = []
    const app = new Hono()
    app.onError((error, c) => {
      seen.push(error)
      return c.text('Internal Server Error', 500)
    })
    app.use(guard[factory] as unknown as MiddlewareHandler)
    app.get('/', (c) => c.text('reached'))
    expect(await statuses(getRequestListener(app.fetch))).toEqual([500, 500, 500])
    expect((seen[0] as Error).message).toContain(fix)
  })

  it('fetch: throws when called as a handler (export const GET = guard.authenticate), and protect() says so at once', () => {
    const guard = createFetchGuard({ baseUrl: emulator.baseUrl })
    const asHandler = guard[factory] as unknown as (request: Request, context?: unknown) => unknown
    expect(() => asHandler(new Request('http://127.0.0.1/', { headers: { authorization: 'Bearer x' } }))).toThrow(fix)
    expect(() => asHandler(new Request('http://127.0.0.1/'), { params: {} })).toThrow(fix)
    expect(() => guard.protect(guard[factory] as never, () => new Response('reached'))).toThrow(
      `protect(): check is guard.${factory} itself, not a guard: call it`,
    )
  })
})

describe('the factories called as they should be', () => {
  it('still take their own arguments (options, ids, roles, requirements)', async () => {
    const guard = createExpressGuard({ baseUrl: emulator.baseUrl })
    const app = express()
    app.get('/a', guard.authenticate({ optional: true }), (_req, res) => res.send('a'))
    app.get('/b', guard.requireGroup(ORG_ID, 'admin'), (_req, res) => res.send('b'))
    app.get('/c', guard.requireAnyGroup([ORG_ID], 'member'), (_req, res) => res.send('c'))
    const server = createServer(app)
    const url = await listen(server)
    expect((await get(`${url}/a`)).status).toBe(200)
    expect((await get(`${url}/b`, emulator.issueToken('alice'))).status).toBe(200)
    expect((await get(`${url}/c`, emulator.issueToken('alice'))).status).toBe(200)
    await closer(server)()
    // A misspelt option is still that, not "call it".
    expect(() => guard.authenticate({ optinal: true } as never)).toThrow(/optinal/)
  })
})

describe('a space-padded group id', () => {
  it('is refused when the route is declared, in every adapter, naming the fix', () => {
    const guards = [
      createExpressGuard({ baseUrl: emulator.baseUrl }),
      createKoaGuard({ baseUrl: emulator.baseUrl }),
      createFastifyGuard({ baseUrl: emulator.baseUrl }),
      createHonoGuard({ baseUrl: emulator.baseUrl }),
      createFetchGuard({ baseUrl: emulator.baseUrl }),
    ]
    for (const guard of guards) {
      expect(() => guard.requireGroup('fc:org:example.org ', 'admin')).toThrow(InvalidGroupIdError)
      expect(() => guard.requireGroup('fc:org:example.org ', 'admin')).toThrow(/remove the spaces \("fc:org:example.org"\)/)
      expect(() => guard.requireAnyGroup(['fc:adhoc:1', ' '])).toThrow(/blank/)
    }
  })

  it('from request data is a 403 without a call, as any id assertGroupId refuses', async () => {
    const guard = createExpressGuard({ baseUrl: emulator.baseUrl })
    const app = express()
    app.get(
      '/courses/:id',
      guard.requireGroup((req) => `fc:fs:fs:emne:example.org:${String(req.params.id)}`, 'admin'),
      (_req, res) => res.send('reached'),
    )
    const server = createServer(app)
    const url = await listen(server)
    const before = emulator.requests.length
    const padded = await get(`${url}/courses/INF1000%20`, emulator.issueToken('alice'))
    expect(padded.status).toBe(403)
    expect(emulator.requests.length).toBe(before)
    await closer(server)()
  })
})
