/**
 * Web-standard fetch example: the same routes as the Express example as one
 * `(request: Request) => Promise<Response>` handler, which Bun.serve, Deno.serve, a worker
 * or @hono/node-server (used here) can serve. In a Next.js route handler it reads:
 *
 *   export const GET = guard.protect(guard.requireGroup('fc:org:example.org', 'admin'),
 *     (request, voot, { params }) => Response.json({ reason: voot.decision.reason }))
 *
 *   VOOT_BASE_URL=https://groups-api.example.org/groups npx tsx examples/fetch/app.ts
 *
 * Listens on http://127.0.0.1:3000 (set PORT for another port).
 */
import { serve } from '@hono/node-server'
import { pathToFileURL } from 'node:url'
import { createGuard, type FetchGuardOptions } from 'voot-guard/fetch'
import { FEIDE_GROUPS, type ExampleGroups } from '../example-groups.js'

/**
 * Builds the handler; `baseUrl` is the group service's address WITH its /groups prefix, and
 * `options` any further guard options (the demo's `npm start -- --redis` passes a shared
 * cache tier here), `groups` the groups the routes ask for (Feide's unless given).
 */
export function createHandler(
  baseUrl: string,
  options: Partial<FetchGuardOptions> = {},
  groups: ExampleGroups = FEIDE_GROUPS,
): (request: Request) => Promise<Response> {
  const guard = createGuard({ baseUrl, realm: 'voot-guard-example', ...options })
  const staff = guard.requireGroup(groups.staff, groups.staffRole) // by default admin on fc:org = employee

  const routes: Record<string, (request: Request) => Response | Promise<Response>> = {
    // `protect` wraps a handler: it runs with the VootContext once the guard allows.
    '/api/me': guard.protect(guard.authenticate(), async (_request, voot) => {
      const groups = await voot.groups()
      return Response.json({ groups: groups.map((g) => ({ id: g.id, role: g.membership.basic })) })
    }),
    // Or call a guard: it resolves with the refusal (return it as it is) or the VootContext.
    '/api/staff': async (request) => {
      const voot = await staff(request)
      if (voot instanceof Response) return voot
      return Response.json({ message: 'Hello, colleague', decision: voot.decision })
    },
    '/api/inf1000': guard.protect(guard.requireGroup(groups.course), () => Response.json({ message: 'Welcome to INF1000' })),
  }

  return async (request) => {
    const route = request.method === 'GET' ? routes[new URL(request.url).pathname] : undefined
    return route === undefined ? new Response('Not found', { status: 404 }) : route(request)
  }
}

// Started directly (not imported by the demo or a test): listen on PORT.
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const baseUrl = process.env.VOOT_BASE_URL
  if (baseUrl === undefined) throw new Error('Set VOOT_BASE_URL to the group service address (with /groups)')
  const port = Number(process.env.PORT ?? 3000)
  serve({ fetch: createHandler(baseUrl), port, hostname: '127.0.0.1' }, () => console.log(`listening on http://127.0.0.1:${port}`))
}
