/**
 * One digest of the token per request, warm or cold: the digest is a request's dearest step
 * on the warm path, and a cold request hands the warm attempt's digest on to its lookups
 * instead of computing it again. Counted from outside the resolver: every digest the store
 * makes goes through `createTokenDigest`'s function, which this test wraps.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { MockAgent } from 'undici'

const counter = vi.hoisted(() => ({ digests: 0 }))
vi.mock('../../../src/resolver/store/token-digest.js', async (importOriginal) => {
  const original = await importOriginal<typeof import('../../../src/resolver/store/token-digest.js')>()
  return {
    ...original,
    createTokenDigest: (...args: Parameters<typeof original.createTokenDigest>) => {
      const digest = original.createTokenDigest(...args)
      return (source: string, from?: number) => {
        counter.digests++
        return digest(source, from)
      }
    },
  }
})

const { createMembershipResolver, createServiceResolvers, group } = await import('../../../src/index.js')
const { createGuardCore } = await import('../../../src/adapter-kit.js')

const BASE = 'https://groups.example.org/groups'
const TOKEN = 'short-token-1234'
const GROUP = 'fc:org:example.org'

describe('one token digest per request', () => {
  let agent: MockAgent
  beforeEach(() => {
    agent = new MockAgent()
    agent.disableNetConnect()
    const pool = agent.get('https://groups.example.org')
    pool
      .intercept({ path: '/groups/me/groups', method: 'GET' })
      .reply(200, [{ id: GROUP, displayName: 'Example', type: 'fc:org', membership: { basic: 'admin' } }], {
        headers: { 'content-type': 'application/json' },
      })
      .persist()
    counter.digests = 0
  })
  afterEach(async () => {
    await agent.close()
  })

  it('a cold check of a short token digests it once, and the warm one after it once', async () => {
    const resolver = createMembershipResolver({ baseUrl: BASE, dispatcher: agent })
    const checkNow = resolver.checkNow?.bind(resolver)
    if (!checkNow) throw new Error('the resolver has no checkNow')
    counter.digests = 0
    await checkNow(TOKEN, group(GROUP, 'admin'))
    expect(counter.digests).toBe(1)
    counter.digests = 0
    await checkNow(TOKEN, group(GROUP, 'admin'))
    expect(counter.digests).toBe(1)
  })

  it("a cold guard check of a header's token digests it once", async () => {
    const resolver = createMembershipResolver({ baseUrl: BASE, dispatcher: agent })
    const core = createGuardCore({ resolver })
    counter.digests = 0
    await core.authorizeNow({ authorization: `Bearer ${TOKEN}` }, group(GROUP, 'admin'))
    expect(counter.digests).toBe(1)
    counter.digests = 0
    await core.authorizeNow({ authorization: `Bearer ${TOKEN}` }, group(GROUP, 'admin'))
    expect(counter.digests).toBe(1)
  })

  it("with several services, a cold guard check of a header's token digests it once", async () => {
    const services = createServiceResolvers({
      services: { feide: { baseUrl: BASE, dispatcher: agent }, surf: { baseUrl: 'https://voot.example.net', dispatcher: agent } },
      groupPrefixes: { 'fc:': 'feide', 'urn:collab:': 'surf' },
    })
    const core = createGuardCore({ services, service: 'feide' })
    counter.digests = 0
    await core.authorizeNow({ authorization: `Bearer ${TOKEN}` }, group(GROUP, 'admin'))
    expect(counter.digests).toBe(1)
  })
})
