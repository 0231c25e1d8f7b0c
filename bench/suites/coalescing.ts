/**
 * Figure 5: 1,000 concurrent cold requests for one token, against an upstream slow enough
 * (100 ms) that they all overlap, and how many calls reach the group service per path;
 * with two controls: no cache at all, and a cache without single-flight.
 *
 * @module
 */
import { Pool } from 'undici'
import type { Child } from '../child.js'
import { encodeGroupId } from '../../src/group-id.js'
import { COALESCE_GROUP_ID } from '../servers/config.js'

/** One variant's outcome. */
export interface CoalescingResult {
  readonly route: string
  readonly requests: number
  /** Status code → count. */
  readonly statuses: Readonly<Record<string, number>>
  readonly groupsCalls: number
  readonly membershipCalls: number
  readonly seconds: number
}

/** Fires `requests` concurrent requests for one fresh token at each of the routes. */
export async function measureCoalescing(
  server: Child<{ port: number }>,
  emulator: Child<unknown>,
  requests: number,
): Promise<CoalescingResult[]> {
  const results: CoalescingResult[] = []
  const groupsPath = '/groups/me/groups'
  const membershipPath = `/groups/me/groups/${encodeGroupId(COALESCE_GROUP_ID)}`
  for (const route of ['/coalesce', '/naive', '/cache-only']) {
    const [token] = await emulator.call<string[]>('issue', { user: 'alice', count: 1 })
    await emulator.call('resetLog')
    const pool = new Pool(`http://127.0.0.1:${server.ready.port}`, { connections: requests, pipelining: 1 })
    const statuses: Record<string, number> = {}
    const started = performance.now()
    await Promise.all(
      Array.from({ length: requests }, () =>
        pool.request({ method: 'GET', path: route, headers: { authorization: `Bearer ${token}` } }).then(
          async (response) => {
            await response.body.dump()
            statuses[response.statusCode] = (statuses[response.statusCode] ?? 0) + 1
          },
          () => {
            statuses['error'] = (statuses['error'] ?? 0) + 1
          },
        ),
      ),
    )
    const seconds = (performance.now() - started) / 1000
    await pool.close()
    results.push({
      route,
      requests,
      statuses,
      groupsCalls: await emulator.call<number>('count', groupsPath),
      membershipCalls: await emulator.call<number>('count', membershipPath),
      seconds,
    })
  }
  return results
}
