import { encodeGroupId } from '../../src/group-id.js'
import { describe, expect, it } from 'vitest'
import {
  allOf,
  anyOf,
  assertGroupId,
  authenticated,
  group,
  groupOfType,
  InvalidArgumentError,
  InvalidGroupIdError,
  where,
  type Requirement,
} from '../../src/index.js'
import { isRequirement } from '../../src/adapter-kit.js'
import { describeRequirement } from '../../src/internal.js'

describe('requirement builders', () => {
  it('build frozen, recognisable values', () => {
    const r = group('fc:org:example.org', 'admin')
    expect(r).toEqual({ kind: 'group', groupId: 'fc:org:example.org', role: 'admin' })
    expect(Object.isFrozen(r)).toBe(true)
    expect(isRequirement(r)).toBe(true)
    expect(isRequirement({ kind: 'group', groupId: 'x', role: undefined })).toBe(false)
  })

  it('validate their arguments when declared', () => {
    expect(() => group('')).toThrow(InvalidGroupIdError)
    expect(() => group('x', '')).toThrow(InvalidArgumentError)
    expect(() => groupOfType('')).toThrow(InvalidArgumentError)
    expect(() => anyOf()).toThrow(/at least one/)
    expect(() => allOf({ kind: 'group' } as unknown as Requirement)).toThrow(/not a requirement/)
    expect(() => where('', () => true)).toThrow(/description/)
    expect(() => where('x', 'yes' as unknown as () => boolean)).toThrow(/function/)
  })

  it('refuse a blank or space-padded group id or type when declared, naming the fix (issue #52)', () => {
    expect(() => group('fc:org:example.org ')).toThrow(InvalidGroupIdError)
    expect(() => group('fc:org:example.org ', 'admin')).toThrow(/starts or ends with spaces.*remove the spaces \("fc:org:example.org"\)/)
    expect(() => group(' fc:org:example.org')).toThrow(/remove the spaces/)
    expect(() => group('\u00a0fc:org:example.org')).toThrow(/remove the spaces/)
    expect(() => group('   ')).toThrow(/blank/)
    expect(() => anyOf(group('fc:adhoc:1'), group('fc:adhoc:2 '))).toThrow(/remove the spaces/)
    expect(() => groupOfType('fc:fs:emne ')).toThrow(InvalidArgumentError)
    expect(() => groupOfType(' ')).toThrow(/blank/)
    // Spaces inside an id are the service's business.
    expect(group('fc:adhoc:a b').groupId).toBe('fc:adhoc:a b')
  })

  it('describe themselves', () => {
    expect(describeRequirement(anyOf(group('a', 'admin'), groupOfType('fc:fs:emne'), authenticated()))).toBe(
      'any of [group a (role admin or higher); a group of type fc:fs:emne; a valid personal token]',
    )
  })
})

describe('group ids', () => {
  it.each(['fc:org:example.org', 'fc:gogroup:example.org:u:NO123:4a%2F3:2026-08-01:2027-06-30', 'a/b', 'a?b#c', 'ä', '50%', '...'])(
    'encode %j as exactly one path segment that decodes back',
    (id) => {
      const encoded = encodeGroupId(id)
      expect(encoded).not.toMatch(/[/?#]/)
      expect(decodeURIComponent(encoded)).toBe(id)
    },
  )

  it.each(['', '.', '..', '%2e', '%2E%2e', '.%2E', '%252e%252e', 'a\nb', 'a\rb', 'a\u0000b', 'a\u007fb', '\ud800', 'x'.repeat(1025)])(
    'refuses %j',
    (id) => {
      expect(() => assertGroupId(id)).toThrow(InvalidGroupIdError)
    },
  )

  it('accepts 1024 characters', () => {
    expect(() => assertGroupId('x'.repeat(1024))).not.toThrow()
  })
})
