/**
 * Property: interleaved requests from many tokens, with random latencies, invalidations
 * and shared calls, never see another token's answer. Every user's memberships carry the
 * user's own name, so an answer that crossed tokens is caught at once.
 */
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createMembershipResolver, group, type Decision } from '../../src/index.js'
import { startEmulator, type Emulator, type EmulatorData } from '../../testing/index.js'

const USERS = ['u0', 'u1', 'u2', 'u3', 'u4', 'u5']
const ROLES = ['member', 'admin', 'owner'] as const
const SHARED = 'fc:adhoc:shared'
const EVENS = 'fc:adhoc:evens'
const own = (user: string): string => `fc:adhoc:own-${user}`
const GROUP_IDS = [SHARED, EVENS, ...USERS.map(own)]

/** Each user: a role in SHARED that differs by user, EVENS for even users, and an own group. */
function membershipsOf(index: number): Map<string, { basic: string; displayName: string }> {
  const user = USERS[index]!
  const result = new Map([[SHARED, { basic: ROLES[index % 3]!, displayName: user }]])
  if (index % 2 === 0) result.set(EVENS, { basic: 'member', displayName: user })
  result.set(own(user), { basic: 'owner', displayName: user })
  return result
}

const data: EmulatorData = {
  groupTypes: [{ id: 'voot:ad-hoc', displayName: 'Ad-hoc group' }],
  groups: GROUP_IDS.map((id) => ({ id, displayName: id, type: 'voot:ad-hoc' })),
  users: USERS.map((id, index) => ({
    id,
    name: id,
    memberships: [...membershipsOf(index)].map(([groupId, membership]) => ({ groupId, membership })),
  })),
  clients: [],
}

type Op =
  | { kind: 'groups'; user: number; latency: number }
  | { kind: 'membership'; user: number; groupId: string; latency: number }
  | { kind: 'check'; user: number; groupId: string; role: (typeof ROLES)[number] | undefined; latency: number }
  | { kind: 'invalidate'; user: number }

const user = fc.nat({ max: USERS.length - 1 })
const latency = fc.constantFrom(0, 0, 1, 5, 15)
const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant('groups' as const), user, latency }),
  fc.record({ kind: fc.constant('membership' as const), user, groupId: fc.constantFrom(...GROUP_IDS), latency }),
  fc.record({
    kind: fc.constant('check' as const),
    user,
    groupId: fc.constantFrom(...GROUP_IDS),
    role: fc.constantFrom(undefined, ...ROLES),
    latency,
  }),
  fc.record({ kind: fc.constant('invalidate' as const), user }),
)

function expectedDecision(index: number, groupId: string, role: string | undefined): boolean {
  const membership = membershipsOf(index).get(groupId)
  if (membership === undefined) return false
  return role === undefined || ROLES.indexOf(membership.basic as never) >= ROLES.indexOf(role as never)
}

describe('token isolation', () => {
  let emulator: Emulator
  let tokens: string[]

  beforeAll(async () => {
    emulator = await startEmulator({ data })
    tokens = USERS.map((id) => emulator.issueToken(id))
  })
  afterAll(async () => {
    await emulator.close()
  })

  it('interleaved lookups of many tokens only ever see their own answers', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 40 }), fc.boolean(), async (ops, smallCache) => {
        emulator.faults.clear()
        const resolver = createMembershipResolver({ baseUrl: emulator.baseUrl, cache: { max: smallCache ? 4 : 1000 } })
        try {
          const checks = ops.map(async (each) => {
            const token = tokens[each.user]!
            const name = USERS[each.user]!
            if (each.kind === 'invalidate') {
              resolver.invalidate(token)
              return
            }
            if (each.latency > 0) emulator.faults.add({ kind: 'latency', ms: each.latency }, { token, times: 1 })
            switch (each.kind) {
              case 'groups': {
                const groups = await resolver.groups(token)
                expect(new Set(groups.map((g) => g.id))).toEqual(new Set(membershipsOf(each.user).keys()))
                for (const g of groups) expect(g.membership.displayName).toBe(name)
                return
              }
              case 'membership': {
                const membership = await resolver.membership(token, each.groupId)
                const expected = membershipsOf(each.user).get(each.groupId)
                if (expected === undefined) expect(membership).toBeNull()
                else expect(membership).toMatchObject(expected)
                return
              }
              case 'check': {
                const decision: Decision = await resolver.check(token, group(each.groupId, each.role))
                expect(decision.allowed).toBe(expectedDecision(each.user, each.groupId, each.role))
                return
              }
            }
          })
          await Promise.all(checks)
        } finally {
          await resolver.close()
        }
      }),
      { numRuns: 40 },
    )
  })
})
