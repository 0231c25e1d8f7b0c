import { describe, expect, it } from 'vitest'
import { createAnswerPool } from '../../../src/resolver/store/answer-pool.js'
import { createMembershipResolver, group, type GroupsClient, type GroupWithMembership } from '../../../src/index.js'
import { parseJson, parseMyGroups } from '../../../src/client/parse.js'

const CLASS_GROUP = {
  id: 'fc:gogroup:example.org:u:NO123:4a%2F3:2026-08-01:2027-06-30',
  displayName: 'Matematikk 4a/3',
  type: 'fc:gogroup',
  membership: { basic: 'member', displayName: { nb: 'Elev', en: 'Student' }, affiliation: 'student' },
}

describe('createAnswerPool', () => {
  it('gives equal parts one frozen object, deeply frozen', () => {
    const pool = createAnswerPool()
    const first = pool.share(structuredClone(CLASS_GROUP))
    const second = pool.share(structuredClone(CLASS_GROUP))
    expect(second).toBe(first)
    expect(Object.isFrozen(first)).toBe(true)
    expect(Object.isFrozen(first.membership)).toBe(true)
    expect(Object.isFrozen(first.membership.displayName)).toBe(true)
  })

  it('never merges parts that differ anywhere, however deep', () => {
    const pool = createAnswerPool()
    const student = pool.share(structuredClone(CLASS_GROUP))
    const teacher = pool.share({ ...structuredClone(CLASS_GROUP), membership: { ...CLASS_GROUP.membership, basic: 'admin' } })
    const titled = pool.share({
      ...structuredClone(CLASS_GROUP),
      membership: { ...CLASS_GROUP.membership, displayName: { nb: 'Elev', en: 'Pupil' } },
    })
    expect(teacher).not.toBe(student)
    expect(titled).not.toBe(student)
    expect(teacher.membership.basic).toBe('admin')
    expect(student.membership.basic).toBe('member')
    expect(titled.membership.displayName.en).toBe('Pupil')
  })

  it('does not pool what JSON cannot tell apart (a custom client’s Date, undefined, -0, a hole)', () => {
    const pool = createAnswerPool()
    const when = '2026-11-21T12:00:00.000Z'
    const asText = pool.share({ since: when })
    const asDate = pool.share({ since: new Date(when) })
    expect(asDate).not.toBe(asText)
    expect(asDate.since).toBeInstanceOf(Date)
    expect(pool.share({ a: 1, b: undefined })).not.toBe(pool.share({ a: 1 }))
    expect(pool.share({ n: -0 })).not.toBe(pool.share({ n: 0 }))
    const bare = Object.assign(Object.create(null) as Record<string, unknown>, { basic: 'member' })
    expect(Object.getPrototypeOf(pool.share(bare))).toBeNull()
    // eslint-disable-next-line no-sparse-arrays
    expect(pool.share({ list: [1, , 2] })).not.toBe(pool.share({ list: [1, null, 2] }))
    // Refused parts are still frozen: the cache hands them to every caller.
    expect(Object.isFrozen(asDate)).toBe(true)
  })

  it('leaves long parts alone, and stays bounded', () => {
    const pool = createAnswerPool()
    const long = { description: 'x'.repeat(2000) }
    expect(pool.share(structuredClone(long))).not.toBe(pool.share(structuredClone(long)))
    // More distinct parts than the pool holds: the first ones are gone, the last ones kept.
    const first = pool.share({ n: 0 })
    for (let n = 1; n <= 5000; n++) pool.share({ n })
    expect(pool.share({ n: 0 })).not.toBe(first)
    expect(pool.share({ n: 5000 }).n).toBe(5000)
    const last = pool.share({ n: 4999 })
    expect(pool.share({ n: 4999 })).toBe(last)
  })

  it('shares from the inside out: a membership of its own still holds the shared role name', () => {
    const pool = createAnswerPool()
    const plain = pool.share(structuredClone(CLASS_GROUP))
    const titled = pool.share({
      ...structuredClone(CLASS_GROUP),
      membership: { ...structuredClone(CLASS_GROUP.membership), title: ['Lektor'] },
    })
    expect(titled).not.toBe(plain)
    expect(titled.membership).not.toBe(plain.membership)
    expect(titled.membership.displayName).toBe(plain.membership.displayName)
    expect(titled.membership.title).toEqual(['Lektor'])
    expect(Object.isFrozen(titled.membership.title)).toBe(true)
  })

  it('leaves a frozen part’s insides as they are (a custom client may freeze its own answers)', () => {
    const pool = createAnswerPool()
    const inner = { nb: 'Elev' }
    const frozen = Object.freeze({ displayName: inner })
    expect(() => pool.share(frozen)).not.toThrow()
    expect(pool.share(frozen).displayName).toBe(inner)
  })

  it('shareAll returns a frozen list of shared elements', () => {
    const pool = createAnswerPool()
    const a = pool.shareAll([structuredClone(CLASS_GROUP)])
    const b = pool.shareAll([structuredClone(CLASS_GROUP)])
    expect(Object.isFrozen(a)).toBe(true)
    expect(b[0]).toBe(a[0])
  })
})

describe('the resolver shares identical answers between tokens', () => {
  const body = (basic: string): string => JSON.stringify([{ ...CLASS_GROUP, membership: { ...CLASS_GROUP.membership, basic } }])
  function resolverWith(bodies: Record<string, string>): ReturnType<typeof createMembershipResolver> {
    const client = {
      myGroups: (token: string) => Promise.resolve(parseMyGroups(parseJson(bodies[token] ?? '[]'))),
      // The list is the whole truth here: a group it lacks, or a lower role, is the same answer.
      myMembership: (token: string, groupId: string) =>
        Promise.resolve(parseMyGroups(parseJson(bodies[token] ?? '[]')).find((g) => g.id === groupId)?.membership ?? null),
    } as unknown as GroupsClient
    return createMembershipResolver({ client })
  }

  it('two students of one class hold the same frozen group; their teacher does not', async () => {
    const resolver = resolverWith({ student1: body('member'), student2: body('member'), teacher: body('admin') })
    const [one] = await resolver.groups('student1')
    const [two] = await resolver.groups('student2')
    const [teacher] = await resolver.groups('teacher')
    expect(two).toBe(one)
    expect(teacher).not.toBe(one)
    expect((teacher as GroupWithMembership).membership.basic).toBe('admin')
    expect(Object.isFrozen(one)).toBe(true)
    // Decisions still follow each token's own answer.
    expect((await resolver.check('student1', group(CLASS_GROUP.id, 'admin'))).allowed).toBe(false)
    expect((await resolver.check('teacher', group(CLASS_GROUP.id, 'admin'))).allowed).toBe(true)
  })

  it('invalidate() also forgets the shared parts', async () => {
    const resolver = resolverWith({ before: body('member'), after: body('member') })
    const [before] = await resolver.groups('before')
    resolver.invalidate()
    const [after] = await resolver.groups('after')
    expect(after).toEqual(before)
    expect(after).not.toBe(before)
  })
})
