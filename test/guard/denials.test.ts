/**
 * The guard core's refusals against the emulator: the requirement named in words (the
 * `denials` option), the decision's reason on the `ForbiddenError`, cold and warm alike, and
 * the answer rendered for the request's `Accept`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createGuardCore, type GuardCore } from '../../src/adapter-kit.js'
import { anyOf, createMembershipResolver, ForbiddenError, group, InvalidOptionError, type Requirement } from '../../src/index.js'
import { ADHOC_GROUP_ID, ORG_ID, startEmulator, type Emulator } from '../../testing/index.js'

let emulator: Emulator
const cores: GuardCore[] = []

beforeAll(async () => {
  emulator = await startEmulator()
})
afterAll(async () => {
  for (const core of cores) await core.resolver.close()
  await emulator.close()
})

function coreWith(options: { denials?: 'named' | 'generic' } = {}): GuardCore {
  const core = createGuardCore({ baseUrl: emulator.baseUrl, ...options })
  cores.push(core)
  return core
}

/** The refusal of `user` on `requirement`: the cold one (first), then the warm one (cached answers). */
async function refusals(core: GuardCore, user: string, requirement: Requirement): Promise<ForbiddenError[]> {
  const credentials = { authorization: `Bearer ${emulator.issueToken(user)}` }
  const found: ForbiddenError[] = []
  for (let i = 0; i < 2; i++) {
    const calls = emulator.count()
    const result = core.authorizeNow(credentials, core.prepare(requirement))
    const error: unknown = await (result instanceof Promise
      ? result.then(
          () => undefined,
          (e: unknown) => e,
        )
      : undefined)
    expect(error).toBeInstanceOf(ForbiddenError)
    found.push(error as ForbiddenError)
    if (i === 1) expect(emulator.count()).toBe(calls) // warm: decided from the cache
  }
  return found
}

describe('denials: named (the default)', () => {
  it('names the required role and group, and carries the reason', async () => {
    const core = coreWith()
    for (const error of await refusals(core, 'bob', group(ORG_ID, 'admin'))) {
      expect(error.message).toBe(`This resource requires the role admin or higher in the group ${ORG_ID}`)
      expect(error.reason).toBe('role_too_low')
      const answer = core.answer(error)
      expect(answer?.status).toBe(403)
      expect(answer?.body).toEqual({ error: 'forbidden', error_description: error.message })
      expect(answer?.headers['www-authenticate']).toBeUndefined()
    }
  })

  it('names every alternative of requireAnyGroup, and nothing the user holds', async () => {
    const core = coreWith()
    const requirement = core.groupsRequirement('any', ['fc:adhoc:none', ADHOC_GROUP_ID], 'owner')
    for (const error of await refusals(core, 'bob', requirement)) {
      expect(error.message).toBe(`This resource requires the role owner or higher in one of: fc:adhoc:none, ${ADHOC_GROUP_ID}`)
      expect(error.reason).toBe('role_too_low')
      // bob's other groups (his course, his programme, the org) appear nowhere.
      expect(core.answer(error)?.text).not.toMatch(/emne|prg|example\.org/)
    }
  })

  it.each([
    ['dave', group(ORG_ID), 'not_yet_valid'],
    ['dave', group('fc:fs:fs:emne:example.org:INF1000:1'), 'expired'],
    ['bob', group('fc:fs:fs:emne:example.org:MAT1100:1'), 'inactive'],
    ['erin', anyOf(group(ORG_ID), group(ADHOC_GROUP_ID)), 'not_member'],
  ] as const)('%s: the reason %#', async (user, requirement, reason) => {
    for (const error of await refusals(coreWith(), user, requirement)) expect(error.reason).toBe(reason)
  })

  it('answers problem details to a client that asks for them', async () => {
    const core = coreWith()
    const [error] = await refusals(core, 'bob', group(ORG_ID, 'admin'))
    const answer = core.answer(error, 'application/problem+json')
    expect(answer?.headers['content-type']).toBe('application/problem+json; charset=utf-8')
    expect(JSON.parse(answer?.text ?? '')).toMatchObject({
      status: 403,
      error: 'forbidden',
      detail: `This resource requires the role admin or higher in the group ${ORG_ID}`,
    })
  })
})

describe('denials: generic', () => {
  it('keeps the generic text and still carries the reason on the error', async () => {
    const core = coreWith({ denials: 'generic' })
    for (const error of await refusals(core, 'bob', group(ORG_ID, 'admin'))) {
      expect(error.message).toBe('The group requirement of this resource is not met')
      expect(error.reason).toBe('role_too_low')
      expect(core.answer(error)?.text).not.toContain(ORG_ID)
      expect(core.answer(error, 'application/problem+json')?.text).not.toContain(ORG_ID)
    }
  })

  it.each([['secret'], [''], [true], [null]])('refuses denials: %j, naming the option', (denials) => {
    expect(() => createGuardCore({ baseUrl: emulator.baseUrl, denials: denials as 'named' })).toThrow(InvalidOptionError)
    expect(() => createGuardCore({ baseUrl: emulator.baseUrl, denials: denials as 'named' })).toThrow(/options\.denials/)
  })
})

describe('a resolver given with resolver options beside it', () => {
  it('is refused, naming the option that would not be in force', async () => {
    const resolver = createMembershipResolver({ baseUrl: emulator.baseUrl })
    try {
      expect(() => createGuardCore({ resolver, timeout: 1000 })).toThrow(/options\.timeout: is a resolver option: with `resolver`/)
      expect(() => createGuardCore({ resolver, cache: { ttl: 5 } })).toThrow(/options\.cache: is a resolver option/)
      // Guard options beside it are the guard's own.
      expect(() => createGuardCore({ resolver, realm: 'mine', denials: 'generic' })).not.toThrow()
    } finally {
      await resolver.close()
    }
  })
})
