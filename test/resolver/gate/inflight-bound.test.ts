/**
 * `maxInflight` bounds the calls open at the group service, also across an invalidation:
 * a flight that `invalidate()` drops is no longer joined and its answer is not stored, but
 * its call is still open at the service until it settles, and it still counts.
 */
import { afterAll, beforeAll, expect, it } from 'vitest'
import { createMembershipResolver, group } from '../../../src/index.js'
import { ORG_ID, startEmulator, type Emulator } from '../../../testing/index.js'

let emulator: Emulator

beforeAll(async () => {
  emulator = await startEmulator()
})
afterAll(async () => {
  await emulator.close()
})

it('a flight dropped by invalidate() still counts until its call is over', async () => {
  emulator.faults.add({ kind: 'hang' })
  const resolver = createMembershipResolver({ baseUrl: emulator.baseUrl, maxInflight: 2, timeout: 400 })
  try {
    const hanging = [emulator.issueToken('alice'), emulator.issueToken('bob')].map((token) =>
      resolver.check(token, group(ORG_ID)).catch((error: unknown) => error),
    )
    await expect.poll(() => emulator.count()).toBe(2)
    await resolver.invalidate()
    expect(resolver.stats().inflight).toBe(2)
    await expect(resolver.check(emulator.issueToken('alice'), group(ORG_ID))).rejects.toMatchObject({ code: 'ERR_UPSTREAM_OVERLOADED' })
    expect(emulator.count()).toBe(2)
    for (const outcome of await Promise.all(hanging)) expect(outcome).toMatchObject({ code: 'ERR_UPSTREAM_TIMEOUT' })
    expect(resolver.stats().inflight).toBe(0)
    // Once they are over, calls are admitted again.
    emulator.faults.clear()
    expect(await resolver.check(emulator.issueToken('alice'), group(ORG_ID))).toMatchObject({ allowed: true })
  } finally {
    emulator.faults.clear()
    await resolver.close()
  }
})
