/**
 * Options are checked at creation: unknown keys named (with a suggestion), plain http only
 * to loopback, and the cache bound in bytes as well as entries.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { createGuardCore } from '../../src/adapter-kit.js'
import { createMembershipResolver, group, InvalidOptionError, type MembershipResolverOptions } from '../../src/index.js'
import { BASE_URL, createMockUpstream, type MockUpstream } from '../support/mock-upstream.js'

function refusal(make: () => unknown): InvalidOptionError {
  try {
    make()
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidOptionError)
    return error as InvalidOptionError
  }
  throw new Error('no error was thrown')
}

describe('unknown option keys', () => {
  it.each([
    [{ timout: 100 }, 'timout', /did you mean timeout/],
    [{ timeOut: 100 }, 'timeOut', /did you mean timeout/],
    [{ ttl: 1000 }, 'ttl', /not an option/],
    [{ cache: { tll: 5 } }, 'cache.tll', /did you mean ttl/],
    [{ cache: { maxAge: 5 } }, 'cache.maxAge', /is not an option/],
  ])('%j is refused, naming the key', (extra, option, message) => {
    const options = { baseUrl: BASE_URL, ...extra } as MembershipResolverOptions
    const error = refusal(() => createMembershipResolver(options))
    expect(error.option).toBe(option)
    expect(error.message).toMatch(message)
    // The same through every adapter's core.
    expect(refusal(() => createGuardCore(options as never)).option).toBe(option)
  })

  it('no options, or options that are not an object, are an InvalidOptionError', () => {
    for (const bad of [undefined, null, 'https://x', 42, []]) {
      refusal(() => createMembershipResolver(bad as never))
      refusal(() => createGuardCore(bad as never))
    }
  })
})

describe('plain http only to loopback', () => {
  it('refuses http: to another host, naming baseUrl', () => {
    for (const baseUrl of ['http://groups.example.org/groups', 'http://10.0.0.5/groups', 'http://[2001:db8::1]/groups']) {
      const error = refusal(() => createMembershipResolver({ baseUrl }))
      expect(error.option).toBe('baseUrl')
      expect(error.message).toMatch(/https:/)
    }
  })

  it('accepts loopback hosts, https:, and an explicit allowInsecureHttp', async () => {
    for (const baseUrl of [
      'http://127.0.0.1:8080/groups',
      'http://[::1]:8080/groups',
      'http://localhost/groups',
      'https://groups.example.org/groups',
    ]) {
      await createMembershipResolver({ baseUrl }).close()
    }
    await createMembershipResolver({ baseUrl: 'http://groups.internal/groups', allowInsecureHttp: true }).close()
    expect(refusal(() => createMembershipResolver({ baseUrl: BASE_URL, allowInsecureHttp: 'yes' as never })).option).toBe(
      'allowInsecureHttp',
    )
  })
})

describe('cache.maxBytes', () => {
  let upstream: MockUpstream | undefined
  afterEach(async () => {
    await upstream?.close()
    upstream = undefined
  })

  function bigList(groups: number): { id: string; type: string; membership: { basic: string } }[] {
    return Array.from({ length: groups }, (_, i) => ({
      id: `fc:adhoc:${i.toString().padStart(6, '0')}`,
      type: 'voot:ad-hoc',
      membership: { basic: 'member' },
    }))
  }

  it('bounds the cache in estimated bytes, whatever cache.max allows', async () => {
    upstream = createMockUpstream()
    const resolver = createMembershipResolver({ baseUrl: BASE_URL, dispatcher: upstream.agent, cache: { max: 100_000, maxBytes: 1 << 20 } })
    for (let i = 0; i < 300; i++) upstream.users.set(`t${i}`, { listed: bigList(20) })
    for (let i = 0; i < 300; i++) await resolver.check(`t${i}`, group('fc:adhoc:000001'))
    // About 5 KB estimated per answer: a 1 MiB bound holds a couple of hundred, not 300.
    expect(resolver.stats().size).toBeGreaterThan(50)
    expect(resolver.stats().size).toBeLessThan(300)
    await resolver.close()
  })

  it('serves an answer larger than a tenth of the bound without caching it', async () => {
    upstream = createMockUpstream()
    const resolver = createMembershipResolver({ baseUrl: BASE_URL, dispatcher: upstream.agent, cache: { maxBytes: 1 << 20 } })
    upstream.users.set('huge', { listed: bigList(2000) })
    expect((await resolver.check('huge', group('fc:adhoc:000001'))).allowed).toBe(true)
    expect((await resolver.check('huge', group('fc:adhoc:000001'))).allowed).toBe(true)
    expect(upstream.total()).toBe(2)
    expect(resolver.stats().size).toBe(0)
    await resolver.close()
  })

  it('is validated', () => {
    expect(refusal(() => createMembershipResolver({ baseUrl: BASE_URL, cache: { maxBytes: 10 } })).option).toBe('cache.maxBytes')
  })
})
