/**
 * A plain service or job (no web framework): decide with `resolver.check`. It listens on
 * no port; its exit code is the answer: 0 allowed, 1 denied, 2 error (no token, or the
 * group service failed, so the answer is unknown).
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

/** How to run it, printed when VOOT_BASE_URL or VOOT_TOKEN is missing. */
export const USAGE = `Usage: VOOT_BASE_URL=https://groups-api.example.org/groups VOOT_TOKEN=... npx tsx examples/service/check.ts
The token is read from VOOT_TOKEN only, never from the command line (shell history).
Exit code: 0 allowed, 1 denied, 2 error.
`

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const { VOOT_BASE_URL: baseUrl, VOOT_TOKEN: token } = process.env
  if (baseUrl === undefined || baseUrl === '' || token === undefined || token === '') {
    process.stderr.write(`Missing ${baseUrl === undefined || baseUrl === '' ? 'VOOT_BASE_URL' : 'VOOT_TOKEN'}.\n${USAGE}`)
    process.exitCode = 2
  } else {
    // An error (already reported above for the group service) is 2, never 1: unknown is not "denied".
    process.exitCode = await mayPublish(baseUrl, token).then(
      (allowed) => (allowed ? 0 : 1),
      (error: unknown) => {
        if (!(error instanceof UpstreamError)) console.error(error instanceof Error ? error.message : String(error))
        return 2
      },
    )
  }
}
