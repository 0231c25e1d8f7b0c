/**
 * Issue 52, item 5: `verify()` against an OpenConext-voot service (the emulator's
 * `openconext` dialect, real HTTP on 127.0.0.1) whose `baseUrl` carries Feide's `/groups`.
 * OpenConext answers 401 to any path without a token, so the token-less `grouptypes` of
 * `verify()` looked like a group service under a stray `/groups` too, and the first user
 * got a 503; its health one `/groups` up now names the mistake.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createGuard } from '../../adapters/express/index.js'
import { createMembershipResolver, createServiceResolvers, group, UpstreamError } from '../../src/index.js'
import { READING_CLUB_GROUP_ID, startEmulator, type Emulator } from '../../testing/index.js'

let emulator: Emulator
let several: Emulator

beforeAll(async () => {
  emulator = await startEmulator({ dialect: 'openconext', host: '127.0.0.1', port: 0 })
  several = await startEmulator({
    host: '127.0.0.1',
    port: 0,
    services: { feide: { dialect: 'dataporten' }, surf: { dialect: 'openconext' } },
  })
})
afterAll(async () => {
  await emulator.close()
  await several.close()
})

/** What `verify()` rejected with (it must reject). */
async function rejection(verify: () => Promise<void>): Promise<UpstreamError> {
  const failure = await verify().then(
    () => new Error('verify() resolved'),
    (error: unknown) => error,
  )
  expect(failure).toBeInstanceOf(UpstreamError)
  return failure as UpstreamError
}

describe('verify() on an OpenConext service', () => {
  it('resolves for its root, asking grouptypes only', async () => {
    expect(emulator.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
    const resolver = createMembershipResolver({ baseUrl: emulator.baseUrl })
    emulator.resetLog()
    await expect(resolver.verify()).resolves.toBeUndefined()
    expect(emulator.requests.map((request) => request.path)).toEqual(['/grouptypes'])
    await resolver.close()
  })

  it.each(['/groups', '/groups/'])('rejects for a baseUrl with a stray %s, naming baseUrl and the root to use', async (stray) => {
    const baseUrl = `${emulator.baseUrl}${stray}`
    const warnings: string[] = []
    const resolver = createMembershipResolver({ baseUrl, logger: { warn: (message) => warnings.push(message) } })
    emulator.resetLog()
    const failure = await rejection(() => resolver.verify())
    expect(failure.code).toBe('ERR_UPSTREAM_STATUS')
    expect(failure.upstreamStatus).toBe(401)
    expect(failure.message).toContain(`The group service at baseUrl does not answer like one: ${baseUrl} has a stray /groups.`)
    expect(failure.message).toContain(
      `set baseUrl to ${emulator.baseUrl} (its endpoints are ${emulator.baseUrl}/me/groups and ${emulator.baseUrl}/me/groups/{groupId})`,
    )
    expect(emulator.requests.map((request) => request.path)).toEqual(['/groups/grouptypes', '/internal/health'])
    // What verify() now tells at the start: the first user's request would have been a 503.
    const token = emulator.issueToken('alice')
    const decision = await resolver.check(token, group(READING_CLUB_GROUP_ID)).then(
      () => 'decided',
      (error: unknown) => (error instanceof UpstreamError ? 'unknown (503)' : 'other'),
    )
    expect(decision).toBe('unknown (503)')
    expect(warnings).toEqual([expect.stringContaining(`${baseUrl} answered 404 for me/groups`)])
    await resolver.close()
  })

  it("never puts a token in the message, and a guard's ready() rejects the same way", async () => {
    const guard = createGuard({ baseUrl: `${emulator.baseUrl}/groups` })
    const failure = await guard.ready().then(
      () => new Error('ready() resolved'),
      (error: unknown) => error as Error,
    )
    expect(failure).toBeInstanceOf(UpstreamError)
    expect(failure.message).toContain('has a stray /groups')
    expect(failure.message).not.toMatch(/Bearer|authorization/i)
    await guard.resolver.close()
  })

  it('with several services, rejects for the OpenConext one under a stray /groups and resolves for the right addresses', async () => {
    const feide = several.service('feide').baseUrl
    const surf = several.service('surf').baseUrl
    const make = (surfBase: string) =>
      createServiceResolvers({
        services: { feide: { baseUrl: feide }, surf: { baseUrl: surfBase } },
        groupPrefixes: { 'fc:': 'feide', 'urn:collab:': 'surf' },
      })
    const wrong = make(`${surf}/groups`)
    expect((await rejection(() => wrong.verify())).message).toContain(`set baseUrl to ${surf} (`)
    await wrong.close()
    const right = make(surf)
    await expect(right.verify()).resolves.toBeUndefined()
    await right.close()
  })
})

describe('verify() on a Dataporten service is as before: /groups is its prefix', () => {
  it('resolves for its /groups address, and still names a missing prefix', async () => {
    const feide = several.service('feide').baseUrl
    expect(feide).toMatch(/\/groups$/)
    const resolver = createMembershipResolver({ baseUrl: feide })
    await expect(resolver.verify()).resolves.toBeUndefined()
    await resolver.close()
    const missing = createMembershipResolver({ baseUrl: feide.replace(/\/groups$/, '') })
    expect((await rejection(() => missing.verify())).message).toMatch(/path prefix/)
    await missing.close()
  })
})
