/**
 * Fastify example: the same routes as the Express example, with the voot-guard plugin
 * (`app.voot`) and guards as `onRequest` hooks.
 *
 *   VOOT_BASE_URL=https://groups-api.example.org/groups npx tsx examples/fastify/app.ts
 *
 * Listens on http://127.0.0.1:3000 (set PORT for another port).
 */
import Fastify, { type FastifyInstance } from 'fastify'
import { pathToFileURL } from 'node:url'
import vootGuard, { type FastifyGuardOptions } from 'voot-guard/fastify'
import { FEIDE_GROUPS, type ExampleGroups } from '../example-groups.js'

/**
 * Builds the app; `baseUrl` is the group service's address WITH its /groups prefix, and
 * `options` any further guard options (the demo's `npm start -- --redis` passes a shared
 * cache tier here), `groups` the groups the routes ask for (Feide's unless given).
 */
export async function createApp(
  baseUrl: string,
  options: Partial<FastifyGuardOptions> = {},
  groups: ExampleGroups = FEIDE_GROUPS,
): Promise<FastifyInstance> {
  const app = Fastify()
  // One plugin (one resolver, one cache) for the whole app: app.voot holds the guards,
  // and request.voot is null on routes no guard ran on.
  await app.register(vootGuard, { baseUrl, realm: 'voot-guard-example', ...options })

  // Any valid personal token with the groups scope.
  app.get('/api/me', { onRequest: app.voot.authenticate() }, async (request) => {
    const groups = await request.voot!.groups()
    return { groups: groups.map((g) => ({ id: g.id, role: g.membership.basic })) }
  })

  // Employees of example.org by default. NB: on fc:org groups `admin` means *employee*, not administrator.
  app.get('/api/staff', { onRequest: app.voot.requireGroup(groups.staff, groups.staffRole) }, async (request) => {
    return { message: 'Hello, colleague', decision: request.voot!.decision }
  })

  // Anyone enrolled in INF1000 (any role).
  app.get('/api/inf1000', { onRequest: app.voot.requireGroup(groups.course) }, async () => {
    return { message: 'Welcome to INF1000' }
  })

  return app
}

// Started directly (not imported by the demo or a test): listen on PORT.
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const baseUrl = process.env.VOOT_BASE_URL
  if (baseUrl === undefined) throw new Error('Set VOOT_BASE_URL to the group service address (with /groups)')
  const app = await createApp(baseUrl)
  console.log(`listening on ${await app.listen({ port: Number(process.env.PORT ?? 3000), host: '127.0.0.1' })}`)
}
