/**
 * Requirements computed per request (issue 52): found again by what they require, so that
 * a computed requirement is the very object of an equal static one (and so reads its
 * remembered verdicts), bounded, and refused by the contract when request data made the id
 * invalid, while the application's own errors stay errors (a 500).
 */
import { describe, expect, it } from 'vitest'
import { createGuardCore, createGuardFlow, type FrameworkIO } from '../../src/adapter-kit.js'
import { allOf, anyOf, group, groupOfType, where } from '../../src/index.js'
import { requirementKey } from '../../src/decision/requirement-key.js'
import { MAX_COMPUTED_REQUIREMENTS } from '../../src/guard/computed-requirement.js'
import { ForbiddenError } from '../../src/errors.js'

const BASE = 'https://groups.invalid/groups'
const COURSE = (id: string) => `fc:fs:fs:emne:example.org:${id}:1`

describe('requirementKey', () => {
  it('is equal for equal requirements and different for different ones', () => {
    expect(requirementKey(group('fc:a', 'admin'))).toBe(requirementKey(group('fc:a', 'admin')))
    expect(requirementKey(anyOf(group('fc:a'), groupOfType('fc:fs:emne')))).toBe(
      requirementKey(anyOf(group('fc:a'), groupOfType('fc:fs:emne'))),
    )
    const distinct = [
      group('fc:a'),
      group('fc:a', 'admin'),
      group('fc:a', 'admin', { service: 'feide' }),
      group('fc:b'),
      groupOfType('fc:a'),
      anyOf(group('fc:a')),
      allOf(group('fc:a')),
      anyOf(group('fc:a'), group('fc:b')),
      anyOf(anyOf(group('fc:a')), group('fc:b')),
      anyOf(anyOf(group('fc:a'), group('fc:b'))),
    ].map(requirementKey)
    expect(new Set(distinct).size).toBe(distinct.length)
    expect(
      requirementKey(
        anyOf(
          group('fc:a'),
          where('x', () => true),
        ),
      ),
    ).toBeUndefined()
  })
})

describe('a computed requirement', () => {
  it('is the static requirement of the same group and role, whichever came first', () => {
    const core = createGuardCore({ baseUrl: BASE })
    const declared = core.groupRequirement(COURSE('INF1000'), 'admin')
    const computed = core.computedGroup((id: string) => COURSE(id), 'admin')
    expect(computed('INF1000')).toBe(declared)
    expect(computed('MAT1100')).toBe(computed('MAT1100'))
    expect(computed('MAT1100')).not.toBe(computed('INF1000'))
    const built = core.computedRequirement((id: string) => anyOf(group(COURSE(id)), group('fc:org:example.org', 'admin')))
    expect(built('INF1000')).toBe(built('INF1000'))
    const declaredAnyOf = core.prepare(anyOf(group(COURSE('X')), group('fc:org:example.org', 'admin')))
    expect(built('X')).toBe(declaredAnyOf)
  })

  it('keeps at most MAX_COMPUTED_REQUIREMENTS, the oldest going first', () => {
    const core = createGuardCore({ baseUrl: BASE })
    const computed = core.computedGroup((id: string) => COURSE(id))
    const first = computed('C0')
    for (let i = 1; i <= MAX_COMPUTED_REQUIREMENTS; i++) computed(`C${i}`)
    expect(computed(`C${MAX_COMPUTED_REQUIREMENTS}`)).toBe(computed(`C${MAX_COMPUTED_REQUIREMENTS}`))
    expect(computed('C0')).not.toBe(first)
  })

  it('checks its role when declared, naming it', () => {
    const core = createGuardCore({ baseUrl: BASE })
    expect(() => core.computedGroup(() => 'fc:a', 'teacher')).toThrow(/Unknown role "teacher"/)
  })

  it.each([
    ['empty', ''],
    ['a control character', 'fc:a\u0000'],
    ['too long', 'x'.repeat(2000)],
    ['not a string', undefined as unknown as string],
    ['a dot segment', '..'],
  ])('refuses an id that is %s with the contract 403, never repeating it', (_label, id) => {
    const core = createGuardCore({ baseUrl: BASE })
    const computed = core.computedGroup(() => id, 'admin')
    expect(() => computed(undefined)).toThrow(ForbiddenError)
    const viaRequire = core.computedRequirement(() => group(id))
    expect(() => viaRequire(undefined)).toThrow(ForbiddenError)
    try {
      computed(undefined)
    } catch (error) {
      expect(core.answer(error)).toMatchObject({ status: 403, body: { error: 'forbidden' } })
    }
  })

  it("leaves the application's own errors (and a value that is no requirement) to the framework: a 500", () => {
    const core = createGuardCore({ baseUrl: BASE })
    const broken = core.computedGroup((): string => {
      throw new TypeError('params is undefined')
    })
    expect(() => broken(undefined)).toThrow(TypeError)
    const notRequirement = core.computedRequirement(() => ({ kind: 'group', groupId: 'fc:a' }) as never)
    expect(() => notRequirement(undefined)).toThrow(/must return a requirement built by voot-guard/)
    let caught: unknown
    try {
      broken(undefined)
    } catch (error) {
      caught = error
    }
    expect(core.answer(caught)).toBeUndefined()
  })

  it('is worked out before the credentials are read: an invalid id costs no token read', async () => {
    let reads = 0
    const io: FrameworkIO<{ id: string }, undefined, undefined, number> = {
      authorization: () => {
        reads++
        return undefined
      },
      allow: () => 200,
      respond: ({ answer }) => answer.status,
      fail: () => 500,
    }
    const flow = createGuardFlow({ baseUrl: BASE }, io)
    const step = flow.guard(
      flow.core.computedGroup((input: { id: string }) => input.id),
      false,
    )
    expect(await step({ id: '' }, undefined, undefined)).toBe(403)
    expect(reads).toBe(0)
    expect(await step({ id: 'fc:a' }, undefined, undefined)).toBe(401)
    expect(reads).toBe(1)
  })
})
