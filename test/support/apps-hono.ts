/**
 * The contract tests' app in Hono 4, served by `@hono/node-server`.
 */
import { createServer } from 'node:http'
import { getRequestListener } from '@hono/node-server'
import { Hono, type MiddlewareHandler } from 'hono'
import { HTTPException } from 'hono/http-exception'
import { createGuard, type HonoGuardOptions, type OptionalVootEnv } from '../../adapters/hono/index.js'
import type { VootError } from '../../src/index.js'
import type { GuardOptions } from '../../src/adapter-kit.js'
import { anonymousBody, closer, listen, routes, type RunningApp } from './apps.js'

export async function startHonoApp(options: GuardOptions): Promise<RunningApp> {
  const state = { handlerCalls: 0, delegated: [] as unknown[] }
  // Typed for every route: `/maybe` (optional sign-in) may have no context.
  const app = new Hono<OptionalVootEnv>()
  const guard = createGuard(options as HonoGuardOptions)
  for (const [path, middleware] of Object.entries(routes(guard))) {
    app.get(path, middleware as MiddlewareHandler<OptionalVootEnv>, async (c) => {
      state.handlerCalls++
      const voot = c.var.voot
      if (voot === undefined) return c.json(anonymousBody(voot))
      const groups = await voot.groups()
      return c.json({ ok: true, reason: c.get('voot')?.decision.reason, groupCount: groups.length })
    })
  }
  app.onError((error, c) => {
    if (!(error instanceof HTTPException)) throw error
    const cause = error.cause as VootError
    state.delegated.push(cause)
    return c.json({ delegated: cause.code }, error.status, Object.fromEntries(error.getResponse().headers))
  })
  const server = createServer(getRequestListener(app.fetch))
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
