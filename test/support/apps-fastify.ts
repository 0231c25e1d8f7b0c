/**
 * The contract tests' app in Fastify 5, guarded with `onRequest` hooks.
 */
import Fastify, { type FastifyError, type onRequestHookHandler } from 'fastify'
import { createGuard, type FastifyGuardOptions } from '../../adapters/fastify/index.js'
import type { GuardOptions } from '../../src/adapter-kit.js'
import { anonymousBody, routes, type RunningApp } from './apps.js'

export async function startFastifyApp(options: GuardOptions): Promise<RunningApp> {
  const state = { handlerCalls: 0, delegated: [] as unknown[] }
  const app = Fastify()
  const guard = createGuard(options as FastifyGuardOptions)
  for (const [path, onRequest] of Object.entries(routes<onRequestHookHandler>(guard))) {
    app.get(path, { onRequest }, async (request) => {
      state.handlerCalls++
      if (request.voot == null) return anonymousBody(request.voot)
      const groups = await request.voot.groups()
      return { ok: true, reason: request.voot.decision.reason, groupCount: groups.length }
    })
  }
  app.setErrorHandler((error: FastifyError & { headers?: Record<string, string> }, _request, reply) => {
    state.delegated.push(error)
    return reply
      .code(error.statusCode ?? 500)
      .headers(error.headers ?? {})
      .send({ delegated: error.code })
  })
  const url = await app.listen({ port: 0, host: '127.0.0.1' })
  return {
    url,
    get handlerCalls() {
      return state.handlerCalls
    },
    delegated: state.delegated,
    close: () => app.close(),
  }
}
