// The pool of recent digests (digest-pool.ts): the same string again for the same tag
// without making it anew, always the string of the tag it is given (a shared slot
// included), and bounded. Strings made are counted: JavaScript cannot tell two equal
// strings apart.
import { randomBytes } from 'node:crypto'
import { beforeEach, describe, expect, it, vi } from 'vitest'

const made = vi.hoisted(() => ({ count: 0 }))
vi.mock('../../../src/resolver/store/siphash.js', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../../../src/resolver/store/siphash.js')>()
  return {
    ...actual,
    tagString: (tag: Int32Array) => {
      made.count++
      return actual.tagString(tag)
    },
  }
})

const { createDigestPool, DIGEST_POOL_SIZE } = await import('../../../src/resolver/store/digest-pool.js')
const { tagString } = await import('../../../src/resolver/store/siphash.js')

const tagOf = (...words: number[]): Int32Array => Int32Array.from(words)
const randomTag = (): Int32Array => new Int32Array(randomBytes(16).buffer)

beforeEach(() => {
  made.count = 0
})

describe('createDigestPool', () => {
  it('gives the tag as its 16 latin1 characters, made once for the same tag', () => {
    const pooled = createDigestPool()
    const tag = randomTag()
    const first = pooled(tag)
    expect(Buffer.from(first, 'latin1').equals(Buffer.from(tag.buffer))).toBe(true)
    expect(made.count).toBe(1)
    for (let i = 0; i < 5; i++) expect(pooled(Int32Array.from(tag))).toBe(first)
    expect(made.count).toBe(1)
  })

  it('compares all four words: tags that share a slot, or differ in one word only, get their own strings', () => {
    const pooled = createDigestPool()
    const base = [0x12345678, 0x0badf00d, -1, 0x7fffffff] as const
    const variants = [
      [...base],
      [base[0] | 0x40000000, base[1], base[2], base[3]], // the same 30 slot bits, another first word
      [base[0], base[1] ^ 1, base[2], base[3]],
      [base[0], base[1], base[2] ^ 0x100, base[3]],
      [base[0], base[1], base[2], base[3] ^ 0x80000000],
    ]
    for (let round = 0; round < 2; round++)
      for (const words of variants) expect(pooled(tagOf(...words)), words.join(',')).toBe(tagString(tagOf(...words)))
  })

  it('keeps at most its size, the oldest going first', () => {
    const pooled = createDigestPool(3)
    const tags = [1, 2, 3, 4].map((n) => tagOf(n, n, n, n))
    const strings = tags.map((tag) => pooled(tag))
    expect(made.count).toBe(4)
    // The fourth pushed the first out: the last three are kept, the first is made again.
    expect([pooled(tags[3]!), pooled(tags[2]!), pooled(tags[1]!)]).toEqual(strings.slice(1).reverse())
    expect(made.count).toBe(4)
    expect(pooled(tags[0]!)).toBe(strings[0])
    expect(made.count).toBe(5)
    expect(DIGEST_POOL_SIZE).toBeGreaterThan(0)
    expect(() => createDigestPool(0)).toThrow(RangeError)
  })
})
