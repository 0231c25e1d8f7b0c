/**
 * `voot-guard groups`: the groups of the user behind `VOOT_TOKEN`, as the group service
 * lists them (`GET me/groups`), for debugging a deployment.
 *
 * @module
 */
import { createGroupsClient, type GroupWithMembership, localize } from '../src/index.js'
import { isActiveAt } from '../src/internal.js'
import { DEFAULT_TIMEOUT } from '../src/internal.js'
import type { Command } from './command.js'
import { EXIT_OK } from './exit-codes.js'
import { formatTable } from './table.js'
import { runUpstreamCommand, UPSTREAM_OPTIONS } from './upstream-command.js'

const OPTIONS = { ...UPSTREAM_OPTIONS, 'show-all': { type: 'boolean' } } as const

const HELP = `Usage: voot-guard groups --base-url URL [--show-all] [--json] [--timeout MS]

Lists the groups of the user behind VOOT_TOKEN (GET me/groups): id, type, role, whether
the membership is active now, and the group's name.

NB: me/groups can be partial (a failing backend leaves groups out), so a group missing
here does not prove that the user is not a member; "voot-guard check" asks the group itself.

Options:
  --base-url URL   the group service's base URL (default: $VOOT_BASE_URL): Feide's with its
                   /groups prefix, https://groups-api.dataporten.no/groups; SURFconext's
                   without one, https://voot.surfconext.nl
  --show-all       also list inactive and expired memberships (showAll=true)
  --timeout MS     deadline of the call to the group service (default: ${DEFAULT_TIMEOUT})
  --json           print {"groups": [{"id","name","type","role","active","membership"}]}
  -h, --help       show this help

Environment:
  VOOT_TOKEN       the user's access token (required; never passed as an argument)
  VOOT_BASE_URL    default for --base-url

Exit code: 0 listed, 2 error (bad arguments, invalid token, or the group service failed).
`

/**
 * The `groups` command.
 */
export const groupsCommand: Command = {
  name: 'groups',
  summary: "list the VOOT_TOKEN user's groups with role and active state",
  help: HELP,
  run: (args, io) =>
    runUpstreamCommand(args, io, { command: 'groups', help: HELP, options: OPTIONS }, async (call) => {
      const showAll = call.values['show-all'] === true
      const client = createGroupsClient({ baseUrl: call.baseUrl, timeout: call.timeout, dispatcher: call.dispatcher })
      call.onClose(() => client.close())
      const token = call.token()
      const signal = io.signal === undefined ? {} : { signal: io.signal }
      const rows = (await client.myGroups(token, { showAll, ...signal })).map((each) => describeGroup(each, Date.now()))
      call.out().stdout.write(call.json ? `${JSON.stringify({ groups: rows })}\n` : formatGroups(rows, showAll))
      return EXIT_OK
    }),
}

interface GroupRow {
  readonly id: string
  readonly name: string
  readonly type: string | null
  readonly role: string | null
  readonly active: boolean
  readonly membership: GroupWithMembership['membership']
}

function describeGroup(listed: GroupWithMembership, now: number): GroupRow {
  return {
    id: listed.id,
    name: localize(listed.displayName),
    type: listed.type ?? null,
    role: typeof listed.membership.basic === 'string' ? listed.membership.basic : null,
    // The same rule as the guards: the membership's and the group's own dates both count.
    active: isActiveAt(listed.membership, now) && isActiveAt(listed, now),
    membership: listed.membership,
  }
}

function formatGroups(rows: readonly GroupRow[], showAll: boolean): string {
  const scope = showAll ? 'including inactive ones' : 'active only; --show-all lists inactive ones too'
  if (rows.length === 0) return `No groups (${scope}).\n`
  const table = formatTable(
    ['ID', 'TYPE', 'ROLE', 'ACTIVE', 'NAME'],
    rows.map((row) => [row.id, row.type ?? '-', row.role ?? '-', row.active ? 'yes' : 'no', row.name]),
  )
  return `${table}\n${rows.length} group${rows.length === 1 ? '' : 's'} (${scope}).\n`
}
