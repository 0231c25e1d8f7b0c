/**
 * Hono example: the same routes as the Express example; the guards are Hono middleware
 * and handlers read `c.var.voot`. Served here by @hono/node-server; the same `app.fetch`
 * runs on Bun, Deno or a worker.
 *
 *   VOOT_BASE_URL=https://groups-api.example.org/groups npx tsx examples/hono/app.ts
 *
 * Listens on http://127.0.0.1:3000 (set PORT for another port).
 */
import { serve } from '@hono/node-server'
import { Hono } from 'hono'
import { pathToFileURL } from 'node:url'
import { createGuard, type HonoGuardOptions, type VootEnv } from 'voot-guard/hono'
import { FEIDE_GROUPS, type ExampleGroups } from '../example-groups.js'

/**
 * Builds the app; `baseUrl` is the group service's address WITH its /groups prefix, and
 * `options` any further guard options (the demo's `npm start -- --redis` passes a shared
 * cache tier here), `groups` the groups the routes ask for (Feide's unless given).
 */
export function createApp(baseUrl: string, options: Partial<HonoGuardOptions> = {}, groups: ExampleGroups = FEIDE_GROUPS): Hono<VootEnv> {
  const guard = createGuard({ baseUrl, realm: 'voot-guard-example', ...options })
  const app = new Hono<VootEnv>()

  // Any valid personal token with the groups scope.
  app.get('/api/me', guard.authenticate(), async (c) => {
    const groups = await c.var.voot.groups()
    return c.json({ groups: groups.map((g) => ({ id: g.id, role: g.membership.basic })) })
  })

  // Employees of example.org by default. NB: on fc:org groups `admin` means *employee*, not administrator.
  app.get('/api/staff', guard.requireGroup(groups.staff, groups.staffRole), (c) =>
    c.json({ message: 'Hello, colleague', decision: c.var.voot.decision }),
  )

  // Anyone enrolled in INF1000 (any role).
  app.get('/api/inf1000', guard.requireGroup(groups.course), (c) => c.json({ message: 'Welcome to INF1000' }))

  return app
}

// Started directly (not imported by the demo or a test): listen on PORT.
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const baseUrl = process.env.VOOT_BASE_URL
  if (baseUrl === undefined) throw new Error('Set VOOT_BASE_URL to the group service address (with /groups)')
  const port = Number(process.env.PORT ?? 3000)
  serve({ fetch: createApp(baseUrl).fetch, port, hostname: '127.0.0.1' }, () => console.log(`listening on http://127.0.0.1:${port}`))
}
