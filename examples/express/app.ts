/**
 * Express example: three routes guarded by group membership.
 *
 * Run it against the built-in emulator with `npm start`, or on its own:
 *   VOOT_BASE_URL=https://groups-api.example.org/groups npx tsx examples/express/app.ts
 *
 * Listens on http://127.0.0.1:3000 (set PORT for another port).
 */
import express, { type Express } from 'express'
import { pathToFileURL } from 'node:url'
import { createGuard, type ExpressGuardOptions } from 'voot-guard/express'
import { FEIDE_GROUPS, type ExampleGroups } from '../example-groups.js'

/**
 * Builds the app; `baseUrl` is the group service's address WITH its /groups prefix, and
 * `options` any further guard options (the demo's `npm start -- --redis` passes a shared
 * cache tier here), `groups` the groups the routes ask for (Feide's unless given).
 */
export function createApp(baseUrl: string, options: Partial<ExpressGuardOptions> = {}, groups: ExampleGroups = FEIDE_GROUPS): Express {
  // One guard (one resolver, one cache) for the whole app: routes that need different
  // groups still share one `me/groups` call per token.
  const guard = createGuard({ baseUrl, realm: 'voot-guard-example', ...options })
  const app = express()

  // Any valid personal token with the groups scope.
  app.get('/api/me', guard.authenticate(), async (req, res) => {
    const groups = await req.voot!.groups()
    res.json({ groups: groups.map((g) => ({ id: g.id, role: g.membership.basic })) })
  })

  // Employees of example.org by default. NB: on fc:org groups `admin` means *employee*, not administrator.
  app.get('/api/staff', guard.requireGroup(groups.staff, groups.staffRole), (req, res) => {
    res.json({ message: 'Hello, colleague', decision: req.voot!.decision })
  })

  // Anyone enrolled in INF1000 (any role).
  app.get('/api/inf1000', guard.requireGroup(groups.course), (_req, res) => {
    res.json({ message: 'Welcome to INF1000' })
  })

  return app
}

// Started directly (not imported by the demo or a test): listen on PORT.
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const baseUrl = process.env.VOOT_BASE_URL
  if (baseUrl === undefined) throw new Error('Set VOOT_BASE_URL to the group service address (with /groups)')
  const port = Number(process.env.PORT ?? 3000)
  createApp(baseUrl).listen(port, '127.0.0.1', () => console.log(`listening on http://127.0.0.1:${port}`))
}
