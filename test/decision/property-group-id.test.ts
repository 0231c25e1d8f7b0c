/**
 * Property: any group id either round-trips exactly through the emulator (as one encoded
 * path segment, and back in the JSON answers) or is refused before any request, and it
 * is refused exactly when the rules say so (empty, over 1024 characters, control
 * characters, lone surrogates, `.`/`..` and their encodings). `group()` also refuses a
 * blank or space-padded id when a requirement is declared.
 */
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  assertGroupId,
  createGroupsClient,
  createMembershipResolver,
  group,
  InvalidGroupIdError,
  type GroupsClient,
  type MembershipResolver,
} from '../../src/index.js'
import { startEmulator, type Emulator } from '../../testing/index.js'

/** The refusal rules, written out independently of src/group-id.ts. */
function shouldRefuse(id: string): boolean {
  if (id.length === 0 || id.length > 1024) return true
  for (let i = 0; i < id.length; i++) {
    const code = id.charCodeAt(i)
    if (code <= 0x1f || (code >= 0x7f && code <= 0x9f)) return true
    if (code >= 0xd800 && code <= 0xdbff) {
      const next = id.charCodeAt(i + 1)
      if (!(next >= 0xdc00 && next <= 0xdfff)) return true
      i++
    } else if (code >= 0xdc00 && code <= 0xdfff) {
      return true
    }
  }
  // A path segment the URL parser would collapse: one or two dots, each literal or
  // percent-encoded (once or twice).
  return /^(?:\.|%2e|%252e){1,2}$/i.test(id)
}

const PIECES = [
  ':',
  '%',
  '/',
  '.',
  '..',
  '?',
  '#',
  '&',
  '=',
  '+',
  ' ',
  '\\',
  '%2F',
  '%2f',
  '%2e',
  '%2E',
  '%252e',
  '%25',
  '%00',
  'fc',
  'org',
  'example.org',
  'é',
  'ø',
  '😀',
  '\u2028',
  '\u0000',
  '\n',
  '\r',
  '\u007f',
  '\u0085',
  '\ud800',
  '\udc00',
  'a',
  'Z',
  '0',
  '-',
  '_',
  '~',
  '"',
  "'",
  '<',
  '>',
  '[',
  ']',
  '{',
  '}',
  '|',
  '^',
  '`',
]

const groupId = fc.oneof(
  { weight: 5, arbitrary: fc.array(fc.constantFrom(...PIECES), { minLength: 1, maxLength: 10 }).map((parts) => parts.join('')) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 20 }) },
  { weight: 1, arbitrary: fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)), maxLength: 8 }) },
  {
    weight: 1,
    arbitrary: fc.constantFrom('', '.', '..', '%2e', '%2E%2e', '.%2e', '%252e%252E', '...', '.a', 'a.', 'x'.repeat(1024), 'x'.repeat(1025)),
  },
)

describe('group ids through the emulator', () => {
  let emulator: Emulator
  let client: GroupsClient
  let resolver: MembershipResolver
  let token: string

  beforeAll(async () => {
    emulator = await startEmulator()
    client = createGroupsClient({ baseUrl: emulator.baseUrl })
    resolver = createMembershipResolver({ client })
    token = emulator.issueToken('erin') // a user with no groups of her own
  })
  afterAll(async () => {
    await resolver.close()
    await client.close()
    await emulator.close()
  })

  it('round-trip exactly or are refused before any request, as the rules say', async () => {
    const erin = emulator.data.users.find((user) => user.id === 'erin')!
    let refused = 0
    let roundTripped = 0
    await fc.assert(
      fc.asyncProperty(groupId, async (id) => {
        emulator.resetLog()
        resolver.invalidate()
        if (shouldRefuse(id)) {
          refused++
          expect(() => assertGroupId(id)).toThrow(InvalidGroupIdError)
          expect(() => group(id)).toThrow(InvalidGroupIdError)
          await expect(client.myMembership(token, id)).rejects.toBeInstanceOf(InvalidGroupIdError)
          await expect(client.group(id, { token })).rejects.toBeInstanceOf(InvalidGroupIdError)
          await expect(resolver.membership(token, id)).rejects.toBeInstanceOf(InvalidGroupIdError)
          expect(emulator.count()).toBe(0)
          return
        }
        roundTripped++
        expect(() => assertGroupId(id)).not.toThrow()
        emulator.data.groups.push({ id, displayName: 'Generated', type: 'voot:ad-hoc' })
        erin.memberships.push({ groupId: id, membership: { basic: 'admin', displayName: id } })
        try {
          const membership = await client.myMembership(token, id)
          expect(membership).toMatchObject({ basic: 'admin', displayName: id })
          expect((await client.group(id, { token }))?.id).toBe(id)
          expect((await client.myGroups(token)).map((g) => g.id)).toEqual([id])
          if (id.trim() === id) {
            expect(await resolver.check(token, group(id, 'admin'))).toMatchObject({ allowed: true, groupId: id })
          } else {
            // Sent as it is when asked for, but refused as a route's requirement: no service has such an id.
            expect(() => group(id, 'admin')).toThrow(/remove the spaces|blank/)
            expect(await resolver.membership(token, id)).toMatchObject({ basic: 'admin' })
          }
          // Exactly one path segment, encoded, on the wire.
          const paths = emulator.requests.map((request) => request.path)
          expect(paths).toContain(`/groups/me/groups/${encodeURIComponent(id)}`)
          expect(paths).toContain(`/groups/groups/${encodeURIComponent(id)}`)
          expect(paths.every((path) => path === '/groups/me/groups' || path.endsWith(encodeURIComponent(id)))).toBe(true)
        } finally {
          emulator.data.groups.pop()
          erin.memberships.pop()
        }
      }),
      { numRuns: 300 },
    )
    // Both branches were exercised.
    expect(refused).toBeGreaterThan(10)
    expect(roundTripped).toBeGreaterThan(10)
  })

  it('an accepted id the user is not a member of: one request, to exactly its own path, answered 404 (null)', async () => {
    await fc.assert(
      fc.asyncProperty(groupId, async (id) => {
        fc.pre(!shouldRefuse(id))
        emulator.resetLog()
        expect(await client.myMembership(token, id)).toBeNull()
        expect(emulator.requests.map((request) => request.path)).toEqual([`/groups/me/groups/${encodeURIComponent(id)}`])
      }),
      { numRuns: 100 },
    )
  })
})
