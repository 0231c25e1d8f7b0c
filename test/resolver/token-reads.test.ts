/**
 * A cold decision reads a JWT access token's expiry once, however many lookups it makes:
 * counted through `jose`'s `decodeJwt`, not timed.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'

const reads = vi.hoisted(() => ({ count: 0 }))

vi.mock('jose', async (importOriginal) => {
  const actual = await importOriginal<typeof import('jose')>()
  return {
    ...actual,
    decodeJwt: (...args: Parameters<typeof actual.decodeJwt>) => {
      reads.count++
      return actual.decodeJwt(...args)
    },
  }
})

const { createMembershipResolver, group } = await import('../../src/index.js')
const { createMockUpstream, BASE_URL } = await import('../support/mock-upstream.js')

const segment = (value: object): string => Buffer.from(JSON.stringify(value)).toString('base64url')
// A JWT access token (RFC 8693 exchange): only its `exp` is read, never verified.
const jwt = `${segment({ alg: 'none' })}.${segment({ exp: Math.floor(Date.now() / 1000) + 3600 })}.c2ln`

let upstream: ReturnType<typeof createMockUpstream>
beforeEach(() => {
  upstream = createMockUpstream()
  upstream.override = (path) =>
    path.endsWith('/me/groups')
      ? { status: 200, body: JSON.stringify([]) } // the list does not show the group: its membership is asked too
      : { status: 200, body: JSON.stringify({ basic: 'admin' }) }
})
afterEach(async () => {
  await upstream.close()
})

describe('the expiry of a JWT access token', () => {
  it('is read once per cold decision, for its two lookups', async () => {
    const resolver = createMembershipResolver({ baseUrl: BASE_URL, dispatcher: upstream.agent })
    try {
      const before = reads.count
      const decision = await resolver.check(jwt, group('fc:org:example.org', 'admin'))
      expect(decision.allowed).toBe(true)
      expect(upstream.total()).toBe(2)
      expect(reads.count - before).toBe(1)
    } finally {
      await resolver.close()
    }
  })
})
