/**
 * What the demo shows for each service the emulator plays (`--dialect`): the groups the
 * example's routes ask for, who the demo users are, and which request shows a 200, a 403
 * and an ended or pending membership. The emulator's data differ per dialect (Feide's
 * `fc:` ids under `/groups`, SURFconext's URNs at the root), so the examples are given the
 * dialect's groups and the guide its own lines.
 *
 * @module
 */
import { PROJECT_BOARD_GROUP_ID, READING_CLUB_GROUP_ID, type EmulatorDialect } from 'voot-guard/testing'
import { FEIDE_GROUPS, type ExampleGroups } from '../examples/example-groups.js'

/** One request of the guide that a demo user's token gets an answer to. */
export interface DemoUserRequest {
  readonly user: string
  readonly path: string
  readonly expectedStatus: number
  readonly description: string
}

/**
 * The demo's content for one dialect.
 */
export interface DemoDialect {
  /** The service played, for the guide's header. */
  readonly service: string
  /** The groups the example's routes ask for. */
  readonly groups: ExampleGroups
  /** What each guarded route allows, as the guide lists them. */
  readonly routes: readonly (readonly [string, string])[]
  /** The demo users, in a few words each. */
  readonly who: Readonly<Record<string, string>>
  /** The allowed request (first), the refused one, and one more refusal that teaches a rule. */
  readonly allowed: DemoUserRequest
  readonly refused: DemoUserRequest
  readonly lesson: DemoUserRequest
  /** The user, group and role of the guide's command-line check (the same decision as `refused`). */
  readonly check: { readonly user: string; readonly group: string; readonly role: string }
}

const ME_ROUTE = ['GET /api/me', 'any valid personal token; answers with your groups'] as const

const FEIDE: DemoDialect = {
  service: "Feide's (Dataporten's) groups API, under /groups",
  groups: FEIDE_GROUPS,
  routes: [
    ME_ROUTE,
    ['GET /api/staff', `employees of example.org: group ${FEIDE_GROUPS.staff}, role admin (on fc:org groups admin = employee)`],
    ['GET /api/inf1000', `anyone enrolled in INF1000: group ${FEIDE_GROUPS.course}`],
  ],
  who: {
    alice: 'employee of example.org; owner of two ad-hoc groups',
    bob: 'student: member of the org and of INF1000 (his MAT1100 membership is inactive)',
    carol: 'teacher of school class 4a/3 (admin on a school group = teacher)',
    dave: 'dated memberships only: one starts in 2099, one ended in 2020',
    erin: 'no groups at all',
    frank: 'pupil in school class 4a/3',
  },
  allowed: { user: 'alice', path: '/api/staff', expectedStatus: 200, description: 'alice is an employee of example.org: 200' },
  refused: {
    user: 'bob',
    path: '/api/staff',
    expectedStatus: 403,
    description: 'bob is a student, a member of the org but not an employee: 403 forbidden',
  },
  lesson: { user: 'dave', path: '/api/inf1000', expectedStatus: 403, description: "dave's INF1000 enrolment ended in 2020: 403 forbidden" },
  check: { user: 'bob', group: FEIDE_GROUPS.staff, role: 'admin' },
}

const SURFCONEXT_GROUPS: ExampleGroups = { staff: PROJECT_BOARD_GROUP_ID, staffRole: 'manager', course: READING_CLUB_GROUP_ID }

const SURFCONEXT: DemoDialect = {
  service: "SURFconext's OpenConext-voot, at the root, with URN group ids",
  groups: SURFCONEXT_GROUPS,
  routes: [
    ME_ROUTE,
    ['GET /api/staff', `managers (or above) of the project board: group ${PROJECT_BOARD_GROUP_ID}, role manager`],
    ['GET /api/inf1000', `members of the reading club: group ${READING_CLUB_GROUP_ID}, any role but prospect`],
  ],
  who: {
    alice: 'owner of the reading club, admin of the project board, member of research data',
    bob: 'member of the reading club; only a prospect (an invitee) of the project board',
    carol: 'manager of the reading club and of the project board',
    dave: 'only a prospect of the reading club: a member of nothing',
    erin: 'no groups at all',
    frank: 'member of research data (another institution)',
  },
  allowed: {
    user: 'alice',
    path: '/api/staff',
    expectedStatus: 200,
    description: 'alice is an admin of the project board, above manager: 200',
  },
  refused: {
    user: 'bob',
    path: '/api/staff',
    expectedStatus: 403,
    description: 'bob is only a prospect of the project board, an invitee, not a member: 403 forbidden',
  },
  lesson: {
    user: 'dave',
    path: '/api/inf1000',
    expectedStatus: 403,
    description: 'dave is only a prospect of the reading club, which no role requirement accepts: 403 forbidden',
  },
  check: { user: 'bob', group: PROJECT_BOARD_GROUP_ID, role: 'manager' },
}

/**
 * The demo's content per dialect.
 */
export const DEMO_DIALECTS: Readonly<Record<EmulatorDialect, DemoDialect>> = { dataporten: FEIDE, openconext: SURFCONEXT }
