/**
 * A course route (`/courses/:id`, the course's members only) in every framework, its group
 * computed from the route's parameter per request (issue 52), against the emulator's course
 * groups: the contract's 401/403/503, the warm path, and an id built from a hostile URL
 * refused without a call.
 */
import 'reflect-metadata'
import { createServer, type Server } from 'node:http'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { request } from 'undici'
import express, { type Request } from 'express'
import Koa from 'koa'
import Fastify from 'fastify'
import { Hono } from 'hono'
import { getRequestListener } from '@hono/node-server'
import { startEmulator, type Emulator } from '../../testing/index.js'
import { createGuard as createExpressGuard } from '../../adapters/express/index.js'
import { createGuard as createKoaGuard } from '../../adapters/koa/index.js'
import { createGuard as createFastifyGuard } from '../../adapters/fastify/index.js'
import { createGuard as createHonoGuard } from '../../adapters/hono/index.js'
import { createGuard as createFetchGuard } from '../../adapters/fetch/index.js'
import { RequireGroup, RequireVoot } from '../../adapters/nestjs/index.js'
import { anyOf, group } from '../../src/index.js'
import type { GuardOptions } from '../../src/adapter-kit.js'
import { closer, listen } from '../support/apps.js'
import { createContractController, startNestApplication } from '../support/apps-nest.js'
import { VootGuardModule } from '../../adapters/nestjs/index.js'

const course = (id: string | undefined) => `fc:fs:fs:emne:example.org:${id}:1`
const COURSE_APPS = ['express', 'koa', 'fastify', 'hono', 'fetch', 'nest-express', 'nest-fastify'] as const

interface CourseApp {
  readonly url: string
  close(): Promise<void>
}

async function served(server: Server): Promise<CourseApp> {
  return { url: await listen(server), close: closer(server) }
}

/** `/courses/:id` (requireGroup of a function) and `/either/:id` (require of a function) in `framework`. */
async function startCourseApp(framework: (typeof COURSE_APPS)[number], options: GuardOptions): Promise<CourseApp> {
  const either = (id: string | undefined) => anyOf(group(course(id)), group('fc:org:nowhere.example', 'admin'))
  switch (framework) {
    case 'express': {
      const app = express()
      const guard = createExpressGuard(options)
      app.get(
        '/courses/:id',
        guard.requireGroup((req: Request<{ id: string }>) => course(req.params.id), 'member'),
        (req, res) => {
          const id: string = req.params.id
          res.json({ ok: true, id, reason: req.voot?.decision.reason })
        },
      )
      app.get(
        '/either/:id',
        guard.require((req: Request<{ id: string }>) => either(req.params.id)),
        (_req, res) => {
          res.json({ ok: true })
        },
      )
      return served(createServer(app))
    }
    case 'koa': {
      const app = new Koa()
      app.silent = true
      const guard = createKoaGuard(options)
      // Koa's `ctx.path` is not decoded; a router's params are.
      const idOf = (ctx: Koa.Context) => decodeURIComponent(ctx.path.split('/')[2] ?? '')
      const byPath = guard.requireGroup((ctx) => course(idOf(ctx)), 'member')
      const eitherGuard = guard.require((ctx) => either(idOf(ctx)))
      app.use(async (ctx, next) => (ctx.path.startsWith('/courses/') ? byPath(ctx, next) : eitherGuard(ctx, next)))
      app.use((ctx) => {
        ctx.body = { ok: true }
      })
      return served(createServer(app.callback()))
    }
    case 'fastify': {
      const app = Fastify()
      const guard = createFastifyGuard(options)
      app.get<{ Params: { id: string } }>(
        '/courses/:id',
        { onRequest: guard.requireGroup((request) => course((request.params as { id: string }).id), 'member') },
        async () => ({ ok: true }),
      )
      app.get('/either/:id', { onRequest: guard.require((request) => either((request.params as { id: string }).id)) }, async () => ({
        ok: true,
      }))
      await app.listen({ port: 0, host: '127.0.0.1' })
      const { port } = app.server.address() as { port: number }
      return { url: `http://127.0.0.1:${port}`, close: () => app.close() }
    }
    case 'hono': {
      const app = new Hono()
      const guard = createHonoGuard(options)
      app.get(
        '/courses/:id',
        guard.requireGroup((c) => course(c.req.param('id')), 'member'),
        (c) => c.json({ ok: true }),
      )
      app.get(
        '/either/:id',
        guard.require((c) => either(c.req.param('id'))),
        (c) => c.json({ ok: true }),
      )
      return served(createServer(getRequestListener(app.fetch)))
    }
    case 'fetch': {
      const guard = createFetchGuard(options)
      const idOf = (request: globalThis.Request) => decodeURIComponent(new URL(request.url).pathname.split('/')[2] ?? '')
      const courses = guard.protect(
        guard.requireGroup((request) => course(idOf(request)), 'member'),
        () => Response.json({ ok: true }),
      )
      const eitherRoute = guard.protect(
        guard.require((request) => either(idOf(request))),
        () => Response.json({ ok: true }),
      )
      const handler = (request: globalThis.Request) =>
        new URL(request.url).pathname.startsWith('/courses/') ? courses(request) : eitherRoute(request)
      return served(createServer(getRequestListener(handler)))
    }
    case 'nest-express':
    case 'nest-fastify': {
      const controller = createContractController(
        {
          '/courses/:id': [RequireGroup((params) => course(params['id']), 'member')],
          '/either/:id': [RequireVoot((params) => either(params['id']))],
        },
        () => undefined,
      )
      const app = await startNestApplication(framework === 'nest-express' ? 'express' : 'fastify', VootGuardModule.forRoot(options), [
        controller,
      ])
      await app.listen(0, '127.0.0.1')
      return { url: (await app.getUrl()).replace('[::1]', '127.0.0.1'), close: () => app.close() }
    }
  }
}

