import { describe, expect, it } from 'vitest'
import { authorizationOf } from '../../src/adapter-kit.js'
import { extractBearerToken, TokenMalformedError } from '../../src/index.js'

describe('authorizationOf', () => {
  it('reads the one Authorization header, whatever the case of its name', () => {
    expect(authorizationOf({ rawHeaders: ['Host', 'x', 'AUTHORIZATION', 'Bearer abc', 'Accept', '*/*'] })).toBe('Bearer abc')
    expect(authorizationOf({ rawHeaders: ['authorization', 'Bearer abc'] })).toBe('Bearer abc')
  })

  it('returns every value when there are several, which the token reader refuses', () => {
    const values = authorizationOf({ rawHeaders: ['Authorization', 'Bearer first', 'x-other', 'y', 'authorization', 'Bearer second'] })
    expect(values).toEqual(['Bearer first', 'Bearer second'])
    expect(() => extractBearerToken(values)).toThrow(TokenMalformedError)
  })

  it('is undefined without the header; names that only look alike do not count', () => {
    expect(authorizationOf({ rawHeaders: ['Host', 'x'] })).toBeUndefined()
    expect(authorizationOf({ rawHeaders: ['Proxy-Authorization', 'Bearer abc', 'authorizations', 'Bearer abc'] })).toBeUndefined()
    expect(authorizationOf({ rawHeaders: [] })).toBeUndefined()
  })

  it('falls back to headers when the request has no raw header list', () => {
    expect(authorizationOf({ headers: { authorization: 'Bearer abc' } })).toBe('Bearer abc')
    expect(authorizationOf({})).toBeUndefined()
  })
})
