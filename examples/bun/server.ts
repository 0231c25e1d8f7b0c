/**
 * Bun.serve with the fetch guard. Bun resolves voot-guard's `bun` condition, so the group
 * service is called with Bun's own fetch, and `resolver.close()` releases what the
 * resolver holds when the server stops.
 *
 *   VOOT_BASE_URL=https://groups-api.dataporten.no/groups bun examples/bun/server.ts
 *
 * Listens on http://127.0.0.1:3000 (set PORT for another port).
 */
import { createMembershipResolver } from 'voot-guard'
import { createGuard } from 'voot-guard/fetch'

declare const Bun: {
  serve(options: { port: number; hostname: string; fetch(request: Request): Response | Promise<Response> }): {
    port: number
    stop(): Promise<void>
  }
}

const resolver = createMembershipResolver({ baseUrl: process.env.VOOT_BASE_URL ?? 'https://groups-api.dataporten.no/groups' })
const guard = createGuard({ resolver, realm: 'voot-guard-example' })
// Employees of example.org. NB: on fc:org groups `admin` means *employee*, not administrator.
const staff = guard.protect(guard.requireGroup('fc:org:example.org', 'admin'), (_request, voot) =>
  Response.json({ message: 'Hello, colleague', reason: voot.decision.reason }),
)

const server = Bun.serve({
  port: Number(process.env.PORT ?? 3000),
  hostname: '127.0.0.1',
  fetch: (request) => (new URL(request.url).pathname === '/api/staff' ? staff(request) : new Response('Not found', { status: 404 })),
})
console.log(`listening on http://127.0.0.1:${server.port}`)

// On SIGINT or SIGTERM: stop taking requests, then release what the resolver holds.
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    void server
      .stop()
      .then(() => resolver.close())
      .then(() => console.log('closed'))
  })
}
