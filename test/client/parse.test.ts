// Tolerant parsing of group service bodies, Retry-After parsing and localize().
import { describe, expect, it } from 'vitest'
import {
  BodyShapeError,
  parseGroup,
  parseGroups,
  parseGroupTypes,
  parseJson,
  parseMembers,
  parseMembershipValue,
  parseMyGroups,
  parseMyMembership,
} from '../../src/client/parse.js'
import { MAX_RETRY_AFTER_SECONDS, parseRetryAfter } from '../../src/client/retry-after.js'
import { localize } from '../../src/client/translatable.js'

describe('parseJson', () => {
  it('parses JSON and drops unsafe keys at every depth', () => {
    const value = parseJson('{"a":[{"__proto__":{"x":1},"constructor":2,"prototype":3,"b":4}],"__proto__":null}') as {
      a: Array<Record<string, unknown>>
    }
    expect(value).toEqual({ a: [{ b: 4 }] })
    expect(Object.hasOwn(value, '__proto__')).toBe(false)
    expect(Object.getPrototypeOf(value.a[0])).toBe(Object.prototype)
  })

  it('throws BodyShapeError without quoting the text', () => {
    expect(() => parseJson('{"secret-value": ')).toThrow(BodyShapeError)
    try {
      parseJson('{"secret-value": ')
    } catch (err) {
      expect((err as Error).message).not.toContain('secret-value')
    }
  })

  it('answers BodyShapeError for nesting past 64 levels, however deep (never a stack overflow)', () => {
    for (const depth of [65, 200_000]) {
      expect(() => parseJson(`${'['.repeat(depth)}${']'.repeat(depth)}`)).toThrow(BodyShapeError)
      expect(() => parseJson(`${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`)).toThrow(BodyShapeError)
    }
    expect(parseJson(`${'['.repeat(64)}${']'.repeat(64)}`)).toBeInstanceOf(Array)
  })
})

describe('groups', () => {
  it('keeps known fields, normalises names and keeps unknown fields', () => {
    expect(
      parseGroups([
        {
          id: 'fc:gogroup:example.org:u:NO123:4a%2F3:2026-08-01:2027-06-30',
          displayName: 'Class 4A',
          description: { nb: 'Klasse', en: 'Class', de: 7 },
          type: 'fc:gogroup',
          notBefore: '2026-08-01T00:00:00Z',
          notAfter: '2027-06-30T00:00:00Z',
          public: true,
          parent: 'fc:org:example.org',
        },
      ]),
    ).toEqual([
      {
        id: 'fc:gogroup:example.org:u:NO123:4a%2F3:2026-08-01:2027-06-30',
        displayName: 'Class 4A',
        description: { nb: 'Klasse', en: 'Class' },
        type: 'fc:gogroup',
        notBefore: '2026-08-01T00:00:00Z',
        notAfter: '2027-06-30T00:00:00Z',
        public: true,
        parent: 'fc:org:example.org',
      },
    ])
  })

  it('falls back to the id for a missing, empty or unusable displayName', () => {
    for (const displayName of [undefined, '', 42, null, [], {}, { en: 1 }]) {
      expect(parseGroup({ id: 'g', displayName }).displayName).toBe('g')
    }
  })

  it('drops known fields of the wrong type instead of keeping them', () => {
    expect(parseGroup({ id: 'g', type: 1, description: 2 })).toEqual({ id: 'g', displayName: 'g' })
  })

  it("reads a group's validity by the same rule as a membership's: unreadable is inactive, null is no bound", () => {
    const cases: [Record<string, unknown>, boolean | undefined][] = [
      [{ notAfter: 1577836800000 }, false],
      [{ notBefore: 'soon' }, false],
      [{ active: 'false' }, false],
      [{ active: 'true' }, false],
      [{ active: 0 }, false],
      [{ active: null }, false],
      [{ active: true }, true],
      [{ active: false }, false],
      [{ notAfter: null, notBefore: null }, undefined],
      [{}, undefined],
    ]
    for (const [fields, active] of cases) {
      const group = parseGroup({ id: 'g', ...fields })
      const membership = parseMyMembership({ basic: 'member', ...fields })
      expect(group.active, JSON.stringify(fields)).toBe(active)
      expect(membership.active, JSON.stringify(fields)).toBe(active)
      expect(group.notAfter ?? null).toBe(null)
    }
    expect(parseGroup({ id: 'g', notAfter: '2030-01-01T00:00:00Z' }).notAfter).toBe('2030-01-01T00:00:00Z')
  })

  it('needs a non-empty string id and an object', () => {
    for (const bad of [{}, { id: '' }, { id: 1 }, { id: null }, [], 'g', null, 1]) {
      expect(() => parseGroup(bad)).toThrow(BodyShapeError)
    }
    expect(() => parseGroups({ id: 'g' })).toThrow(/array/)
    expect(() => parseGroups([{ id: 'a' }, { id: 'b' }, {}])).toThrow(/element 2/)
  })

  it('returns fresh objects that do not share the input', () => {
    const input = { id: 'g', displayName: { en: 'G' }, membership: { basic: 'member' } }
    const group = parseGroup(input)
    expect(group.displayName).not.toBe(input.displayName)
    expect(group.membership).not.toBe(input.membership)
  })
})

