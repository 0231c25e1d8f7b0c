/**
 * The answer store's per-token index: dropping one token costs that token's entries,
 * however many the store holds; an invalidation naming a token id the store does not know
 * costs one map lookup; the index follows evictions, so it stays bounded by the store.
 *
 * Work is counted, not timed (`lru-work.ts`).
 */
import { afterEach, describe, expect, it, vi } from 'vitest'
import { createAnswerStore, type AnswerStore } from '../../../src/resolver/store/answer-store.js'
import { work } from './lru-work.js'

const answer = (id: string) => ({ id, displayName: id, membership: { basic: 'member' } })

function filled(tokens: number): { store: AnswerStore; digests: string[] } {
  const store = createAnswerStore({ max: 100_000, maxBytes: 256 << 20, ttl: 60_000, negativeTtl: 10_000, staleIfError: 0 })
  const digests: string[] = []
  for (let i = 0; i < tokens; i++) {
    const digest = store.digest(`token-${i}`)
    digests.push(digest)
    const common = { digest, at: 1_000, life: 60_000, deadline: Infinity, keep: true }
    store.put({ ...common, kind: 'groups', groupId: undefined, answer: [answer('fc:org:example.org')] })
    store.put({ ...common, kind: 'membership', groupId: `fc:adhoc:${i}`, answer: { basic: 'member' } })
    store.put({ ...common, kind: 'membership', groupId: 'fc:adhoc:shared', answer: null })
  }
  return { store, digests }
}

afterEach(() => {
  vi.restoreAllMocks()
})

describe('dropping one token', () => {
  it("visits only that token's entries, whatever the store holds", () => {
    const { store, digests } = filled(20_000)
    expect(store.size).toBe(60_000)
    const target = digests[12_345]!
    const cost = work(() => {
      store.dropToken(target, false)
    })
    expect(cost.visited).toBe(0)
    // groups, showAll, the marker (fixed names), and its two memberships.
    expect(cost.deleted).toBeLessThanOrEqual(5)
    expect(store.size).toBe(60_000 - 3)
    expect(store.fresh(target, 'groups', undefined, 2_000)).toBeUndefined()
    expect(store.fresh(target, 'membership', 'fc:adhoc:12345', 2_000)).toBeUndefined()
    expect(store.fresh(target, 'membership', 'fc:adhoc:shared', 2_000)).toBeUndefined()
    // The others keep theirs.
    expect(store.fresh(digests[12_344]!, 'membership', 'fc:adhoc:shared', 2_000)?.value).toBeNull()
    expect(store.fresh(digests[12_346]!, 'membership', 'fc:adhoc:12346', 2_000)).toBeDefined()
  })

  it('keeps the 401 marker when asked to, and drops it otherwise', () => {
    const { store, digests } = filled(3)
    const target = digests[1]!
    store.markInvalid(target, 2_000)
    store.dropToken(target, true)
    expect(store.isMarkedInvalid(target, 3_000)).toBe(true)
    store.dropToken(target, false)
    expect(store.isMarkedInvalid(target, 3_000)).toBe(false)
    expect(store.size).toBe(6)
  })

  it('a token id nobody cached is one map lookup, with no visit or delete', () => {
    const { store } = filled(20_000)
    const cost = work(() => {
      expect(store.digestOf('x'.repeat(32))).toBeUndefined()
    })
    expect(cost).toEqual({ visited: 0, deleted: 0 })
  })
})

describe('the token id of a shared tier', () => {
  const settings = { max: 4, maxBytes: 1 << 20, ttl: 60_000, negativeTtl: 10_000, staleIfError: 0 }
  const common = { at: 1_000, life: 60_000, deadline: Infinity, keep: true, groupId: undefined, answer: [] }

  it('is known while a lookup holds the token and while the token has entries, and forgotten after', () => {
    const store = createAnswerStore(settings)
    const digest = store.digest('token')
    const release = store.hold(digest, 'T'.repeat(32))
    expect(store.digestOf('T'.repeat(32))).toBe(digest)
    store.put({ ...common, digest, kind: 'groups' })
    release()
    // The answer keeps it known.
    expect(store.digestOf('T'.repeat(32))).toBe(digest)
    store.dropToken(digest, false)
    expect(store.digestOf('T'.repeat(32))).toBeUndefined()
  })

  it('is forgotten when the LRU evicts the last entry of the token: the index is bounded by the store', () => {
    const store = createAnswerStore(settings)
    const ids: string[] = []
    for (let i = 0; i < 50; i++) {
      const digest = store.digest(`token-${i}`)
      const id = String(i).padStart(32, '0')
      ids.push(id)
      const release = store.hold(digest, id)
      store.put({ ...common, digest, kind: 'groups' })
      store.put({ ...common, digest, kind: 'membership', groupId: 'fc:adhoc:x', answer: null })
      release()
    }
    expect(store.size).toBe(4)
    expect(ids.filter((id) => store.digestOf(id) !== undefined)).toEqual(ids.slice(48))
  })

  it('a lookup that ends without storing anything leaves nothing behind', () => {
    const store = createAnswerStore(settings)
    const digest = store.digest('token')
    const release = store.hold(digest, 'T'.repeat(32))
    release()
    release()
    expect(store.digestOf('T'.repeat(32))).toBeUndefined()
  })
})
