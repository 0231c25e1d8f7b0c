/**
 * The resolver's check of a token read in place (`check-at.ts`), as the guard uses it for
 * a header of the usual shape: it decides what `checkNow` decides for the token sliced out,
 * shares its cache entries (one digest, the same keys), refuses a malformed token on a miss
 * with `checkNow`'s error, and exists only for resolvers made by `createMembershipResolver`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createMembershipResolver, group, TokenMalformedError, type Decision, type MembershipResolver } from '../../src/index.js'
import { createGuardCore } from '../../src/adapter-kit.js'
import { checkAtOf } from '../../src/resolver/check-at.js'
import { ORG_ID, startEmulator, type Emulator } from '../../testing/index.js'

let emulator: Emulator

beforeAll(async () => {
  emulator = await startEmulator()
})
afterAll(async () => {
  await emulator.close()
})

const settle = async (decided: Decision | Promise<Decision>): Promise<Decision> => decided
const settleContext = async <T>(value: T | Promise<T>): Promise<T> => value

describe('checkAt', () => {
  it('is there for a resolver of ours only', () => {
    const resolver = createMembershipResolver({ baseUrl: emulator.baseUrl })
    expect(checkAtOf(resolver)).toBeTypeOf('function')
    const own: MembershipResolver = { ...resolver }
    expect(checkAtOf(own)).toBeUndefined()
  })

  it('decides as checkNow does for the token sliced out, warm and cold, on the same cache entries', async () => {
    const resolver = createMembershipResolver({ baseUrl: emulator.baseUrl })
    const checkAt = checkAtOf(resolver)!
    const token = emulator.issueToken('alice')
    const header = `Bearer ${token}`
    for (const requirement of [group(ORG_ID), group(ORG_ID, 'owner'), group('fc:org:nowhere.example')]) {
      const cold = await settle(checkAt(header, 7, requirement, undefined))
      const warm = checkAt(header, 7, requirement, undefined)
      expect(warm).not.toBeInstanceOf(Promise)
      expect(warm).toEqual(cold)
      // checkNow on the token itself finds what checkAt stored: the same digest, no new call.
      const calls = resolver.stats().upstreamCalls
      expect(resolver.checkNow!(token, requirement)).toEqual(cold)
      expect(await resolver.check(token, requirement)).toEqual(cold)
      expect(resolver.stats().upstreamCalls).toBe(calls)
    }
    // And the other way round: a token checkNow cached is warm for checkAt at any offset.
    const other = emulator.issueToken('bob')
    const decided = await resolver.check(other, group(ORG_ID))
    expect(checkAtOf(resolver)!(`x-prefix ${other}`, 9, group(ORG_ID), undefined)).toEqual(decided)
  })

  it("refuses a malformed token on a miss with checkNow's error, before any call, and offsets outside the string", async () => {
    const resolver = createMembershipResolver({ baseUrl: emulator.baseUrl })
    const checkAt = checkAtOf(resolver)!
    const expected = await settle(resolver.checkNow!('abc def', group(ORG_ID))).catch((error: unknown) => error)
    expect(expected).toBeInstanceOf(TokenMalformedError)
    await expect(settle(checkAt('Bearer abc def', 7, group(ORG_ID), undefined))).rejects.toEqual(expected)
    await expect(settle(checkAt('Bearer abc', 10, group(ORG_ID), undefined))).rejects.toThrow(/non-empty string/)
    await expect(settle(checkAt('Bearer abc', -1, group(ORG_ID), undefined))).rejects.toThrow(/non-empty string/)
    expect(resolver.stats().upstreamCalls).toBe(0)
  })

  it("is what a guard core uses for a header of the usual shape; a resolver of one's own gets only checked tokens", async () => {
    const ours = createMembershipResolver({ baseUrl: emulator.baseUrl })
    const token = emulator.issueToken('alice')
    const allowed = await createGuardCore({ resolver: ours }).authorizeNow({ authorization: `Bearer ${token}` }, group(ORG_ID))
    expect(allowed.decision).toMatchObject({ allowed: true })
    // Its context asks with the token sliced out of the header: warm, no new call.
    const calls = ours.stats().upstreamCalls
    expect((await allowed.groups()).length).toBeGreaterThan(0)
    expect(ours.stats().upstreamCalls).toBe(calls)

    const seen: string[] = []
    const own: MembershipResolver = {
      ...ours,
      checkNow: (given, requirement, options) => {
        seen.push(given)
        return ours.checkNow!(given, requirement, options)
      },
    }
    const core = createGuardCore({ resolver: own })
    await expect(settleContext(core.authorizeNow({ authorization: 'Bearer abc def' }, group(ORG_ID)))).rejects.toBeInstanceOf(
      TokenMalformedError,
    )
    expect((await core.authorizeNow({ authorization: `Bearer ${token}` }, group(ORG_ID))).decision).toMatchObject({ allowed: true })
    expect(seen).toEqual([token])
  })
})
