/**
 * A plain service or job (no web framework): decide with `resolver.check`.
 *
 *   VOOT_BASE_URL=https://groups-api.example.org/groups VOOT_TOKEN=... npx tsx examples/service/check.ts
 *
 * The token comes from the environment, never from the command line (shell history).
 */
import { pathToFileURL } from 'node:url'
import { anyOf, createMembershipResolver, group, UpstreamError } from 'voot-guard'

/** Whether the token's user may publish course material: a teacher (admin) of INF1000, or an employee. */
export async function mayPublish(baseUrl: string, token: string): Promise<boolean> {
  const resolver = createMembershipResolver({ baseUrl, timeout: 3_000 })
  try {
    const decision = await resolver.check(
      token,
      anyOf(group('fc:fs:fs:emne:example.org:INF1000:1', 'admin'), group('fc:org:example.org', 'admin')),
    )
    // A decision says why, without listing the user's other groups.
    console.log(decision.allowed ? 'allowed' : `denied: ${decision.reason}`)
    return decision.allowed
  } catch (error) {
    // Unknown is neither yes nor no: the group service failed, so try again later.
    if (error instanceof UpstreamError) console.error(`group service unavailable (${error.code})`)
    throw error
  } finally {
    await resolver.close()
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const { VOOT_BASE_URL: baseUrl, VOOT_TOKEN: token } = process.env
  if (baseUrl === undefined || token === undefined) throw new Error('Set VOOT_BASE_URL and VOOT_TOKEN')
  process.exitCode = (await mayPublish(baseUrl, token)) ? 0 : 1
}
