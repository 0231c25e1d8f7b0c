/**
 * The data set the OpenConext dialect serves when given none: SURFconext-style groups with
 * URN ids from three backends (`sourceID`), the five OpenConext roles, and the same users as
 * the Dataporten data ({@link defaultData}), so a test can name the same people in both.
 *
 * | user    | what they show                                                                              |
 * |---------|---------------------------------------------------------------------------------------------|
 * | `alice` | `owner` of the reading club, `admin` of the project board (a plain string), `member` of research data |
 * | `bob`   | `member` of the reading club (a plain string), `prospect` of the project board (an invitee: NOT a member), `member` of the invite group |
 * | `carol` | `manager` of the reading club, `manager` of the project board (a plain string)              |
 * | `dave`  | only a `prospect` (a plain string) of the reading club: an invitee, a member of nothing     |
 * | `erin`  | no groups at all                                                                            |
 * | `frank` | `member` of research data (a plain string)                                                  |
 *
 * Roles, lowest first: `prospect` < `member` < `manager` < `admin` < `owner`. The registered
 * clients are those of {@link defaultData}.
 *
 * The value is deeply frozen; emulators serve a copy of it.
 *
 * @module
 */
import { deepFreeze } from '../../src/internal.js'
import type { EmulatorData } from './data.js'
import { defaultData } from './default-data.js'

/**
 * A SURFteams group: the reading club (owner alice, manager carol, member bob, prospect dave).
 *
 * @example
 * ```ts
 * const emulator = await startEmulator({ dialect: 'openconext' })
 * await resolver.membership(emulator.issueToken('carol'), READING_CLUB_GROUP_ID) // { basic: 'manager' }
 * ```
 */
export const READING_CLUB_GROUP_ID = 'urn:collab:group:surfteams.nl:nl:surfnet:diensten:reading_club'
/**
 * A SURFteams group: the project board (admin alice, manager carol, prospect bob).
 *
 * @example
 * ```ts
 * requireGroup(PROJECT_BOARD_GROUP_ID, 'manager') // carol and alice; not bob, a prospect
 * ```
 */
export const PROJECT_BOARD_GROUP_ID = 'urn:collab:group:surfteams.nl:nl:surfnet:diensten:project_board'
/**
 * A group from an external VOOT 2 backend of another institution (members alice and frank).
 *
 * @example
 * ```ts
 * requireGroup(RESEARCH_DATA_GROUP_ID) // alice, frank
 * ```
 */
export const RESEARCH_DATA_GROUP_ID = 'urn:collab:group:example.org:research_data'
/**
 * A group from SURF's invite service (member bob).
 *
 * @example
 * ```ts
 * requireGroup(INVITE_GROUP_ID) // bob
 * ```
 */
export const INVITE_GROUP_ID = 'urn:collab:group:invite.surfconext.nl:course_reviewers'

/**
 * The OpenConext dialect's default data set (see the module documentation).
 *
 * @example
 * ```ts
 * import { startEmulator, openConextData } from 'voot-guard/testing'
 * const emulator = await startEmulator({ dialect: 'openconext', data: openConextData })
 * ```
 */
export const openConextData: EmulatorData = deepFreeze({
  groupTypes: [],
  groups: [
    {
      id: READING_CLUB_GROUP_ID,
      displayName: 'Reading club',
      description: 'Distributed systems papers, Thursdays',
      sourceID: 'SURFteams',
    },
    {
      id: PROJECT_BOARD_GROUP_ID,
      displayName: 'Project board',
      description: 'Steering board of the research data project',
      sourceID: 'SURFteams',
    },
    {
      id: RESEARCH_DATA_GROUP_ID,
      displayName: 'Research data',
      sourceID: 'Example University',
    },
    {
      id: INVITE_GROUP_ID,
      displayName: 'Course reviewers',
      description: 'Course reviewers',
      sourceID: 'Invite',
    },
  ],
  users: [
    {
      id: 'alice',
      name: 'Alice Hansen',
      email: 'alice@example.org',
      memberships: [
        { groupId: READING_CLUB_GROUP_ID, membership: { basic: 'owner' } },
        { groupId: PROJECT_BOARD_GROUP_ID, membership: 'admin' },
        { groupId: RESEARCH_DATA_GROUP_ID, membership: { basic: 'member' } },
      ],
    },
    {
      id: 'bob',
      name: 'Bob Nilsen',
      email: 'bob@student.example.org',
      memberships: [
        { groupId: READING_CLUB_GROUP_ID, membership: 'member' },
        { groupId: PROJECT_BOARD_GROUP_ID, membership: { basic: 'prospect' } },
        { groupId: INVITE_GROUP_ID, membership: { basic: 'member' } },
      ],
    },
    {
      id: 'carol',
      name: 'Carol Berg',
      email: 'carol@example.org',
      memberships: [
        { groupId: READING_CLUB_GROUP_ID, membership: { basic: 'manager' } },
        { groupId: PROJECT_BOARD_GROUP_ID, membership: 'manager' },
      ],
    },
    {
      id: 'dave',
      name: 'Dave Lie',
      email: 'dave@example.org',
      memberships: [{ groupId: READING_CLUB_GROUP_ID, membership: 'prospect' }],
    },
    { id: 'erin', name: 'Erin Dahl', email: 'erin@example.org', memberships: [] },
    {
      id: 'frank',
      name: 'Frank Olsen',
      memberships: [{ groupId: RESEARCH_DATA_GROUP_ID, membership: 'member' }],
    },
  ],
  clients: structuredClone(defaultData.clients),
})
