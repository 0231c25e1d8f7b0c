import { describe, expect, it } from 'vitest'
import { extractBearerToken, isWellFormedToken, TokenMalformedError, TokenMissingError } from '../../src/index.js'

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