describe('memberships', () => {
  it('me/groups elements always carry a membership', () => {
    expect(parseMyGroups([{ id: 'a' }, { id: 'b', membership: null }, { id: 'c', membership: 'admin' }])).toEqual([
      { id: 'a', displayName: 'a', membership: {} },
      { id: 'b', displayName: 'b', membership: {} },
      { id: 'c', displayName: 'c', membership: { basic: 'admin' } },
    ])
  })

  it('parses a membership value: object, bare role, absent, or wrong', () => {
    expect(parseMembershipValue('member')).toEqual({ basic: 'member' })
    expect(parseMembershipValue('')).toEqual({})
    expect(parseMembershipValue(undefined)).toBeUndefined()
    expect(parseMembershipValue(null)).toBeUndefined()
    for (const bad of [1, true, ['member']]) expect(() => parseMembershipValue(bad)).toThrow(BodyShapeError)
  })

  it('keeps the real service attributes and drops a non-string basic', () => {
    expect(
      parseMembershipValue({
        basic: 'admin',
        displayName: { nb: 'Ansatt', en: 'Employee' },
        affiliation: ['employee', 'member'],
        primaryAffiliation: 'employee',
        title: ['Professor'],
      }),
    ).toEqual({
      basic: 'admin',
      displayName: { nb: 'Ansatt', en: 'Employee' },
      affiliation: ['employee', 'member'],
      primaryAffiliation: 'employee',
      title: ['Professor'],
    })
    expect(parseMembershipValue({ basic: 3, fsroles: ['STUDENT'] })).toEqual({ fsroles: ['STUDENT'] })
  })

  it('fails closed on an active that is not a boolean', () => {
    expect(parseMembershipValue({ active: true })).toEqual({ active: true })
    expect(parseMembershipValue({ active: false })).toEqual({ active: false })
    for (const active of ['true', 1, null, {}, []]) {
      expect(parseMembershipValue({ basic: 'member', active })).toEqual({ basic: 'member', active: false })
    }
  })

  it('fails closed on notBefore/notAfter that are not dates', () => {
    expect(parseMembershipValue({ notAfter: '2027-06-30T00:00:00Z', notBefore: '2026-08-01' })).toEqual({
      notAfter: '2027-06-30T00:00:00Z',
      notBefore: '2026-08-01',
    })
    expect(parseMembershipValue({ basic: 'member', active: true, notAfter: 1782777600 })).toEqual({ basic: 'member', active: false })
    expect(parseMembershipValue({ basic: 'member', notBefore: 'someday' })).toEqual({ basic: 'member', active: false })
  })

  it('me/groups/{id}: bare membership, OpenConext group shape, group without membership', () => {
    expect(parseMyMembership({ basic: 'member' })).toEqual({ basic: 'member' })
    expect(parseMyMembership({})).toEqual({})
    expect(parseMyMembership({ id: 'urn:g', displayName: 'G', membership: { basic: 'admin', active: true } })).toEqual({
      basic: 'admin',
      active: true,
    })
    expect(parseMyMembership({ id: 'urn:g', membership: 'manager' })).toEqual({ basic: 'manager' })
    expect(parseMyMembership({ id: 'urn:g', displayName: 'G' })).toEqual({})
    expect(parseMyMembership({ membership: { basic: 'owner' } })).toEqual({ basic: 'owner' })
    for (const bad of [null, [], 'member', 1]) expect(() => parseMyMembership(bad)).toThrow(BodyShapeError)
    expect(() => parseMyMembership({ id: 'urn:g', membership: 5 })).toThrow(BodyShapeError)
  })
})

