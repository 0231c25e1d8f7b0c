/**
 * The contract tests' app as a Web-standard fetch handler, served by `@hono/node-server`.
 * `/admin` (the route of most rows) uses the plain guard call; the other routes `protect`.
 */
import { createServer } from 'node:http'
import { getRequestListener } from '@hono/node-server'
import { createGuard, type FetchGuardOptions, type OptionalFetchCheck } from '../../adapters/fetch/index.js'
import { isHttpError } from '../../src/adapter-kit.js'
import type { VootContext } from '../../src/index.js'
import type { GuardOptions } from '../../src/adapter-kit.js'
import { anonymousBody, closer, listen, routes, type RunningApp } from './apps.js'

export async function startFetchApp(options: GuardOptions): Promise<RunningApp> {
  const state = { handlerCalls: 0, delegated: [] as unknown[] }
  const guard = createGuard(options as FetchGuardOptions)
  async function handle(_request: Request, voot: VootContext | undefined): Promise<Response> {
    state.handlerCalls++
    if (voot === undefined) return Response.json(anonymousBody(voot))
    const groups = await voot.groups()
    return Response.json({ ok: true, reason: voot.decision.reason, groupCount: groups.length })
  }
  const table = routes(guard)
  const handlers: Record<string, (request: Request) => Promise<Response>> = {}
  for (const [path, check] of Object.entries(table)) {
    handlers[path] =
      path === '/admin'
        ? async (request) => {
            const voot = await check(request)
            return voot instanceof Response ? voot : handle(request, voot)
          }
        : // `handle` takes the `undefined` of `/maybe` (optional sign-in), so every check may be typed as optional.
          guard.protect(check as OptionalFetchCheck, handle)
  }
  async function fetch(request: Request): Promise<Response> {
    const handler = handlers[new URL(request.url).pathname]
    if (handler === undefined) return new Response(null, { status: 404 })
    try {
      return await handler(request)
    } catch (error) {
      if (!isHttpError(error)) throw error
      state.delegated.push(error)
      return Response.json({ delegated: error.code }, { status: error.status, headers: error.headers })
    }
  }
  const server = createServer(getRequestListener(fetch))
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
