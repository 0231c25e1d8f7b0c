/**
 * The emulator's OpenConext dialect against OpenConext-voot's own code (its VootController,
 * Group and Membership models, UrnUtils, SecurityConfig and DefaultErrorController; see
 * spec/real-service-behaviour.md): routes at the root, URN ids, `sourceID`, the five roles,
 * plain-string memberships, 404 for a non-member, Spring's refusals and error bodies. Real
 * HTTP on loopback, through undici.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { InvalidOptionError } from '../../src/errors.js'
import {
  INVITE_GROUP_ID,
  openConextData,
  PROJECT_BOARD_GROUP_ID,
  READING_CLUB_GROUP_ID,
  RESEARCH_DATA_GROUP_ID,
  startEmulator,
  validateEmulatorData,
  type Emulator,
} from '../../testing/index.js'

const NOW = Date.parse('2026-11-21T12:00:00Z')
const USERS = ['alice', 'bob', 'carol', 'dave', 'erin', 'frank'] as const
const SPRING_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}\+00:00$/
const enc = encodeURIComponent

interface Reply {
  status: number
  headers: Headers
  text: string
  json: unknown
}

let emulator: Emulator
const token: Record<string, string> = {}

async function get(path: string, bearer?: string): Promise<Reply> {
  const res = await fetch(`${emulator.baseUrl}${path}`, { headers: bearer === undefined ? {} : { authorization: `Bearer ${bearer}` } })
  const text = await res.text()
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    json = undefined
  }
  return { status: res.status, headers: res.headers, text, json }
}

const ids = (reply: Reply): string[] => (reply.json as { id: string }[]).map((group) => group.id)
const roleOf = (membership: unknown): unknown => (typeof membership === 'string' ? membership : (membership as { basic?: unknown }).basic)

beforeAll(async () => {
  emulator = await startEmulator({ dialect: 'openconext', now: () => NOW })
  for (const user of USERS) token[user] = emulator.issueToken(user)
})
afterAll(async () => {
  await emulator.close()
})

describe('addresses', () => {
  it('serves at the root: baseUrl is the origin, with no /groups prefix', () => {
    expect(emulator.dialect).toBe('openconext')
    expect(emulator.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
    expect(emulator.baseUrl).toBe(emulator.authUrl)
  })

  it('has none of the Dataporten paths', async () => {
    for (const path of ['/groups/me/groups', '/groups/v1/me/groups', '/groups/grouptypes', '/grouptypes', '/groups']) {
      expect((await get(path, token['alice'])).status, path).toBe(404)
    }
  })

  it("keeps the dialect's default when asked for dataporten explicitly", async () => {
    const dataporten = await startEmulator({ dialect: 'dataporten' })
    try {
      expect(dataporten.dialect).toBe('dataporten')
      expect(dataporten.baseUrl).toBe(`${dataporten.authUrl}/groups`)
    } finally {
      await dataporten.close()
    }
  })

  it('refuses an unknown dialect, naming the option', async () => {
    await expect(startEmulator({ dialect: 'surfconext' as never })).rejects.toThrow(InvalidOptionError)
    await expect(startEmulator({ dialect: 'surfconext' as never })).rejects.toThrow(/dialect.*'dataporten', 'openconext'/)
  })
})

describe('the default data', () => {
  it('validates, has the usual users, and URN group ids with a sourceID', () => {
    expect(validateEmulatorData(openConextData)).toEqual(openConextData)
    expect(openConextData.users.map((user) => user.id)).toEqual([...USERS])
    for (const group of openConextData.groups) {
      expect(group.id).toMatch(/^urn:collab:group:[^:]+:.+$/)
      expect(typeof group['sourceID']).toBe('string')
    }
    expect(READING_CLUB_GROUP_ID).toBe('urn:collab:group:surfteams.nl:nl:surfnet:diensten:reading_club')
  })

  it('uses all five roles, has a prospect and a manager among its users, and some plain-string memberships', () => {
    const memberships = openConextData.users.flatMap((user) => user.memberships.map((entry) => ({ user: user.id, ...entry })))
    expect(new Set(memberships.map((entry) => roleOf(entry.membership)))).toEqual(
      new Set(['prospect', 'member', 'manager', 'admin', 'owner']),
    )
    expect(memberships.some((entry) => roleOf(entry.membership) === 'prospect')).toBe(true)
    expect(memberships.some((entry) => roleOf(entry.membership) === 'manager')).toBe(true)
    expect(memberships.filter((entry) => typeof entry.membership === 'string').length).toBeGreaterThanOrEqual(3)
    expect(memberships.filter((entry) => typeof entry.membership === 'object').length).toBeGreaterThanOrEqual(3)
  })
})

describe('GET /me/groups', () => {
  it("lists whole groups with exactly OpenConext's five fields, as Spring serialises them", async () => {
    const reply = await get('/me/groups', token['alice'])
    expect(reply.status).toBe(200)
    expect(reply.headers.get('content-type')).toBe('application/json')
    expect(ids(reply)).toEqual([READING_CLUB_GROUP_ID, PROJECT_BOARD_GROUP_ID, RESEARCH_DATA_GROUP_ID])
    for (const group of reply.json as Record<string, unknown>[]) {
      expect(Object.keys(group)).toEqual(['id', 'displayName', 'description', 'sourceID', 'membership'])
    }
    expect((reply.json as Record<string, unknown>[])[0]).toEqual({
      id: READING_CLUB_GROUP_ID,
      displayName: 'Reading club',
      description: 'Distributed systems papers, Thursdays',
      sourceID: 'SURFteams',
      membership: { basic: 'owner' },
    })
    // A group without a description: null, not left out.
    expect((reply.json as Record<string, unknown>[])[2]).toMatchObject({ description: null, sourceID: 'Example University' })
  })

  it('sends some memberships as plain role strings', async () => {
    const reply = await get('/me/groups', token['alice'])
    const board = (reply.json as { id: string; membership: unknown }[]).find((group) => group.id === PROJECT_BOARD_GROUP_ID)
    expect(board?.membership).toBe('admin')
  })

  it("lists a prospect's invitation like any other group: telling it apart is the client's job", async () => {
    const reply = await get('/me/groups', token['dave'])
    expect(reply.json).toEqual([expect.objectContaining({ id: READING_CLUB_GROUP_ID, membership: 'prospect' })])
  })

  it('answers [] for a user without groups', async () => {
    const reply = await get('/me/groups', token['erin'])
    expect(reply.status).toBe(200)
    expect(reply.text).toBe('[]')
  })
})

describe('GET /me/groups/{groupId}', () => {
  it.each([
    ['carol', READING_CLUB_GROUP_ID, { basic: 'manager' }],
    ['carol', PROJECT_BOARD_GROUP_ID, 'manager'],
    ['bob', PROJECT_BOARD_GROUP_ID, { basic: 'prospect' }],
    ['bob', READING_CLUB_GROUP_ID, 'member'],
    ['alice', READING_CLUB_GROUP_ID, { basic: 'owner' }],
    ['frank', RESEARCH_DATA_GROUP_ID, 'member'],
    ['bob', INVITE_GROUP_ID, { basic: 'member' }],
  ])('%s in %s: the whole group, carrying membership %j', async (user, groupId, membership) => {
    const reply = await get(`/me/groups/${enc(groupId)}`, token[user])
    expect(reply.status).toBe(200)
    expect(reply.json).toMatchObject({ id: groupId, membership })
    expect(typeof (reply.json as { sourceID: unknown }).sourceID).toBe('string')
  })

  it("answers 404 with Spring's error body for a group the user is not in", async () => {
    for (const [user, groupId] of [
      ['erin', READING_CLUB_GROUP_ID],
      ['frank', PROJECT_BOARD_GROUP_ID],
      ['alice', 'urn:collab:group:surfteams.nl:nl:surfnet:diensten:nope'],
    ] as const) {
      const reply = await get(`/me/groups/${enc(groupId)}`, token[user])
      expect(reply.status).toBe(404)
      expect(reply.headers.get('content-type')).toBe('application/json')
      expect(reply.json).toEqual({
        timestamp: expect.stringMatching(SPRING_TIMESTAMP),
        status: 404,
        error: 'Not Found',
        exception: 'voot.ResourceNotFoundException',
        message: 'No message available',
      })
    }
  })

  it("times Spring's error body by the emulator's clock", async () => {
    const reply = await get(`/me/groups/${enc(READING_CLUB_GROUP_ID)}`, token['erin'])
    expect((reply.json as { timestamp: string }).timestamp).toBe('2026-11-21T12:00:00.000+00:00')
  })

  it('answers 400 to an id that is not a fully qualified group URN, with the body status 500 that OpenConext keeps', async () => {
    for (const groupId of ['reading_club', 'fc:org:example.org', 'urn:collab:group:surfteams.nl']) {
      const reply = await get(`/me/groups/${enc(groupId)}`, token['alice'])
      expect(reply.status, groupId).toBe(400)
      expect(reply.json).toEqual({
        timestamp: expect.stringMatching(SPRING_TIMESTAMP),
        status: 500,
        error: 'Internal Server Error',
        exception: 'java.lang.IllegalArgumentException',
        message: groupId,
      })
    }
  })
})

describe('Spring Security in front', () => {
  it('answers 401 with an empty body and a bare Bearer challenge without a token', async () => {
    for (const path of ['/me/groups', `/me/groups/${enc(READING_CLUB_GROUP_ID)}`, '/me/somewhere-else']) {
      const reply = await get(path)
      expect(reply.status, path).toBe(401)
      expect(reply.headers.get('www-authenticate')).toBe('Bearer')
      expect(reply.text).toBe('')
    }
  })

  it('answers 401 invalid_token with an empty body for an unknown or revoked token', async () => {
    const revoked = emulator.issueToken('alice')
    emulator.revokeToken(revoked)
    for (const bearer of ['not-a-token-we-issued', revoked]) {
      const reply = await get('/me/groups', bearer)
      expect(reply.status).toBe(401)
      expect(reply.headers.get('www-authenticate')).toMatch(/^Bearer error="invalid_token", error_description="[^"]+", error_uri="[^"]+"$/)
      expect(reply.text).toBe('')
    }
  })

  it('answers 403 insufficient_scope with an empty body for a token without the groups scope', async () => {
    const reply = await get('/me/groups', emulator.issueToken('alice', { scopes: ['openid', 'profile'] }))
    expect(reply.status).toBe(403)
    expect(reply.headers.get('www-authenticate')).toMatch(/^Bearer error="insufficient_scope"/)
    expect(reply.text).toBe('')
  })

  it('gives a client-credentials token no groups of its own: [] and 404, as the real providers do for a missing user', async () => {
    const client = emulator.issueClientToken()
    expect((await get('/me/groups', client)).json).toEqual([])
    expect((await get(`/me/groups/${enc(READING_CLUB_GROUP_ID)}`, client)).status).toBe(404)
  })

  it('answers its health (/internal/health) without a token, and 401 for it under a stray /groups, as its permitAll does', async () => {
    for (const bearer of [undefined, token['alice']]) {
      const reply = await get('/internal/health', bearer)
      expect(reply.status).toBe(200)
      expect(reply.headers.get('content-type')).toBe('application/vnd.spring-boot.actuator.v3+json')
      expect(reply.json).toEqual({ status: 'UP' })
    }
    // Spring refuses a token it cannot accept before it looks at permitAll.
    expect((await get('/internal/health', 'not-a-token-we-issued')).status).toBe(401)
    for (const path of ['/groups/internal/health', '/groups/grouptypes', '/grouptypes', '/groups/me/groups']) {
      const reply = await get(path)
      expect(reply.status, path).toBe(401)
      expect(reply.headers.get('www-authenticate')).toBe('Bearer')
    }
  })

  it("answers 404 with Spring's body to an unknown route under its paths", async () => {
    const reply = await get('/me/other', token['alice'])
    expect(reply.status).toBe(404)
    expect(reply.json).toMatchObject({ status: 404, error: 'Not Found' })
  })
})

describe('the client-credentials routes', () => {
  const alice = 'urn:collab:person:example.org:alice'

  it("internal/groups/{userId}: a user's groups for a client token", async () => {
    const reply = await get(`/internal/groups/${enc(alice)}`, emulator.issueClientToken())
    expect(reply.status).toBe(200)
    expect(ids(reply)).toEqual([READING_CLUB_GROUP_ID, PROJECT_BOARD_GROUP_ID, RESEARCH_DATA_GROUP_ID])
    expect((await get(`/internal/groups/${enc(alice)}/${enc(PROJECT_BOARD_GROUP_ID)}`, emulator.issueClientToken())).json).toMatchObject({
      id: PROJECT_BOARD_GROUP_ID,
      membership: 'admin',
    })
    expect((await get(`/internal/groups/${enc(alice)}/${enc(INVITE_GROUP_ID)}`, emulator.issueClientToken())).status).toBe(404)
  })

  it('internal/groups/{userId}: 400 for a user id that is not a person URN', async () => {
    const reply = await get('/internal/groups/alice', emulator.issueClientToken())
    expect(reply.status).toBe(400)
    expect(reply.json).toMatchObject({ status: 500, exception: 'java.lang.IllegalArgumentException', message: 'alice' })
  })

  it('refuses a personal token with AccessDeniedException', async () => {
    const reply = await get(`/internal/groups/${enc(alice)}`, token['bob'])
    expect(reply.status).toBe(403)
    expect(reply.json).toMatchObject({
      status: 403,
      error: 'Forbidden',
      exception: 'voot.AccessDeniedException',
      message: 'ClientCredentials grant type required. Unspecified ID is bob',
    })
  })

  it('members/{groupId}: needs the members scope; lists person URNs, names and e-mail addresses', async () => {
    const withoutScope = await get(`/members/${enc(READING_CLUB_GROUP_ID)}`, emulator.issueClientToken())
    expect(withoutScope.status).toBe(403)
    expect(withoutScope.headers.get('www-authenticate')).toMatch(/insufficient_scope/)
    const reply = await get(`/members/${enc(RESEARCH_DATA_GROUP_ID)}`, emulator.issueClientToken({ scopes: ['groups', 'members'] }))
    expect(reply.status).toBe(200)
    expect(reply.json).toEqual([
      { id: alice, name: 'Alice Hansen', email: 'alice@example.org' },
      { id: 'urn:collab:person:example.org:frank', name: 'Frank Olsen', email: null },
    ])
  })
})

describe("with the emulator's other controls", () => {
  it('serves custom data in the OpenConext shape, and applies faults and the request log as in the other dialect', async () => {
    const custom = await startEmulator({
      dialect: 'openconext',
      data: {
        groups: [{ id: 'urn:collab:group:example.com:team', displayName: 'Team' }],
        groupTypes: [],
        users: [{ id: 'u', name: 'U', memberships: [{ groupId: 'urn:collab:group:example.com:team', membership: 'manager' }] }],
        clients: [],
      },
    })
    try {
      const u = custom.issueToken('u')
      const reply = await fetch(`${custom.baseUrl}/me/groups`, { headers: { authorization: `Bearer ${u}` } })
      expect(await reply.json()).toEqual([
        { id: 'urn:collab:group:example.com:team', displayName: 'Team', description: null, sourceID: null, membership: 'manager' },
      ])
      custom.faults.add({ kind: 'status', status: 503 }, { path: '/me/groups', times: 1 })
      expect((await fetch(`${custom.baseUrl}/me/groups`, { headers: { authorization: `Bearer ${u}` } })).status).toBe(503)
      custom.faults.add({ kind: 'partial', omit: ['urn:collab:group:example.com:team'] }, { times: 1 })
      expect(await (await fetch(`${custom.baseUrl}/me/groups`, { headers: { authorization: `Bearer ${u}` } })).json()).toEqual([])
      expect(custom.count('/me/groups')).toBe(3)
      expect(JSON.stringify(custom.requests)).not.toContain(u)
    } finally {
      await custom.close()
    }
  })

  it('keeps the authorization server beside the routes', async () => {
    const discovery = await fetch(`${emulator.authUrl}/.well-known/openid-configuration`)
    expect(discovery.status).toBe(200)
    expect(((await discovery.json()) as { issuer: string }).issuer).toBe(emulator.authUrl)
  })
})
