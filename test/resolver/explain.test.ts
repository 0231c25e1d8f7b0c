/**
 * `resolver.explain` against the emulator: the decision `check` gives, with the tree of the
 * requirement's parts, the answers each read (cached or fetched; role, activity, dates) and
 * the parts the decision rests on.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import {
  allOf,
  anyOf,
  authenticated,
  createMembershipResolver,
  group,
  groupOfType,
  UpstreamError,
  where,
  type ExplainedBranch,
  type ExplainedLeaf,
  type ExplainedNode,
  type MembershipResolver,
  type Requirement,
} from '../../src/index.js'
import { ADHOC_GROUP_ID, ORG_ID, startEmulator, type Emulator } from '../../testing/index.js'

const INF1000 = 'fc:fs:fs:emne:example.org:INF1000:1'
const MAT1100 = 'fc:fs:fs:emne:example.org:MAT1100:1'

let emulator: Emulator
let resolver: MembershipResolver

beforeAll(async () => {
  emulator = await startEmulator()
})
afterAll(async () => {
  await emulator.close()
})
beforeEach(() => {
  resolver = createMembershipResolver({ baseUrl: emulator.baseUrl, retries: 0 })
})
afterEach(async () => {
  emulator.faults.clear()
  await resolver.close()
})

const leaves = (node: ExplainedNode): ExplainedLeaf[] => ('parts' in node ? node.parts.flatMap(leaves) : [node])

describe('resolver.explain', () => {
  it('an allowed token: the leaf that settled it, fetched the first time and cached the second', async () => {
    const token = emulator.issueToken('alice')
    const requirement = group(ORG_ID, 'admin')
    const first = await resolver.explain(token, requirement)
    expect(first.decision).toEqual({
      allowed: true,
      reason: 'member',
      requirement: `group ${ORG_ID} (role admin or higher)`,
      groupId: ORG_ID,
    })
    expect(first.tree).toEqual({
      kind: 'group',
      requirement: `group ${ORG_ID} (role admin or higher)`,
      outcome: 'allowed',
      reason: 'member',
      settled: true,
      answers: [
        { endpoint: 'me/groups', groupId: ORG_ID, source: 'fetched', tier: 'upstream', membership: { role: 'admin', activity: 'active' } },
      ],
    })
    const second = await resolver.explain(token, requirement)
    expect(second.decision).toEqual(first.decision)
    expect(leaves(second.tree)[0]?.answers[0]).toMatchObject({ source: 'cached', tier: 'l1' })
  })

  it('a denied token: the list entry and the me/groups/{id} answer that denied it', async () => {
    const { decision, tree } = await resolver.explain(emulator.issueToken('bob'), group(ORG_ID, 'admin'))
    expect(decision).toMatchObject({ allowed: false, reason: 'role_too_low', groupId: ORG_ID })
    expect(tree).toMatchObject({ outcome: 'denied', reason: 'role_too_low', settled: true })
    expect((tree as ExplainedLeaf).answers).toEqual([
      { endpoint: 'me/groups', groupId: ORG_ID, source: 'fetched', tier: 'upstream', membership: { role: 'member', activity: 'active' } },
      {
        endpoint: 'me/groups/{groupid}',
        groupId: ORG_ID,
        source: 'fetched',
        tier: 'upstream',
        membership: { role: 'member', activity: 'active' },
      },
    ])
  })

  it('dates and activity as the rules saw them; a 404 as no membership', async () => {
    const dave = emulator.issueToken('dave')
    const early = await resolver.explain(dave, group(ORG_ID))
    expect(early.decision.reason).toBe('not_yet_valid')
    expect((early.tree as ExplainedLeaf).answers).toEqual([
      expect.objectContaining({ endpoint: 'me/groups', membership: null }),
      expect.objectContaining({
        endpoint: 'me/groups/{groupid}',
        membership: { role: 'member', activity: 'not_yet_valid', notBefore: '2099-01-01T00:00:00Z' },
      }),
    ])
    const late = await resolver.explain(dave, group(INF1000))
    expect((late.tree as ExplainedLeaf).answers[1]?.membership).toEqual({
      role: 'member',
      activity: 'expired',
      notAfter: '2020-06-30T22:00:00Z',
    })
    const none = await resolver.explain(emulator.issueToken('erin'), group(ORG_ID))
    expect(none.decision.reason).toBe('not_member')
    expect((none.tree as ExplainedLeaf).answers[1]).toMatchObject({ endpoint: 'me/groups/{groupid}', groupId: ORG_ID, membership: null })
  })

  it('an allowed anyOf rests on the alternative that held; the others are skipped', async () => {
    const requirement = anyOf(group('fc:adhoc:none'), group(ORG_ID, 'admin'), groupOfType('fc:fs:emne'))
    const { decision, tree } = await resolver.explain(emulator.issueToken('bob'), requirement)
    expect(decision).toMatchObject({ allowed: true, requirement: 'a group of type fc:fs:emne' })
    const [none, org, course] = (tree as ExplainedBranch).parts
    expect(tree).toMatchObject({ kind: 'anyOf', outcome: 'allowed', settled: true })
    expect(none).toMatchObject({ outcome: 'skipped', settled: false })
    expect(org).toMatchObject({ outcome: 'skipped', settled: false })
    expect(course).toMatchObject({ outcome: 'allowed', settled: true })
    // Each course of bob's listed, the inactive one with its activity.
    expect((course as ExplainedLeaf).answers.map((answer) => answer.groupId)).toEqual([INF1000])
  })

  it('a denied anyOf rests on every alternative; a denied allOf on the part that failed', async () => {
    const bob = emulator.issueToken('bob')
    const either = await resolver.explain(bob, anyOf(group('fc:adhoc:none'), group(ORG_ID, 'owner')))
    expect(either.decision).toMatchObject({ allowed: false, reason: 'role_too_low' })
    expect(leaves(either.tree).map((leaf) => [leaf.outcome, leaf.reason, leaf.settled])).toEqual([
      ['denied', 'not_member', true],
      ['denied', 'role_too_low', true],
    ])
    const both = await resolver.explain(
      bob,
      allOf(
        group(ORG_ID),
        group(MAT1100),
        where('never asked', () => true),
      ),
    )
    expect(both.decision).toMatchObject({ allowed: false, reason: 'inactive', groupId: MAT1100 })
    expect(leaves(both.tree).map((leaf) => [leaf.outcome, leaf.settled])).toEqual([
      ['allowed', false],
      ['denied', true],
      ['skipped', false],
    ])
  })

  it('a where predicate with its result, and authenticated with the size of the list', async () => {
    const alice = emulator.issueToken('alice')
    const { tree } = await resolver.explain(
      alice,
      allOf(
        authenticated(),
        where('has groups', async (ctx) => (await ctx.groups()).length > 0),
      ),
    )
    expect(tree).toMatchObject({ outcome: 'allowed', settled: true })
    const [token, predicate] = leaves(tree)
    expect(token).toMatchObject({ outcome: 'allowed', settled: true, answers: [{ endpoint: 'me/groups', listed: expect.any(Number) }] })
    expect(predicate).toMatchObject({
      outcome: 'allowed',
      reason: 'predicate',
      settled: true,
      answers: [{ endpoint: 'where', result: true }],
    })
  })

  it('gives the decision check gives, for the same token and requirement', async () => {
    const requirements: Requirement[] = [
      group(ORG_ID, 'admin'),
      group(ADHOC_GROUP_ID, 'owner'),
      anyOf(group(MAT1100), groupOfType('fc:fs:prg')),
      allOf(group(ORG_ID), groupOfType('voot:ad-hoc', 'owner')),
      groupOfType('fc:fs:emne', 'admin'),
    ]
    for (const user of ['alice', 'bob', 'dave', 'erin']) {
      const token = emulator.issueToken(user)
      for (const requirement of requirements) {
        const explained = await resolver.explain(token, requirement)
        expect(explained.decision, `${user}: ${explained.tree.requirement}`).toEqual(await resolver.check(token, requirement))
      }
    }
  })

  it('rejects as check does when the answer is unknown, and on bad arguments', async () => {
    const token = emulator.issueToken('alice')
    emulator.faults.add({ kind: 'status', status: 500 }, { token })
    await expect(resolver.explain(token, group(ORG_ID))).rejects.toBeInstanceOf(UpstreamError)
    await expect(resolver.explain('', group(ORG_ID))).rejects.toThrow(/token/)
    await expect(resolver.explain(token, { kind: 'group' } as unknown as Requirement)).rejects.toThrow(/Not a requirement/)
    await expect(resolver.explain(token, group(ORG_ID, 'emperor'))).rejects.toThrow(/Unknown role/)
  })
})
