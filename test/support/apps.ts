/**
 * The same small app in Express 4, Express 5, Koa 2 and Koa 3 (and, in apps-<framework>.ts,
 * Fastify, Hono and a fetch handler), guarded by voot-guard, on
 * a real server on 127.0.0.1:0. Used by the adapter contract tests.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import express5 from 'express'
import express4 from 'express4'
import Koa3 from 'koa'
import Koa2 from 'koa2'
import type { Context, Middleware } from 'koa'
import type { Request, RequestHandler, Response, NextFunction } from 'express'
import { createGuard as createExpressGuard, type ExpressGuardOptions } from '../../adapters/express/index.js'
import { createGuard as createKoaGuard, type KoaGuardOptions } from '../../adapters/koa/index.js'
import { startFastifyApp } from './apps-fastify.js'
import { startFetchApp } from './apps-fetch.js'
import { startHonoApp } from './apps-hono.js'
import { NEST_DECORATORS, startNestApp } from './apps-nest.js'
import { group, where, type Requirement, type VootError } from '../../src/index.js'
import { type GuardOptions } from '../../src/adapter-kit.js'

export const FRAMEWORKS = ['express4', 'express5', 'koa2', 'koa3', 'fastify', 'hono', 'fetch', 'nest-express', 'nest-fastify'] as const
export type Framework = (typeof FRAMEWORKS)[number]

export const ORG = 'fc:org:example.org'

export interface RunningApp {
  url: string
  /** How often a route handler ran (it must not run when a guard refuses). */
  handlerCalls: number
  /** Errors that reached the framework's own error handling. */
  delegated: unknown[]
  close(): Promise<void>
}

interface GuardLike<H, O = H> {
  requireGroup(id: string, role?: string): H
  requireAnyGroup(ids: readonly string[], role?: string): H
  requireAllGroups(ids: readonly string[], role?: string): H
  require(requirement: Requirement): H
  authenticate(): H
  authenticate(options: { optional: true }): O
}

/** What a route's handler answers for a request that reached it without a context (`/maybe`). */
export function anonymousBody(voot: null | undefined): { ok: true; anonymous: 'null' | 'undefined' } {
  return { ok: true, anonymous: voot === null ? 'null' : 'undefined' }
}

/** The two groups the routes name: one the test users hold, and one nobody holds. */
export interface RouteGroups {
  readonly held: string
  readonly none: string
}

const DATAPORTEN_GROUPS: RouteGroups = { held: ORG, none: 'fc:adhoc:none' }
let routeGroups = DATAPORTEN_GROUPS

/**
 * Starts apps whose routes name `groups` (another emulator dialect's ids) instead of the
 * Dataporten ones, for as long as `start` runs: the routes are built while an app starts.
 */
export async function withRouteGroups<T>(groups: RouteGroups, start: () => Promise<T>): Promise<T> {
  routeGroups = groups
  try {
    return await start()
  } finally {
    routeGroups = DATAPORTEN_GROUPS
  }
}

export function routes<H, O = H>(guard: GuardLike<H, O>): Record<string, H | O> {
  const { held, none } = routeGroups
  return {
    '/admin': guard.requireGroup(held, 'admin'),
    '/member': guard.requireGroup(held),
    '/any': guard.requireAnyGroup([none, held], 'admin'),
    '/all': guard.requireAllGroups([held, none]),
    '/me': guard.authenticate(),
    '/maybe': guard.authenticate({ optional: true }),
    '/custom': guard.require(where('has groups', async (ctx) => (await ctx.groups()).length > 0)),
    '/strict': guard.require(group(held, 'owner')),
  }
}

export async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

export function closer(server: Server): () => Promise<void> {
  return () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
    })
}

export async function startApp(framework: Framework, options: GuardOptions & { getToken?: () => never }): Promise<RunningApp> {
  if (framework === 'fastify') return startFastifyApp(options)
  if (framework === 'hono') return startHonoApp(options)
  if (framework === 'fetch') return startFetchApp(options)
  if (framework === 'nest-express' || framework === 'nest-fastify') {
    return startNestApp(framework === 'nest-express' ? 'express' : 'fastify', routes(NEST_DECORATORS), options)
  }
  const state = { handlerCalls: 0, delegated: [] as unknown[] }
  let server: Server
  if (framework === 'express4' || framework === 'express5') {
    const app = framework === 'express4' ? express4() : express5()
    const guard = createExpressGuard(options as ExpressGuardOptions)
    for (const [path, middleware] of Object.entries(routes<RequestHandler>(guard))) {
      app.get(path, middleware, async (req: Request, res: Response) => {
        state.handlerCalls++
        if (req.voot == null) {
          res.json(anonymousBody(req.voot))
          return
        }
        const groups = await req.voot.groups()
        res.json({ ok: true, reason: req.voot.decision.reason, groupCount: groups.length })
      })
    }
    app.use((err: VootError, _req: Request, res: Response, _next: NextFunction) => {
      state.delegated.push(err)
      res
        .status(err.status ?? 500)
        .set(err.headers ?? {})
        .json({ delegated: err.code })
    })
    server = createServer(app)
    const url = await listen(server)
    return {
      url,
      get handlerCalls() {
        return state.handlerCalls
      },
      delegated: state.delegated,
      close: closer(server),
    }
  }
  const app = framework === 'koa2' ? new Koa2() : new Koa3()
  app.silent = true
  const guard = createKoaGuard(options as KoaGuardOptions)
  const table = routes<Middleware>(guard)
  app.use(async (ctx: Context, next) => {
    try {
      await next()
    } catch (error) {
      const err = error as VootError
      state.delegated.push(err)
      ctx.status = err.status ?? 500
      ctx.set(err.headers ?? {})
      ctx.body = { delegated: err.code }
    }
  })
  app.use(async (ctx: Context) => {
    const middleware = table[ctx.path]
    if (middleware === undefined) {
      ctx.status = 404
      return
    }
    await middleware(ctx, async () => {
      state.handlerCalls++
      const voot = ctx.state.voot
      if (voot == null) {
        ctx.body = anonymousBody(voot)
        return
      }
      const groups = await voot.groups()
      ctx.body = { ok: true, reason: voot.decision.reason, groupCount: groups.length }
    })
  })
  server = createServer(app.callback())
  const url = await listen(server)
  return {
    url,
    get handlerCalls() {
      return state.handlerCalls
    },
    delegated: state.delegated,
    close: closer(server),
  }
}
