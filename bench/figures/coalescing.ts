/**
 * Figure 5: upstream calls for a burst of concurrent cold requests for one token, against
 * two controls (no cache; a cache without single-flight).
 *
 * @module
 */
import type { Child } from '../child.js'
import { profile } from '../profile.js'
import { details, progress, rows, startServer, stop } from '../run-context.js'
import type { EmulatorReady } from '../servers/emulator.js'
import { type CoalescingResult, measureCoalescing } from '../suites/coalescing.js'

/** Runs figure 5 against `emulator` (a slow one: the burst must overlap) and adds its rows. */
export async function coalescing(emulator: Child<EmulatorReady>): Promise<void> {
  progress(`5. coalescing: ${profile.coalescing} concurrent cold requests for one token (upstream 100 ms)`)
  const server = await startServer({ framework: 'express5', baseUrl: emulator.ready.baseUrl, coalescing: true })
  const results: CoalescingResult[] = await measureCoalescing(server, emulator, profile.coalescing)
  const stats = await server.call<{ coalesced: number }>('stats')
  await stop(server)
  details['coalescing'] = { results, coalesced: stats.coalesced }
  for (const result of results) {
    const label =
      result.route === '/coalesce' ? 'voot-guard' : result.route === '/naive' ? 'control: no cache' : 'control: cache without single-flight'
    const statuses = Object.entries(result.statuses)
      .map(([status, count]) => `${count}×${status}`)
      .join(' ')
    const isGuard = result.route === '/coalesce'
    rows.push({
      figure: '5',
      measure: `${label}: upstream calls for ${result.requests} concurrent requests`,
      result: `me/groups ${result.groupsCalls}, me/groups/{id} ${result.membershipCalls} (answers ${statuses}${isGuard ? `; ${stats.coalesced} waited on a shared call` : ''})`,
      target: isGuard ? '1 and 1' : '',
      met: isGuard ? result.groupsCalls === 1 && result.membershipCalls === 1 : undefined,
    })
  }
}
