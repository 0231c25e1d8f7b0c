/**
 * The data set an emulator serves when given none: a small Norwegian university
 * (`example.org`) with an organisation, units, courses, a study programme, ad-hoc groups and
 * a school class, and users chosen so that every interesting case has a name.
 *
 * | user    | what they show                                                                  |
 * |---------|---------------------------------------------------------------------------------|
 * | `alice` | employee: `basic: "admin"` on `fc:org:example.org` (admin means EMPLOYEE there), owner of both ad-hoc groups |
 * | `bob`   | student: `member` of the org, an active course, an INACTIVE course (`active: false`), a programme, a member of an ad-hoc group |
 * | `carol` | teacher in the school class (`basic: "admin"` means TEACHER there; `affiliation` is a string) |
 * | `dave`  | dated memberships only: one starts in 2099, one ended in 2020 (so `me/groups` is `[]`) |
 * | `erin`  | no groups at all                                                                |
 * | `frank` | pupil in the school class                                                       |
 *
 * The organisation and the public seminar have a logo (`groups/{groupid}/logo`: a PNG and an
 * SVG); the other groups answer 404 there.
 *
 * Registered clients: `demo-client` / `demo-secret` (redirect URIs
 * `http://127.0.0.1:3000/callback` and `http://localhost:3000/callback`, and the gate's
 * `http://127.0.0.1/_gate/callback` and `http://localhost/_gate/callback`; on loopback any
 * port matches), and
 * `demo-service` / `demo-service-secret` for the client credentials grant.
 *
 * The value is deeply frozen; emulators serve a copy of it.
 *
 * @module
 */
import { deepFreeze } from '../../src/internal.js'
import type { EmulatorData } from './data.js'

/**
 * `fc:org:example.org`: the organisation (members are not listed: it is too large).
 *
 * @example
 * ```ts
 * requireGroup(ORG_ID, 'admin') // employees: on fc:org groups admin means employee
 * ```
 */
export const ORG_ID = 'fc:org:example.org'
/**
 * A school class whose id contains `%2F` (the class is called "4a/3"); carol teaches it.
 *
 * @example
 * ```ts
 * await resolver.membership(emulator.issueToken('carol'), SCHOOL_GROUP_ID) // { basic: 'admin', ... }
 * ```
 */
export const SCHOOL_GROUP_ID = 'fc:gogroup:example.org:u:NO123:4a%2F3:2026-08-01:2027-06-30'
/**
 * A non-public ad-hoc group owned by alice, with bob as a member.
 *
 * @example
 * ```ts
 * requireGroup(ADHOC_GROUP_ID, 'owner') // alice only
 * ```
 */
export const ADHOC_GROUP_ID = 'fc:adhoc:3f2d9a8e-6c1b-4e5a-9d47-2b8c1e0f7a15'
/**
 * A public ad-hoc group owned by alice (visible without a token).
 *
 * @example
 * ```ts
 * await fetch(`${emulator.baseUrl}/groups/${encodeURIComponent(PUBLIC_ADHOC_GROUP_ID)}`)
 * ```
 */
export const PUBLIC_ADHOC_GROUP_ID = 'fc:adhoc:0b5e7c3a-91d4-4f26-8a1e-c6d2f4b9e307'

const STUDENT_ROLE = { nb: 'Student', en: 'Student' }

/** A 16x16 blue PNG: the organisation's logo. */
const ORG_LOGO =
  'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAABAAAAAQCAIAAACQkWg2AAAAFklEQVR42mOQ9+shCTGMahjVMHw1AAD0VPkBhEMZKAAAAABJRU5ErkJggg=='
/** A small SVG: the open seminar's logo (an ad-hoc group's uploaded logo). */
const SEMINAR_LOGO =
  'data:image/svg+xml,' +
  encodeURIComponent('<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16"><circle cx="8" cy="8" r="7" fill="#c0392b"/></svg>')