describe('members and group types', () => {
  it('member entries get a name and a membership', () => {
    expect(
      parseMembers([
        { name: 'Alice', membership: { basic: 'admin' }, extra: 1 },
        { name: null, membership: 'member' },
      ]),
    ).toEqual([
      { name: 'Alice', membership: { basic: 'admin' }, extra: 1 },
      { name: '', membership: { basic: 'member' } },
    ])
    expect(() => parseMembers(['Alice'])).toThrow(/element 0/)
    expect(() => parseMembers({})).toThrow(BodyShapeError)
  })

  it('group types need an id; displayName falls back to it', () => {
    expect(parseGroupTypes([{ id: 'fc:org', displayName: { en: 'Organisation', nb: 'Organisasjon' } }, { id: 'voot:ad-hoc' }])).toEqual([
      { id: 'fc:org', displayName: { en: 'Organisation', nb: 'Organisasjon' } },
      { id: 'voot:ad-hoc', displayName: 'voot:ad-hoc' },
    ])
    expect(() => parseGroupTypes([{ displayName: 'x' }])).toThrow(BodyShapeError)
  })
})

describe('parseRetryAfter', () => {
  const now = Date.parse('2026-01-01T00:00:00Z')

  it('reads delta-seconds, clamped to [0, 3600]', () => {
    expect(parseRetryAfter('0', now)).toBe(0)
    expect(parseRetryAfter(' 120 ', now)).toBe(120)
    expect(parseRetryAfter('3600', now)).toBe(3600)
    expect(parseRetryAfter('3601', now)).toBe(MAX_RETRY_AFTER_SECONDS)
    expect(parseRetryAfter('99999999999999999999999', now)).toBe(3600)
  })

  it('reads the three HTTP-date forms relative to now', () => {
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:01:30 GMT', now)).toBe(90)
    expect(parseRetryAfter('Thursday, 01-Jan-26 00:00:10 GMT', now)).toBe(10)
    expect(parseRetryAfter('Thu Jan  1 00:00:05 2026', now)).toBe(5)
    expect(parseRetryAfter('Wed, 31 Dec 2025 23:00:00 GMT', now)).toBe(0)
    expect(parseRetryAfter('Fri, 02 Jan 2026 00:00:00 GMT', now)).toBe(3600)
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:00:00 GMT', now + 400)).toBe(0)
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:00:01 GMT', now + 400)).toBe(1)
  })

  it('returns undefined for absent, repeated or invalid values', () => {
    for (const value of [
      undefined,
      '',
      ' ',
      '-5',
      '1.5',
      '1e3',
      'soon',
      '2026-01-01T00:01:00Z',
      'Thu, 01 Jan 2026',
      'Thu, 32 Jan 2026 00:00:00 GMT',
    ]) {
      expect(parseRetryAfter(value, now)).toBeUndefined()
    }
    expect(parseRetryAfter(['10', '20'], now)).toBeUndefined()
  })
})

describe('localize', () => {
  const text = { nb: 'Ansatt', nn: 'Tilsett', en: 'Employee' }

  it('returns a plain string as it is', () => {
    expect(localize('Example', ['nb'])).toBe('Example')
  })

  it('picks the first available preferred language, by tag or primary subtag, case-insensitively', () => {
    expect(localize(text, ['de', 'nn', 'nb'])).toBe('Tilsett')
    expect(localize(text, ['nb-NO'])).toBe('Ansatt')
    expect(localize(text, ['NB'])).toBe('Ansatt')
    expect(localize({ 'nb-NO': 'Ansatt' }, ['nb-no'])).toBe('Ansatt')
  })

  it('falls back to English, then to any language, then to an empty string', () => {
    expect(localize(text, ['de'])).toBe('Employee')
    expect(localize(text)).toBe('Employee')
    expect(localize({ se: 'Bargi' }, ['de'])).toBe('Bargi')
    expect(localize({})).toBe('')
    expect(localize({ en: 1 } as unknown as Record<string, string>)).toBe('')
  })

  it('never reads inherited properties', () => {
    expect(localize({}, ['constructor', 'toString', '__proto__'])).toBe('')
  })
})
