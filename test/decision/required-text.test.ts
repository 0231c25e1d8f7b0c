/**
 * The words a refused request is told: the requirement, named from the requirement alone.
 */
import { describe, expect, it } from 'vitest'
import { requiredText } from '../../src/decision/required-text.js'
import { allOf, anyOf, authenticated, group, groupOfType, where } from '../../src/index.js'

describe('requiredText', () => {
  it.each([
    [group('fc:org:example.org', 'admin'), 'the role admin or higher in the group fc:org:example.org'],
    [group('fc:adhoc:1'), 'membership in the group fc:adhoc:1'],
    [groupOfType('fc:fs:emne'), 'membership in a group of type fc:fs:emne'],
    [groupOfType('fc:fs:emne', 'admin'), 'the role admin or higher in a group of type fc:fs:emne'],
    [where('teaches any course', () => true), 'the condition "teaches any course"'],
    [authenticated(), 'a valid personal token with the groups scope'],
    [anyOf(group('fc:adhoc:1'), group('fc:adhoc:2')), 'membership in one of: fc:adhoc:1, fc:adhoc:2'],
    [anyOf(group('fc:adhoc:1', 'admin'), group('fc:adhoc:2', 'admin')), 'the role admin or higher in one of: fc:adhoc:1, fc:adhoc:2'],
    [allOf(group('fc:adhoc:1'), group('fc:adhoc:2')), 'membership in each of: fc:adhoc:1, fc:adhoc:2'],
    [
      anyOf(group('fc:adhoc:1', 'admin'), group('fc:adhoc:2')),
      'one of: the role admin or higher in the group fc:adhoc:1; membership in the group fc:adhoc:2',
    ],
    [
      anyOf(
        allOf(group('fc:adhoc:1'), groupOfType('fc:fs:emne')),
        where('is staff', () => true),
      ),
      'one of: (each of: membership in the group fc:adhoc:1; membership in a group of type fc:fs:emne); the condition "is staff"',
    ],
  ])('%#: names the requirement', (requirement, phrase) => {
    expect(requiredText(requirement)).toBe(`This resource requires ${phrase}`)
  })

  it('is made once per requirement', () => {
    const requirement = group('fc:adhoc:1')
    expect(requiredText(requirement)).toBe(requiredText(requirement))
  })
})