let emulator: Emulator

beforeAll(async () => {
  emulator = await startEmulator()
})
afterAll(async () => {
  await emulator.close()
})
afterEach(() => {
  emulator.faults.clear()
})

async function get(url: string, token?: string) {
  const response = await request(url, token === undefined ? {} : { headers: { authorization: `Bearer ${token}` } })
  const text = await response.body.text()
  return {
    status: response.statusCode,
    headers: response.headers,
    text,
    json: text ? (JSON.parse(text) as Record<string, unknown>) : undefined,
  }
}

describe.each(COURSE_APPS)('a course route in %s', (framework) => {
  let app: CourseApp

  beforeAll(async () => {
    app = await startCourseApp(framework, { baseUrl: emulator.baseUrl, timeout: 1000 })
  })
  afterAll(async () => {
    await app.close()
  })

  it("allows the course's member and refuses the others by the contract", async () => {
    const bob = emulator.issueToken('bob')
    expect((await get(`${app.url}/courses/INF1000`, bob)).status).toBe(200)
    // bob's MAT1100 membership is inactive; alice takes no course.
    const inactive = await get(`${app.url}/courses/MAT1100`, bob)
    expect(inactive.status).toBe(403)
    expect(inactive.json).toMatchObject({ error: 'forbidden' })
    expect(inactive.text).toContain(course('MAT1100'))
    expect((await get(`${app.url}/courses/INF1000`, emulator.issueToken('alice'))).status).toBe(403)
    const anonymous = await get(`${app.url}/courses/INF1000`)
    expect(anonymous.status).toBe(401)
    expect(anonymous.json).toMatchObject({ error: 'unauthorized' })
    expect((await get(`${app.url}/either/INF1000`, bob)).status).toBe(200)
    expect((await get(`${app.url}/either/MAT1100`, bob)).status).toBe(403)
  })

  it('decides a second request for the same course from the cache', async () => {
    const bob = emulator.issueToken('bob')
    expect((await get(`${app.url}/courses/INF1000`, bob)).status).toBe(200)
    const calls = emulator.count()
    expect((await get(`${app.url}/courses/INF1000`, bob)).status).toBe(200)
    expect((await get(`${app.url}/either/INF1000`, bob)).status).toBe(200)
    expect(emulator.count()).toBe(calls)
  })

  it('answers 503 when the group service fails', async () => {
    const token = emulator.issueToken('bob')
    emulator.faults.add({ kind: 'status', status: 500 }, { token })
    const res = await get(`${app.url}/courses/INF1000`, token)
    expect(res.status).toBe(503)
    expect(res.headers['retry-after']).toBeDefined()
  })

  it.each([
    ['a control character', '%01', '\u0001'],
    ['a line break', '%0D%0Aset-cookie:x', 'set-cookie'],
    ['a group id over the length limit', 'A'.repeat(1100), 'AAAA'],
  ])('refuses an id built from a hostile URL (%s) with 403, without a call', async (label, segment, echo) => {
    const token = emulator.issueToken('bob')
    const calls = emulator.count()
    for (const route of ['courses', 'either']) {
      const res = await get(`${app.url}/${route}/${segment}`, token)
      if (framework.endsWith('fastify') && label.includes('length')) {
        // Fastify refuses a parameter over its maxParamLength (100) itself, before any hook.
        expect(res.status).toBe(414)
        continue
      }
      expect(res.status).toBe(403)
      expect(res.json).toMatchObject({ error: 'forbidden', error_description: 'The group this request names is not a valid group id' })
      expect(res.text).not.toContain(echo)
    }
    expect(emulator.count()).toBe(calls)
  })
})