/**
 * The default data set (see the module documentation for the users and what they show).
 *
 * @example
 * ```ts
 * import { startEmulator, defaultData } from 'voot-guard/testing'
 * const emulator = await startEmulator({ data: defaultData })
 * const token = emulator.issueToken('alice')
 * ```
 */
export const defaultData: EmulatorData = deepFreeze({
  groupTypes: [
    { id: 'fc:org', displayName: { nb: 'Organisasjon', en: 'Organisation' } },
    { id: 'fc:orgunit', displayName: { nb: 'Organisasjonsenhet', en: 'Organisational unit' } },
    { id: 'fc:fs:emne', displayName: { nb: 'Emne', en: 'Course' } },
    { id: 'fc:fs:prg', displayName: { nb: 'Studieprogram', en: 'Study programme' } },
    { id: 'voot:ad-hoc', displayName: { nb: 'Ad-hoc-gruppe', en: 'Ad-hoc group' } },
    { id: 'fc:gogroup', displayName: { nb: 'Undervisningsgruppe', en: 'Teaching group' } },
    { id: 'fc:grep', displayName: { nb: 'Fag (Grep)', en: 'Subject (Grep)' } },
  ],
  groups: [
    {
      id: ORG_ID,
      displayName: 'Eksempeluniversitetet',
      type: 'fc:org',
      orgType: ['higher_education'],
      norEduOrgNIN: 'NO974760673',
      public: false,
      logo: ORG_LOGO,
    },
    {
      id: 'fc:org:example.org:unit:AVD-U2',
      displayName: 'Institutt for informatikk',
      type: 'fc:orgunit',
      parent: ORG_ID,
      public: false,
    },
    {
      id: 'fc:org:example.org:unit:AVD-U14',
      displayName: 'Det juridiske fakultet',
      type: 'fc:orgunit',
      parent: ORG_ID,
      public: false,
    },
    {
      id: 'fc:fs:fs:emne:example.org:INF1000:1',
      displayName: 'INF1000 Grunnkurs i objektorientert programmering',
      description: 'Introduction to object-oriented programming',
      type: 'fc:fs:emne',
      parent: ORG_ID,
      code: 'INF1000',
      url: 'https://www.example.org/studier/emner/INF1000/',
      public: false,
    },
    {
      id: 'fc:fs:fs:emne:example.org:MAT1100:1',
      displayName: 'MAT1100 Kalkulus',
      description: 'Calculus',
      type: 'fc:fs:emne',
      parent: ORG_ID,
      code: 'MAT1100',
      public: false,
    },
    {
      id: 'fc:fs:fs:prg:example.org:BINF',
      displayName: { nb: 'Bachelor i informatikk', en: 'Bachelor in informatics' },
      type: 'fc:fs:prg',
      parent: ORG_ID,
      code: 'BINF',
      public: false,
    },
    {
      id: ADHOC_GROUP_ID,
      displayName: 'Lesegruppe for distribuerte systemer',
      description: 'Reading group: distributed systems papers, Thursdays',
      type: 'voot:ad-hoc',
      public: false,
    },
    {
      id: PUBLIC_ADHOC_GROUP_ID,
      displayName: 'Åpent seminar i informasjonssikkerhet',
      description: 'Open seminar series on information security',
      type: 'voot:ad-hoc',
      public: true,
      logo: SEMINAR_LOGO,
    },
    {
      id: SCHOOL_GROUP_ID,
      displayName: 'Matematikk 4a/3',
      type: 'fc:gogroup',
      parent: 'fc:org:example.org:unit:NO123',
      go_type: 'u',
      go_type_displayName: { nb: 'undervisningsgruppe', en: 'teaching group' },
      public: false,
    },
  ],
  users: [
    {
      id: 'alice',
      name: 'Alice Hansen',
      email: 'alice@example.org',
      memberships: [
        {
          groupId: ORG_ID,
          membership: {
            basic: 'admin',
            displayName: { nb: 'Ansatt', en: 'Employee' },
            active: true,
            affiliation: ['employee', 'member', 'staff'],
            primaryAffiliation: 'employee',
            title: ['Overingeniør'],
          },
        },
        {
          groupId: 'fc:org:example.org:unit:AVD-U2',
          membership: {
            basic: 'admin',
            displayName: { nb: 'Ansatt', en: 'Employee' },
            active: true,
            affiliation: ['employee', 'member', 'staff'],
            primaryAffiliation: 'employee',
            primaryOrgUnit: true,
            title: ['Overingeniør'],
          },
        },
        { groupId: ADHOC_GROUP_ID, membership: { basic: 'owner', displayName: { nb: 'Eier', en: 'Owner' } } },
        { groupId: PUBLIC_ADHOC_GROUP_ID, membership: { basic: 'owner', displayName: { nb: 'Eier', en: 'Owner' } } },
      ],
    },
    {
      id: 'bob',
      name: 'Bob Nilsen',
      email: 'bob@student.example.org',
      memberships: [
        {
          groupId: ORG_ID,
          membership: {
            basic: 'member',
            displayName: STUDENT_ROLE,
            active: true,
            affiliation: ['student', 'member'],
            primaryAffiliation: 'student',
          },
        },
        {
          groupId: 'fc:fs:fs:emne:example.org:INF1000:1',
          membership: { basic: 'member', displayName: 'Student', active: true, fsroles: ['STUDENT'] },
        },
        {
          groupId: 'fc:fs:fs:emne:example.org:MAT1100:1',
          membership: { basic: 'member', displayName: 'Student', active: false, fsroles: ['STUDENT'] },
        },
        {
          groupId: 'fc:fs:fs:prg:example.org:BINF',
          membership: { basic: 'member', displayName: STUDENT_ROLE, active: true, fsroles: ['STUDENT'] },
        },
        { groupId: ADHOC_GROUP_ID, membership: { basic: 'member', displayName: { nb: 'Medlem', en: 'Member' } } },
      ],
    },
    {
      id: 'carol',
      name: 'Carol Berg',
      email: 'carol@skole.example.org',
      memberships: [
        {
          groupId: SCHOOL_GROUP_ID,
          membership: {
            basic: 'admin',
            displayName: { nb: 'Lærer', en: 'Teacher' },
            active: true,
            affiliation: 'faculty',
          },
        },
      ],
    },
    {
      id: 'dave',
      name: 'Dave Lie',
      email: 'dave@example.org',
      memberships: [
        {
          groupId: ORG_ID,
          membership: {
            basic: 'member',
            displayName: { nb: 'Tilknyttet', en: 'Affiliate' },
            affiliation: ['affiliate'],
            primaryAffiliation: 'affiliate',
            notBefore: '2099-01-01T00:00:00Z',
          },
        },
        {
          groupId: 'fc:fs:fs:emne:example.org:INF1000:1',
          membership: { basic: 'member', displayName: 'Student', fsroles: ['STUDENT'], notAfter: '2020-06-30T22:00:00Z' },
        },
      ],
    },
    { id: 'erin', name: 'Erin Dahl', email: 'erin@example.org', memberships: [] },
    {
      id: 'frank',
      name: 'Frank Olsen',
      memberships: [
        {
          groupId: SCHOOL_GROUP_ID,
          membership: { basic: 'member', displayName: { nb: 'Elev', en: 'Pupil' }, active: true, affiliation: 'student' },
        },
      ],
    },
  ],
  clients: [
    {
      clientId: 'demo-client',
      clientSecret: 'demo-secret',
      name: 'Demo client',
      // Any app on loopback, any port and path (the gate's /_gate/callback, the examples'
      // /callback): `/*` on a loopback host (see redirectUriMatches). No other host.
      redirectUris: ['http://127.0.0.1/*', 'http://localhost/*'],
      scopes: ['openid', 'userid', 'profile', 'email', 'groups'],
    },
    {
      clientId: 'demo-service',
      clientSecret: 'demo-service-secret',
      name: 'Demo backend service (client credentials)',
      redirectUris: [],
      scopes: ['groups'],
    },
  ],
})
