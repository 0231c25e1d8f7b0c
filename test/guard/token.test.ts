import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { bearerCandidate, tokenProblem } from '../../src/token.js'
import { extractBearerToken, TokenMalformedError, TokenMissingError } from '../../src/index.js'
import { isWellFormedToken } from '../../src/internal.js'

describe('extractBearerToken', () => {
  it.each([
    ['Bearer abc', 'abc'],
    ['bearer abc', 'abc'],
    ['BEARER   a.b-c_d~e+f/g==', 'a.b-c_d~e+f/g=='],
    ['  Bearer xyz  ', 'xyz'],
  ])('reads %j', (header, token) => {
    expect(extractBearerToken(header)).toBe(token)
  })

  it.each([undefined, null, '', '   ', 'Basic abc', 'Bearerabc', 'Digest x', 'Token abc', []])(
    'treats %j as no bearer token (401)',
    (header) => {
      expect(() => extractBearerToken(header as string | undefined)).toThrow(TokenMissingError)
    },
  )

  it.each([
    'Bearer',
    'Bearer ',
    'Bearer a b',
    'Bearer a\tb',
    'Bearer ab=c',
    'Bearer "abc"',
    'Bearer abc\u00e9',
    'Bearer abc\r\nX-Injected: 1',
    `Bearer ${'a'.repeat(4097)}`,
  ])('refuses %j as malformed (400)', (header) => {
    expect(() => extractBearerToken(header)).toThrow(TokenMalformedError)
  })

  it('refuses several header values', () => {
    expect(() => extractBearerToken(['Bearer a', 'Bearer b'])).toThrow(TokenMalformedError)
  })

  it('accepts exactly 4096 characters', () => {
    expect(extractBearerToken(`Bearer ${'a'.repeat(4096)}`)).toHaveLength(4096)
  })

  it('never echoes the header in its message', () => {
    try {
      extractBearerToken('Bearer secret$token')
    } catch (error) {
      expect(String((error as Error).message)).not.toContain('secret')
    }
    expect.assertions(1)
  })
})

describe('isWellFormedToken', () => {
  it('follows RFC 6750 b64token', () => {
    expect(isWellFormedToken('abc')).toBe(true)
    expect(isWellFormedToken('')).toBe(false)
    expect(isWellFormedToken('a b')).toBe(false)
    expect(isWellFormedToken(42)).toBe(false)
  })
})

// The guard hands a header's token to the resolver unchecked (`bearerCandidate`) and the
// resolver checks it on a miss (`tokenProblem`): together they must give what
// `extractBearerToken` gives, for every header.
describe('bearerCandidate, checked on a miss, is extractBearerToken', () => {
  const outcome = (run: () => string): string => {
    try {
      return `token ${run()}`
    } catch (error) {
      return `${(error as Error).name}: ${(error as Error).message}`
    }
  }
  const viaCandidate = (header: string): string | undefined => {
    const candidate = bearerCandidate(header)
    if (candidate === undefined) return undefined
    const problem = tokenProblem(candidate)
    return problem === undefined ? `token ${candidate}` : `${problem.name}: ${problem.message}`
  }
  const chars = fc.constantFrom(...'aZ09-._~+/= \t\u00a0\u00e9\u2028\ufeff"$,'.split(''))
  const header = fc.oneof(
    {
      weight: 4,
      arbitrary: fc
        .tuple(
          fc.constantFrom('Bearer', 'bearer', 'BEARER', 'BeArEr', 'Bearex', 'Basic', 'Bearer\t', ' Bearer', 'Bearer '),
          fc.constantFrom(' ', '  ', '', '\t'),
          fc.array(chars, { maxLength: 12 }).map((c) => c.join('')),
        )
        .map(([scheme, space, rest]) => scheme + space + rest),
    },
    { weight: 1, arbitrary: fc.string({ maxLength: 20 }) },
  )

  it('gives the same token or the same error wherever it takes a header', () => {
    let taken = 0
    fc.assert(
      fc.property(header, (h) => {
        const fast = viaCandidate(h)
        if (fast === undefined) return
        taken++
        expect(fast).toBe(outcome(() => extractBearerToken(h)))
      }),
      { numRuns: 5000 },
    )
    expect(taken).toBeGreaterThan(150)
  })

  it.each(['Bearer  abc', 'Bearer abc ', 'Bearer abc\u00a0', 'Bearer \tabc', 'Basic abc', 'Bearer', 'Bearer ', ['Bearer a']])(
    'leaves %j to the general path',
    (h) => {
      expect(bearerCandidate(h as string)).toBeUndefined()
    },
  )

  it('takes at most 4096 characters after the scheme', () => {
    expect(bearerCandidate(`Bearer ${'a'.repeat(4096)}`)).toHaveLength(4096)
    expect(bearerCandidate(`Bearer ${'a'.repeat(4097)}`)).toBeUndefined()
  })
})
