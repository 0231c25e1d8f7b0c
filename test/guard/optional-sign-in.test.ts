/**
 * The one rule of optional sign-in: which credentials are none at all (the request goes on
 * without a context) and which are credentials (answered as `authenticate()` answers them).
 * The adapters' behaviour is in the contract table (test/adapters/contract.test.ts).
 */
import { describe, expect, it } from 'vitest'
import { isAnonymous } from '../../src/guard/optional-sign-in.js'
import { InvalidOptionError } from '../../src/index.js'
import { readAuthenticateOptions } from '../../src/guard/optional-sign-in.js'

describe('isAnonymous', () => {
  it('is true only for an absent Authorization header', () => {
    expect(isAnonymous({ authorization: undefined })).toBe(true)
    for (const authorization of ['', ' ', 'Basic x', 'Bearer', 'Bearer abc', ['Bearer a', 'Bearer b']]) {
      expect(isAnonymous({ authorization }), JSON.stringify(authorization)).toBe(false)
    }
  })

  it('is true only when getToken found nothing: undefined or null, alone or as the token', () => {
    for (const token of [undefined, null, { token: undefined }, { token: null }, { token: undefined, expiresAt: 1 }]) {
      expect(isAnonymous({ token }), JSON.stringify(token)).toBe(true)
    }
    for (const token of ['', 'abc', { token: '' }, { token: 'abc', expiresAt: 1 }, 0, false]) {
      expect(isAnonymous({ token }), JSON.stringify(token)).toBe(false)
    }
  })
})

describe('readAuthenticateOptions', () => {
  it('reads optional, false by default', () => {
    expect(readAuthenticateOptions(undefined, 'authenticate()')).toBe(false)
    expect(readAuthenticateOptions({}, 'authenticate()')).toBe(false)
    expect(readAuthenticateOptions({ optional: false }, 'authenticate()')).toBe(false)
    expect(readAuthenticateOptions({ optional: true }, 'authenticate()')).toBe(true)
  })

  it('refuses anything else with an InvalidOptionError naming the option', () => {
    expect(() => readAuthenticateOptions(null, 'authenticate()')).toThrow(InvalidOptionError)
    expect(() => readAuthenticateOptions(true, 'Authenticated()')).toThrow(/Authenticated\(\) takes an options object/)
    expect(() => readAuthenticateOptions([], 'authenticate()')).toThrow(InvalidOptionError)
    expect(() => readAuthenticateOptions({ optional: 1 }, 'authenticate()')).toThrow(/options\.optional: must be a boolean/)
    expect(() => readAuthenticateOptions({ required: false }, 'authenticate()')).toThrow(/options\.required: is not an option/)
  })
})
