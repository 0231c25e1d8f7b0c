/**
 * Hono on Cloudflare Workers: the guard is Hono middleware, the group service's address a
 * Worker variable (`VOOT_BASE_URL` in wrangler.toml, or `wrangler secret`). No
 * `nodejs_compat` flag is needed; with it, voot-guard also publishes its diagnostics
 * channels. The guard (and its cache) is made once per isolate, on the first request,
 * because a Worker's variables arrive with the request.
 *
 *   npx wrangler dev            (from examples/workers-hono)
 *
 * `wrangler dev` serves it on http://localhost:8787, its default (`--port` for another).
 */
import { Hono } from 'hono'
import { createGuard, type VootEnv } from 'voot-guard/hono'

interface Bindings {
  VOOT_BASE_URL: string
}

type Env = VootEnv & { Bindings: Bindings }

let app: Hono<Env> | undefined

function createApp(baseUrl: string): Hono<Env> {
  const guard = createGuard({ baseUrl, realm: 'voot-guard-example' })
  const hono = new Hono<Env>()
  hono.get('/api/me', guard.authenticate(), async (c) => {
    const groups = await c.var.voot.groups()
    return c.json({ groups: groups.map((g) => ({ id: g.id, role: g.membership.basic })) })
  })
  // Employees of example.org. NB: on fc:org groups `admin` means *employee*, not administrator.
  hono.get('/api/staff', guard.requireGroup('fc:org:example.org', 'admin'), (c) =>
    c.json({ message: 'Hello, colleague', reason: c.var.voot.decision.reason }),
  )
  return hono
}

export default {
  fetch(request: Request, env: Bindings, context: unknown): Response | Promise<Response> {
    app ??= createApp(env.VOOT_BASE_URL)
    return app.fetch(request, env, context as never)
  },
}
