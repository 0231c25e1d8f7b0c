/**
 * Where the Express adapter puts its result (adapters/express/request-voot.ts): `req.voot` through an
 * accessor on Express's request prototype, not a new property of each request, and still
 * `req.voot` wherever the request goes (sub-apps, later middleware, a plain Node server).
 */
import { createServer, IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import express5 from 'express'
import express4 from 'express4'
import type { Express, NextFunction, Request, RequestHandler, Response } from 'express'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createGuard } from '../../adapters/express/index.js'
import { startEmulator, type Emulator } from '../../testing/index.js'

const ORG = 'fc:org:example.org'
let emulator: Emulator

beforeAll(async () => {
  emulator = await startEmulator()
})
afterAll(async () => {
  await emulator.close()
})

async function listen(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<{ url: string; close: () => Promise<void> }> {
  const server = createServer(handler)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections()
        server.close((error) => (error ? reject(error) : resolve()))
      }),
  }
}

async function getJson(url: string, token: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(url, { headers: { authorization: `Bearer ${token}` } })
  return { status: response.status, body: (await response.json()) as Record<string, unknown> }
}

/** What a handler can see of `req.voot`. */
function report(req: Request, res: Response): void {
  res.json({
    reason: req.voot?.decision.reason ?? null,
    own: Object.hasOwn(req, 'voot'),
    enumerable: Object.keys(req).includes('voot'),
  })
}

describe.each([
  ['Express 5', express5],
  ['Express 4', express4],
] as const)('%s', (_name, express: () => Express) => {
  it('hands the context to the handler on the cold and the warm path, without a new property on the request', async () => {
    const guard = createGuard({ baseUrl: emulator.baseUrl })
    const app = express()
    app.get('/x', guard.requireGroup(ORG, 'admin'), report)
    const server = await listen(app)
    try {
      const token = emulator.issueToken('alice')
      const cold = await getJson(`${server.url}/x`, token)
      const warm = await getJson(`${server.url}/x`, token)
      for (const answer of [cold, warm]) {
        expect(answer.status).toBe(200)
        expect(answer.body).toEqual({ reason: 'member', own: false, enumerable: false })
      }
      expect(guard.resolver.stats().hits).toBeGreaterThan(0)
      // Node's own request prototype is left alone: only Express's carries the accessor.
      expect('voot' in IncomingMessage.prototype).toBe(false)
      await guard.resolver.close()
    } finally {
      await server.close()
    }
  })

  it("keeps req.voot for the parent app's middleware after the request leaves a sub-app", async () => {
    const guard = createGuard({ baseUrl: emulator.baseUrl })
    const app = express()
    const sub = express()
    sub.get('/x', guard.requireGroup(ORG, 'admin'), (_req: Request, _res: Response, next: NextFunction) => {
      next('router') // leave the sub-app's route; the parent answers
    })
    app.use('/sub', sub)
    app.get('/sub/x', report)
    const server = await listen(app)
    try {
      const token = emulator.issueToken('alice')
      for (let i = 0; i < 2; i++) {
        const answer = await getJson(`${server.url}/sub/x`, token)
        expect(answer).toEqual({ status: 200, body: { reason: 'member', own: false, enumerable: false } })
      }
      await guard.resolver.close()
    } finally {
      await server.close()
    }
  })

  it('lets later middleware replace or clear req.voot', async () => {
    const guard = createGuard({ baseUrl: emulator.baseUrl })
    const app = express()
    const clear: RequestHandler = (req, _res, next) => {
      req.voot = undefined
      next()
    }
    app.get('/cleared', guard.requireGroup(ORG, 'admin'), clear, report)
    const server = await listen(app)
    try {
      const token = emulator.issueToken('alice')
      for (let i = 0; i < 2; i++) {
        expect(await getJson(`${server.url}/cleared`, token)).toEqual({
          status: 200,
          body: { reason: null, own: false, enumerable: false },
        })
      }
      await guard.resolver.close()
    } finally {
      await server.close()
    }
  })

  it("leaves an app's own `voot` on its request prototype alone and sets an own property instead", async () => {
    const guard = createGuard({ baseUrl: emulator.baseUrl })
    const app = express()
    // An app that defined `voot` for itself, on its own request prototype (not Express's).
    const appRequest = Object.create(Object.getPrototypeOf(app.request) as object, {
      app: { value: app, configurable: true, enumerable: true, writable: true },
      voot: { value: null, configurable: true, enumerable: true, writable: true },
    }) as typeof app.request
    app.request = appRequest
    app.get('/x', guard.requireGroup(ORG, 'admin'), report)
    const server = await listen(app)
    try {
      const token = emulator.issueToken('alice')
      for (let i = 0; i < 2; i++) {
        expect(await getJson(`${server.url}/x`, token)).toEqual({ status: 200, body: { reason: 'member', own: true, enumerable: true } })
      }
      expect(Object.getOwnPropertyDescriptor(appRequest, 'voot')?.value).toBeNull()
      await guard.resolver.close()
    } finally {
      await server.close()
    }
  })
})

it('sets an own property on a request that is not an Express one (a plain Node server)', async () => {
  const guard = createGuard({ baseUrl: emulator.baseUrl })
  const middleware = guard.requireGroup(ORG, 'admin')
  const server = await listen((req, res) => {
    const request = req as unknown as Request
    middleware(request, res as unknown as Response, (error?: unknown) => {
      res.setHeader('content-type', 'application/json')
      res.end(
        JSON.stringify(
          error === undefined
            ? {
                reason: request.voot?.decision.reason ?? null,
                own: Object.hasOwn(request, 'voot'),
                enumerable: Object.keys(request).includes('voot'),
              }
            : { error: String(error) },
        ),
      )
    })
  })
  try {
    const token = emulator.issueToken('alice')
    for (let i = 0; i < 2; i++) {
      expect(await getJson(server.url, token)).toEqual({ status: 200, body: { reason: 'member', own: true, enumerable: true } })
    }
    expect('voot' in IncomingMessage.prototype).toBe(false)
    await guard.resolver.close()
  } finally {
    await server.close()
  }
})
