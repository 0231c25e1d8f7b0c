/**
 * `voot-guard check`: does the user behind `VOOT_TOKEN` meet a group requirement? The
 * exit code answers (0 allowed, 1 denied, 2 unknown or error); the output says why.
 *
 * @module
 */
import { DEFAULT_TIMEOUT } from '../src/internal.js'
import { createMembershipResolver, type Decision, type DecisionReason, DEFAULT_ROLES, group, InvalidArgumentError } from '../src/index.js'
import type { Command } from './command.js'
import { formatExplanation } from './explain-tree.js'
import { EXIT_DENIED, EXIT_OK } from './exit-codes.js'
import { formatFields } from './table.js'
import { runUpstreamCommand, UPSTREAM_OPTIONS } from './upstream-command.js'

const OPTIONS = {
  ...UPSTREAM_OPTIONS,
  explain: { type: 'boolean' },
  group: { type: 'string' },
  role: { type: 'string' },
  roles: { type: 'string' },
} as const

const EXPLANATION: Readonly<Record<DecisionReason, string>> = {
  member: 'an active membership with a sufficient role',
  authenticated: 'a valid personal token',
  predicate: 'the predicate holds',
  not_member: 'not a member (the group service answered 404 for this group)',
  role_too_low: 'a member, but the role is below the required one',
  inactive: 'the membership (or its group) is inactive',
  not_yet_valid: 'the membership (or its group) is not valid yet',
  expired: 'the membership (or its group) has expired',
  other_service: "the requirement is on another group service than the token's",
}

const HELP = `Usage: voot-guard check --base-url URL --group ID [--role ROLE] [--roles LIST] [--explain] [--json] [--timeout MS]

Asks the group service whether the user behind VOOT_TOKEN has an active membership of
group ID (with at least ROLE), with the same rules as the guards: a group missing from
me/groups is not a denial; only me/groups/{id} can deny.

Exit code: 0 allowed, 1 denied, 2 error (bad arguments, invalid token, or the group
service failed: then the answer is unknown, neither allowed nor denied).

Options:
  --base-url URL   the group service's base URL (default: $VOOT_BASE_URL): Feide's with its
                   /groups prefix, https://groups-api.dataporten.no/groups; SURFconext's
                   without one, https://voot.surfconext.nl
  --group ID       the group id, such as fc:org:example.org
  --role ROLE      the least role required (default: any role)
  --roles LIST     role order, lowest first, comma-separated (default: ${DEFAULT_ROLES.join(',')})
  --timeout MS     deadline of each call to the group service (default: ${DEFAULT_TIMEOUT})
  --explain        also print how the decision came about: each answer it read (cached or
                   fetched; role, activity, dates) and the part it rests on. It shows your
                   own memberships: it is for the person who holds the token
  --json           print the decision as JSON: {"outcome","allowed","reason","requirement","groupId"}
                   (with --explain, and "tree"),
                   or {"outcome":"error","error":{"code","message","upstreamStatus"}}
  -h, --help       show this help

Environment:
  VOOT_TOKEN       the user's access token (required; never passed as an argument)
  VOOT_BASE_URL    default for --base-url

Examples:
  voot-guard check --base-url https://groups-api.dataporten.no/groups --group fc:org:example.org --role admin
  voot-guard check --base-url https://voot.surfconext.nl --group urn:collab:group:surfteams.nl:nl:surfnet:diensten:admins
`

/**
 * The `check` command.
 */
export const checkCommand: Command = {
  name: 'check',
  summary: 'decide whether the VOOT_TOKEN user meets a group requirement (exit 0 allowed, 1 denied, 2 error)',
  help: HELP,
  run: (args, io) =>
    runUpstreamCommand(
      args,
      io,
      { command: 'check', help: HELP, options: OPTIONS, report: { jsonFields: { outcome: 'error' }, upstreamMeansUnknown: true } },
      async (call) => {
        const { values } = call
        if (values.group === undefined)
          throw new InvalidArgumentError('--group is required: the id of the group to check, such as fc:org:example.org')
        const roles = values.roles?.split(',').map((role) => role.trim())
        // Validated before any call: a typo in the id or role is a usage error, not a denial.
        const requirement = group(values.group, values.role)
        const resolver = createMembershipResolver({
          baseUrl: call.baseUrl,
          timeout: call.timeout,
          dispatcher: call.dispatcher,
          ...(roles === undefined ? {} : { roles }),
        })
        call.onClose(() => resolver.close())
        resolver.assertRequirement(requirement)
        const token = call.token()
        const callOptions = io.signal === undefined ? {} : { signal: io.signal }
        if (values.explain === true) {
          const { decision, tree } = await resolver.explain(token, requirement, callOptions)
          call
            .out()
            .stdout.write(
              call.json
                ? `${JSON.stringify({ ...decisionJson(decision), tree })}\n`
                : `${formatDecision(decision)}\n${formatExplanation(tree)}`,
            )
          return decision.allowed ? EXIT_OK : EXIT_DENIED
        }
        const decision = await resolver.check(token, requirement, callOptions)
        call.out().stdout.write(call.json ? `${JSON.stringify(decisionJson(decision))}\n` : formatDecision(decision))
        return decision.allowed ? EXIT_OK : EXIT_DENIED
      },
    ),
}

function decisionJson(decision: Decision): Record<string, unknown> {
  return { outcome: decision.allowed ? 'allowed' : 'denied', ...decision }
}

function formatDecision(decision: Decision): string {
  const fields: [string, string][] = [
    ['requirement', decision.requirement],
    [
      'reason',
      `${decision.reason}: ${decision.reason === 'predicate' && !decision.allowed ? 'the predicate does not hold' : EXPLANATION[decision.reason]}`,
    ],
  ]
  return `${decision.allowed ? 'ALLOWED' : 'DENIED'}\n${formatFields(fields)}`
}
