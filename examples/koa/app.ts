/**
 * Koa example: the same routes as the Express example, with Koa's own error handling.
 *
 *   VOOT_BASE_URL=https://groups-api.example.org/groups npx tsx examples/koa/app.ts
 *
 * Listens on http://127.0.0.1:3000 (set PORT for another port).
 */
import Koa from 'koa'
import { pathToFileURL } from 'node:url'
import { createGuard, type KoaGuardOptions } from 'voot-guard/koa'
import { FEIDE_GROUPS, type ExampleGroups } from '../example-groups.js'

/**
 * Builds the app; `baseUrl` is the group service's address WITH its /groups prefix, and
 * `options` any further guard options (the demo's `npm start -- --redis` passes a shared
 * cache tier here), `groups` the groups the routes ask for (Feide's unless given).
 */
export function createApp(baseUrl: string, options: Partial<KoaGuardOptions> = {}, groups: ExampleGroups = FEIDE_GROUPS): Koa {
  const guard = createGuard({ baseUrl, realm: 'voot-guard-example', ...options })
  const staff = guard.requireGroup(groups.staff, groups.staffRole) // by default admin on fc:org = employee
  const me = guard.authenticate()
  const inf1000 = guard.requireGroup(groups.course) // any role
  const app = new Koa()

  // Each route is a plain middleware that runs the guard, then the handler as its `next`.
  // (A router such as @koa/router does the path matching in a real app.)
  app.use(async (ctx, next) => {
    if (ctx.path !== '/api/staff') return next()
    await staff(ctx, async () => {
      ctx.body = { message: 'Hello, colleague', decision: ctx.state.voot!.decision }
    })
  })

  app.use(async (ctx, next) => {
    if (ctx.path !== '/api/me') return next()
    await me(ctx, async () => {
      const groups = await ctx.state.voot!.groups()
      ctx.body = { groups: groups.map((g) => ({ id: g.id, role: g.membership.basic })) }
    })
  })

  app.use(async (ctx, next) => {
    if (ctx.path !== '/api/inf1000') return next()
    await inf1000(ctx, async () => {
      ctx.body = { message: 'Welcome to INF1000' }
    })
  })
  return app
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const baseUrl = process.env.VOOT_BASE_URL
  if (baseUrl === undefined) throw new Error('Set VOOT_BASE_URL to the group service address (with /groups)')
  const port = Number(process.env.PORT ?? 3000)
  createApp(baseUrl).listen(port, '127.0.0.1', () => console.log(`listening on http://127.0.0.1:${port}`))
}
