/**
 * The library's resolver reads the emulator's OpenConext dialect: `me/groups` at the root,
 * `me/groups/{id}` answering a whole group, memberships sent as `{ basic }` or as a plain
 * role string, a 404 for a non-member; and the default roles decide OpenConext's five:
 * manager between member and admin, a prospect (an invitee) satisfies nothing, not even
 * "any role", on the cold and the warm path.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { warmAllowed } from '../support/warm-check.js'
import { createMembershipResolver, group, type MembershipResolver } from '../../src/index.js'
import { PROJECT_BOARD_GROUP_ID, READING_CLUB_GROUP_ID, RESEARCH_DATA_GROUP_ID, startEmulator, type Emulator } from '../../testing/index.js'

let emulator: Emulator
let resolver: MembershipResolver

beforeAll(async () => {
  emulator = await startEmulator({ dialect: 'openconext' })
  resolver = createMembershipResolver({ baseUrl: emulator.baseUrl })
})
afterAll(async () => {
  await resolver.close()
  await emulator.close()
})

describe('createMembershipResolver({ baseUrl: emulator.baseUrl }) on the OpenConext dialect', () => {
  it('asks the routes at the root', async () => {
    emulator.resetLog()
    await resolver.groups(emulator.issueToken('alice'))
    await resolver.membership(emulator.issueToken('alice'), READING_CLUB_GROUP_ID)
    expect(emulator.requests.map((request) => request.path)).toEqual([
      '/me/groups',
      `/me/groups/${encodeURIComponent(READING_CLUB_GROUP_ID)}`,
    ])
  })

  it('reads me/groups: object and plain-string memberships come out alike, OpenConext fields kept', async () => {
    const groups = await resolver.groups(emulator.issueToken('alice'))
    expect(groups.map((each) => [each.id, each.membership.basic])).toEqual([
      [READING_CLUB_GROUP_ID, 'owner'],
      [PROJECT_BOARD_GROUP_ID, 'admin'], // sent as the plain string "admin"
      [RESEARCH_DATA_GROUP_ID, 'member'],
    ])
    expect(groups[0]).toMatchObject({ displayName: 'Reading club', sourceID: 'SURFteams' })
  })

  it('reads me/groups/{id}: the membership out of the whole group, in either form', async () => {
    const carol = emulator.issueToken('carol')
    expect(await resolver.membership(carol, READING_CLUB_GROUP_ID)).toMatchObject({ basic: 'manager' }) // { basic: "manager" }
    expect(await resolver.membership(carol, PROJECT_BOARD_GROUP_ID)).toMatchObject({ basic: 'manager' }) // "manager"
    expect(await resolver.membership(emulator.issueToken('bob'), PROJECT_BOARD_GROUP_ID)).toMatchObject({ basic: 'prospect' })
    expect(await resolver.membership(emulator.issueToken('dave'), READING_CLUB_GROUP_ID)).toMatchObject({ basic: 'prospect' })
  })

  it('reads the 404 for a group the user is not in as "not a member"', async () => {
    expect(await resolver.membership(emulator.issueToken('erin'), READING_CLUB_GROUP_ID)).toBeNull()
    expect(await resolver.membership(emulator.issueToken('frank'), PROJECT_BOARD_GROUP_ID)).toBeNull()
  })

  it('decides with the five roles: manager between member and admin, a prospect meets no named role', async () => {
    const check = (user: string, groupId: string, role: string) => resolver.check(emulator.issueToken(user), group(groupId, role))
    expect((await check('carol', READING_CLUB_GROUP_ID, 'member')).allowed).toBe(true)
    expect((await check('carol', READING_CLUB_GROUP_ID, 'manager')).allowed).toBe(true)
    expect((await check('carol', READING_CLUB_GROUP_ID, 'admin')).allowed).toBe(false)
    expect((await check('carol', PROJECT_BOARD_GROUP_ID, 'manager')).allowed).toBe(true) // from a plain string
    expect((await check('alice', PROJECT_BOARD_GROUP_ID, 'manager')).allowed).toBe(true) // admin > manager, plain string
    expect((await check('bob', READING_CLUB_GROUP_ID, 'member')).allowed).toBe(true) // plain "member"
    expect((await check('bob', PROJECT_BOARD_GROUP_ID, 'member')).allowed).toBe(false) // prospect
    expect((await check('dave', READING_CLUB_GROUP_ID, 'member')).allowed).toBe(false) // prospect, plain string
    expect((await check('erin', READING_CLUB_GROUP_ID, 'member')).allowed).toBe(false)
  })

  it('a prospect fails "any role" too, cold and warm; a manager passes it', async () => {
    for (const [user, groupId, allowed] of [
      ['dave', READING_CLUB_GROUP_ID, false],
      ['bob', PROJECT_BOARD_GROUP_ID, false],
      ['carol', READING_CLUB_GROUP_ID, true],
    ] as const) {
      const token = emulator.issueToken(user)
      const requirement = group(groupId)
      const cold = await resolver.check(token, requirement)
      expect(cold.allowed, `${user} ${groupId}`).toBe(allowed)
      // The warm path never decides otherwise: the same decision, or none.
      const warm = warmAllowed(resolver, token, requirement)
      if (warm !== undefined) expect(warm).toEqual(cold)
      expect(await resolver.check(token, requirement)).toEqual(cold)
    }
  })
})
