/**
 * Deno.serve with the fetch guard, from npm. It needs `--allow-net` and nothing else: the
 * group service's address is the first argument (reading an environment variable would
 * need `--allow-env`).
 *
 *   deno run --allow-net examples/deno/main.ts https://groups-api.dataporten.no/groups
 *
 * Run here from a package.json with voot-guard in node_modules; without one, import from
 * 'npm:voot-guard' and 'npm:voot-guard/fetch'.
 *
 * Listens on http://127.0.0.1:8000, Deno's usual port (a second argument names another).
 */
import { createMembershipResolver } from 'voot-guard'
import { createGuard } from 'voot-guard/fetch'

declare const Deno: {
  args: string[]
  serve(
    options: { port: number; hostname: string; onListen(address: { port: number }): void },
    handler: (request: Request) => Response | Promise<Response>,
  ): { shutdown(): Promise<void> }
  addSignalListener(signal: 'SIGINT' | 'SIGTERM', listener: () => void): void
}

const resolver = createMembershipResolver({ baseUrl: Deno.args[0] ?? 'https://groups-api.dataporten.no/groups' })
const guard = createGuard({ resolver, realm: 'voot-guard-example' })
// Employees of example.org. NB: on fc:org groups `admin` means *employee*, not administrator.
const staff = guard.protect(guard.requireGroup('fc:org:example.org', 'admin'), (_request, voot) =>
  Response.json({ message: 'Hello, colleague', reason: voot.decision.reason }),
)

const server = Deno.serve(
  {
    port: Number(Deno.args[1] ?? 8000),
    hostname: '127.0.0.1',
    onListen: ({ port }) => console.log(`listening on http://127.0.0.1:${port}`),
  },
  (request) => (new URL(request.url).pathname === '/api/staff' ? staff(request) : new Response('Not found', { status: 404 })),
)

// On Ctrl-C: stop taking requests, then release what the resolver holds.
Deno.addSignalListener('SIGINT', () => {
  void server
    .shutdown()
    .then(() => resolver.close())
    .then(() => console.log('closed'))
})
