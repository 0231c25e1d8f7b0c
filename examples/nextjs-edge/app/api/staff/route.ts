/**
 * A Next.js route handler on the edge runtime (`app/api/staff/route.ts`): the fetch guard
 * wraps the handler. Next.js bundles it with the `edge-light` condition, so voot-guard
 * calls the group service with the runtime's fetch. The guard lives at module level, so
 * its cache is shared by the requests one edge instance serves.
 *
 *   VOOT_BASE_URL=https://groups-api.dataporten.no/groups   (in .env.local)
 *
 * `next dev` serves it on http://localhost:3000/api/staff, Next.js's default port.
 */
import { createGuard } from 'voot-guard/fetch'

export const runtime = 'edge'

const guard = createGuard({
  baseUrl: process.env.VOOT_BASE_URL ?? 'https://groups-api.dataporten.no/groups',
  realm: 'voot-guard-example',
})

// Employees of example.org. NB: on fc:org groups `admin` means *employee*, not administrator.
export const GET = guard.protect(guard.requireGroup('fc:org:example.org', 'admin'), (_request, voot) =>
  Response.json({ message: 'Hello, colleague', reason: voot.decision.reason }),
)
