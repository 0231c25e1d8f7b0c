/**
 * The emulator's group endpoints against spec/group-membership-service.md and
 * spec/real-service-behaviour.md, case by case, over real HTTP on loopback.
 */
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  ADHOC_GROUP_ID,
  ORG_ID,
  PUBLIC_ADHOC_GROUP_ID,
  SCHOOL_GROUP_ID,
  startEmulator,
  type Emulator,
  type EmulatorData,
} from '../../testing/index.js'

const NOW = Date.parse('2026-11-21T12:00:00Z')
const INF1000 = 'fc:fs:fs:emne:example.org:INF1000:1'
const MAT1100 = 'fc:fs:fs:emne:example.org:MAT1100:1'
const NOT_FOUND_BODY = { message: 'Requested resource was not found' }

interface Reply {
  status: number
  headers: IncomingHttpHeaders
  text: string
  json: unknown
}

/** A GET with the path sent exactly as written (no URL normalisation on the way). */
function get(emulator: Emulator, path: string, token?: string, method = 'GET'): Promise<Reply> {
  const { hostname, port } = new URL(emulator.authUrl)
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: hostname, port, path, method, headers: token === undefined ? {} : { authorization: `Bearer ${token}` } },
      (res) => {
        const chunks: Buffer[] = []
        res.on('data', (chunk: Buffer) => chunks.push(chunk))
        res.on('error', reject)
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8')
          let json: unknown
          try {
            json = JSON.parse(text)
          } catch {
            json = undefined
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json })
        })
      },
    )
    req.on('error', reject)
    req.end()
  })
}

/** A GET through undici (fetch), for an image body. */
async function getBytes(path: string, bearer?: string): Promise<{ status: number; contentType: string | null; bytes: Buffer }> {
  const res = await fetch(`${emulator.authUrl}${path}`, { headers: bearer === undefined ? {} : { authorization: `Bearer ${bearer}` } })
  return { status: res.status, contentType: res.headers.get('content-type'), bytes: Buffer.from(await res.arrayBuffer()) }
}

const ids = (reply: Reply): string[] => (reply.json as { id: string }[]).map((group) => group.id)
const enc = encodeURIComponent

let clock = NOW
let emulator: Emulator
const token: Record<string, string> = {}

beforeAll(async () => {
  emulator = await startEmulator({ now: () => clock })
  for (const user of ['alice', 'bob', 'carol', 'dave', 'erin', 'frank']) token[user] = emulator.issueToken(user, { expiresIn: 1e11 })
})
afterAll(async () => {
  await emulator.close()
})

describe('addresses', () => {
  it('baseUrl carries the /groups prefix and authUrl is the bare origin on loopback', () => {
    expect(emulator.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/groups$/)
    expect(emulator.authUrl).toBe(emulator.baseUrl.slice(0, -'/groups'.length))
  })
})

describe('GET me/groups', () => {
  it('lists the active memberships, each group carrying the membership object', async () => {
    const reply = await get(emulator, '/groups/me/groups', token['alice'])
    expect(reply.status).toBe(200)
    expect(reply.headers['content-type']).toBe('application/json; charset=utf-8')
    expect(ids(reply)).toEqual([ORG_ID, 'fc:org:example.org:unit:AVD-U2', ADHOC_GROUP_ID, PUBLIC_ADHOC_GROUP_ID])
    const org = (reply.json as Record<string, unknown>[])[0]
    expect(org).toMatchObject({
      id: ORG_ID,
      displayName: 'Eksempeluniversitetet',
      type: 'fc:org',
      membership: { basic: 'admin', affiliation: ['employee', 'member', 'staff'], primaryAffiliation: 'employee' },
    })
  })

  it('leaves out an inactive membership unless showAll=true, which lists it with active:false', async () => {
    const active = await get(emulator, '/groups/me/groups', token['bob'])
    expect(ids(active)).not.toContain(MAT1100)
    expect(ids(active)).toContain(INF1000)
    const all = await get(emulator, '/groups/me/groups?showAll=true', token['bob'])
    expect(ids(all)).toContain(MAT1100)
    const mat = (all.json as { id: string; membership: { active?: boolean } }[]).find((group) => group.id === MAT1100)
    expect(mat?.membership.active).toBe(false)
  })

  it('answers [] for a user without groups', async () => {
    const reply = await get(emulator, '/groups/me/groups', token['erin'])
    expect(reply.status).toBe(200)
    expect(reply.text).toBe('[]')
  })

  it('judges notBefore/notAfter by the injected clock', async () => {
    expect((await get(emulator, '/groups/me/groups', token['dave'])).json).toEqual([])
    expect(ids(await get(emulator, '/groups/me/groups?showAll=true', token['dave']))).toEqual([ORG_ID, INF1000])
    clock = Date.parse('2099-06-01T00:00:00Z')
    try {
      expect(ids(await get(emulator, '/groups/me/groups', token['dave']))).toEqual([ORG_ID])
    } finally {
      clock = NOW
    }
  })

  it('serves a school membership with affiliation as a string', async () => {
    const reply = await get(emulator, '/groups/me/groups', token['carol'])
    expect(reply.json).toEqual([
      expect.objectContaining({ id: SCHOOL_GROUP_ID, membership: expect.objectContaining({ basic: 'admin', affiliation: 'faculty' }) }),
    ])
  })
})

describe('GET me/groups/{groupid}', () => {
  it('answers the bare membership object of a member', async () => {
    const reply = await get(emulator, `/groups/me/groups/${enc(ORG_ID)}`, token['bob'])
    expect(reply.status).toBe(200)
    expect(reply.json).toEqual({
      basic: 'member',
      displayName: { nb: 'Student', en: 'Student' },
      active: true,
      affiliation: ['student', 'member'],
      primaryAffiliation: 'student',
    })
  })

  it('answers an inactive membership too, so "inactive" differs from "not a member"', async () => {
    const reply = await get(emulator, `/groups/me/groups/${enc(MAT1100)}`, token['bob'])
    expect(reply.status).toBe(200)
    expect(reply.json).toMatchObject({ basic: 'member', active: false })
    const dated = await get(emulator, `/groups/me/groups/${enc(ORG_ID)}`, token['dave'])
    expect(dated.json).toMatchObject({ notBefore: '2099-01-01T00:00:00Z' })
  })

  it('answers 404 {"message":"Requested resource was not found"} to a non-member, never 403', async () => {
    for (const id of [ORG_ID, 'fc:org:unknown.example', 'no-such-type:x']) {
      const reply = await get(emulator, `/groups/me/groups/${enc(id)}`, token['erin'])
      expect(reply.status).toBe(404)
      expect(reply.headers['content-type']).toBe('application/json; charset=utf-8')
      expect(reply.json).toEqual(NOT_FOUND_BODY)
    }
  })

  it('finds an id with %2F only when the client encodes it as one segment', async () => {
    expect((await get(emulator, `/groups/me/groups/${enc(SCHOOL_GROUP_ID)}`, token['carol'])).status).toBe(200)
    // Sent unencoded, %2F decodes to "/" and names another (unknown) group.
    expect((await get(emulator, `/groups/me/groups/${SCHOOL_GROUP_ID}`, token['carol'])).status).toBe(404)
  })
})

describe('GET groups/{groupid}', () => {
  it('shows a public group without a token', async () => {
    const reply = await get(emulator, `/groups/groups/${enc(PUBLIC_ADHOC_GROUP_ID)}`)
    expect(reply.status).toBe(200)
    expect(reply.json).toMatchObject({ id: PUBLIC_ADHOC_GROUP_ID, type: 'voot:ad-hoc', public: true })
  })

  it('shows a non-public group to a member only; others get 404', async () => {
    expect((await get(emulator, `/groups/groups/${enc(ADHOC_GROUP_ID)}`, token['bob'])).json).toMatchObject({ id: ADHOC_GROUP_ID })
    expect((await get(emulator, `/groups/groups/${enc(ADHOC_GROUP_ID)}`, token['erin'])).status).toBe(404)
    expect((await get(emulator, `/groups/groups/${enc(ADHOC_GROUP_ID)}`)).status).toBe(404)
    expect((await get(emulator, `/groups/groups/${enc('fc:adhoc:unknown')}`, token['bob'])).json).toEqual(NOT_FOUND_BODY)
  })

  it('shows a group whose only membership is inactive to that member', async () => {
    expect((await get(emulator, `/groups/groups/${enc(MAT1100)}`, token['bob'])).status).toBe(200)
  })
})

describe('GET groups/{groupid}/members', () => {
  it('lists active members as {name, membership}, without user ids', async () => {
    const reply = await get(emulator, `/groups/groups/${enc(ADHOC_GROUP_ID)}/members`, token['bob'])
    expect(reply.status).toBe(200)
    expect(reply.json).toEqual([
      { name: 'Alice Hansen', membership: { basic: 'owner', displayName: { nb: 'Eier', en: 'Owner' } } },
      { name: 'Bob Nilsen', membership: { basic: 'member', displayName: { nb: 'Medlem', en: 'Member' } } },
    ])
    expect(reply.text).not.toMatch(/"(?:id|userId|email)"|alice@|bob@/)
  })

  it('lists inactive members only with showAll=true', async () => {
    expect((await get(emulator, `/groups/groups/${enc(MAT1100)}/members`, token['bob'])).json).toEqual([])
    const all = await get(emulator, `/groups/groups/${enc(MAT1100)}/members?showAll=true`, token['bob'])
    expect(all.json).toEqual([{ name: 'Bob Nilsen', membership: expect.objectContaining({ active: false }) }])
  })

  it('answers [] for fc:org, whose members are not listed', async () => {
    const reply = await get(emulator, `/groups/groups/${enc(ORG_ID)}/members`, token['alice'])
    expect(reply.status).toBe(200)
    expect(reply.json).toEqual([])
  })

  it('lists a public group without a token and hides a non-public one (404)', async () => {
    expect((await get(emulator, `/groups/groups/${enc(PUBLIC_ADHOC_GROUP_ID)}/members`)).json).toEqual([
      { name: 'Alice Hansen', membership: expect.objectContaining({ basic: 'owner' }) },
    ])
    expect((await get(emulator, `/groups/groups/${enc(ADHOC_GROUP_ID)}/members`)).status).toBe(404)
    expect((await get(emulator, `/groups/groups/${enc(ADHOC_GROUP_ID)}/members`, token['erin'])).status).toBe(404)
  })

  it('lists teacher and pupil of the school class', async () => {
    const reply = await get(emulator, `/groups/groups/${enc(SCHOOL_GROUP_ID)}/members`, token['frank'])
    expect((reply.json as { name: string; membership: { basic: string } }[]).map((m) => [m.name, m.membership.basic])).toEqual([
      ['Carol Berg', 'admin'],
      ['Frank Olsen', 'member'],
    ])
  })
})

describe('GET groups', () => {
  it('lists public groups to an anonymous caller', async () => {
    expect(ids(await get(emulator, '/groups/groups'))).toEqual([PUBLIC_ADHOC_GROUP_ID])
  })

  it("lists public groups plus the caller's own, active or not", async () => {
    const reply = await get(emulator, '/groups/groups', token['bob'])
    expect(ids(reply)).toEqual([ORG_ID, INF1000, MAT1100, 'fc:fs:fs:prg:example.org:BINF', ADHOC_GROUP_ID, PUBLIC_ADHOC_GROUP_ID])
    expect(reply.text).not.toContain('"membership"')
  })

  it('filters by a case-insensitive substring of displayName (any language) or description', async () => {
    expect(ids(await get(emulator, '/groups/groups?query=SEMINAR'))).toEqual([PUBLIC_ADHOC_GROUP_ID])
    expect(ids(await get(emulator, '/groups/groups?query=information%20security'))).toEqual([PUBLIC_ADHOC_GROUP_ID])
    expect(ids(await get(emulator, '/groups/groups?query=informatics', token['bob']))).toEqual(['fc:fs:fs:prg:example.org:BINF'])
    expect(ids(await get(emulator, '/groups/groups?query=kalkulus', token['bob']))).toEqual([MAT1100])
    expect((await get(emulator, '/groups/groups?query=kalkulus', token['erin'])).json).toEqual([])
    expect(ids(await get(emulator, '/groups/groups?query=', token['erin']))).toEqual([PUBLIC_ADHOC_GROUP_ID])
  })
})

describe('GET grouptypes', () => {
  it("lists every type, including those of the caller's groups, with or without a token", async () => {
    const anonymous = await get(emulator, '/groups/grouptypes')
    expect(anonymous.status).toBe(200)
    const typeIds = (anonymous.json as { id: string; displayName: unknown }[]).map((type) => type.id)
    const mine = (await get(emulator, '/groups/me/groups?showAll=true', token['bob'])).json as { type: string }[]
    for (const group of mine) expect(typeIds).toContain(group.type)
    expect(anonymous.json).toContainEqual({ id: 'fc:org', displayName: { nb: 'Organisasjon', en: 'Organisation' } })
    expect((await get(emulator, '/groups/grouptypes', token['alice'])).json).toEqual(anonymous.json)
  })
})

describe('the v1/ segment after the /groups prefix', () => {
  it.each([
    ['me/groups', 'bob'],
    ['me/groups?showAll=true', 'bob'],
    [`me/groups/${enc(ORG_ID)}`, 'alice'],
    [`groups/${enc(ADHOC_GROUP_ID)}`, 'bob'],
    [`groups/${enc(ADHOC_GROUP_ID)}/members`, 'bob'],
    ['groups?query=seminar', 'erin'],
    ['grouptypes', 'erin'],
    [`me/groups/${enc(ORG_ID)}`, 'erin'],
    [`groups/${enc(ORG_ID)}/logo`, 'alice'],
    [`groups/${enc(ADHOC_GROUP_ID)}/logo`, 'alice'],
  ])('/groups/v1/%s answers as /groups/%s', async (path, user) => {
    const plain = await get(emulator, `/groups/${path}`, token[user])
    const v1 = await get(emulator, `/groups/v1/${path}`, token[user])
    expect(v1.status).toBe(plain.status)
    expect(v1.headers['content-type']).toBe(plain.headers['content-type'])
    expect(v1.text).toBe(plain.text)
  })

  it('is reached through baseUrl, as a client with baseUrl + "/v1" would', async () => {
    const reply = await fetch(`${emulator.baseUrl}/v1/me/groups`, { headers: { authorization: `Bearer ${token['bob']}` } })
    expect(reply.status).toBe(200)
    expect(((await reply.json()) as { id: string }[]).map((group) => group.id)).toContain(ORG_ID)
  })

  it.each(['me/groups', `me/groups/${enc(ORG_ID)}`, `groups/${enc(PUBLIC_ADHOC_GROUP_ID)}`, 'grouptypes'])(
    'no longer serves /v1/groups/%s, which no real deployment has',
    async (path) => {
      const reply = await get(emulator, `/v1/groups/${path}`, token['alice'])
      expect(reply.status).toBe(404)
      expect(reply.json).toEqual(NOT_FOUND_BODY)
    },
  )
})

describe('GET groups/{groupid}/logo', () => {
  it("answers the organisation's logo as a PNG image", async () => {
    const reply = await getBytes(`/groups/groups/${enc(ORG_ID)}/logo`, token['alice'])
    expect(reply.status).toBe(200)
    expect(reply.contentType).toBe('image/png')
    expect(reply.bytes.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))
  })

  it("answers a public group's SVG logo without a token", async () => {
    const reply = await getBytes(`/groups/groups/${enc(PUBLIC_ADHOC_GROUP_ID)}/logo`)
    expect(reply.status).toBe(200)
    expect(reply.contentType).toBe('image/svg+xml')
    expect(reply.bytes.toString('utf8')).toMatch(/^<svg[^>]*>.*<\/svg>$/)
  })

  it('answers 404 JSON for a group without a logo, an unknown group and a group the caller may not see', async () => {
    for (const [id, user] of [
      [ADHOC_GROUP_ID, 'alice'],
      ['fc:org:nowhere.example', 'alice'],
      [ORG_ID, 'erin'],
      [ORG_ID, undefined],
    ] as const) {
      const reply = await get(emulator, `/groups/groups/${enc(id)}/logo`, user === undefined ? undefined : token[user])
      expect(reply.status, `${id} as ${user}`).toBe(404)
      expect(reply.json).toEqual(NOT_FOUND_BODY)
    }
  })

  it('keeps the logo out of every JSON answer', async () => {
    for (const path of [
      '/groups/me/groups',
      `/groups/groups/${enc(ORG_ID)}`,
      '/groups/groups',
      `/groups/groups/${enc(PUBLIC_ADHOC_GROUP_ID)}`,
    ]) {
      const reply = await get(emulator, path, token['alice'])
      expect(reply.status).toBe(200)
      expect(reply.text).not.toContain('logo')
      expect(reply.text).not.toContain('data:image')
    }
  })
})

describe('routing', () => {
  it.each([
    '/groups',
    '/groups/',
    '/groups/me',
    '/groups/me/groups/',
    '/groups/groups/',
    '/groups/groups/x/members/more',
    '/groups/groups/x/owners',
    '/groups/grouptypes/x',
    '/groups/unknown',
    '/v2/groups/grouptypes',
    '/v1/groups/grouptypes',
    '/groups/v1',
    '/groups/v1/v1/grouptypes',
    '/groups/groups/x/logo/more',
  ])('answers 404 JSON to the unknown route %s', async (path) => {
    const reply = await get(emulator, path, token['alice'])
    expect(reply.status).toBe(404)
    expect(reply.headers['content-type']).toBe('application/json; charset=utf-8')
    expect(reply.json).toEqual(NOT_FOUND_BODY)
  })

  it('answers 404 to bad percent-encoding in an id', async () => {
    expect((await get(emulator, '/groups/me/groups/%E0%A4%A', token['alice'])).status).toBe(404)
    expect((await get(emulator, '/groups/groups/%ZZ', token['alice'])).status).toBe(404)
  })

  it.each(['POST', 'PUT', 'DELETE', 'PATCH'])('answers 405 with Allow: GET to %s', async (method) => {
    const reply = await get(emulator, '/groups/me/groups', token['alice'], method)
    expect(reply.status).toBe(405)
    expect(reply.headers['allow']).toBe('GET')
    expect(reply.headers['content-type']).toBe('application/json; charset=utf-8')
  })
})

describe('hostile group ids', () => {
  const hostile = ['a/b', 'a%2Fb', 'ä', 'a?b#c', 'a b+c', '%', 'x:y:%41']
  let hostileEmulator: Emulator

  beforeAll(async () => {
    const data: EmulatorData = {
      groups: hostile.map((id) => ({ id, displayName: `Group ${id}`, type: 'voot:ad-hoc' })),
      groupTypes: [{ id: 'voot:ad-hoc', displayName: 'Ad-hoc group' }],
      users: [
        {
          id: 'h',
          name: 'Hostile Holder',
          memberships: hostile.map((id) => ({ groupId: id, membership: { basic: 'member', displayName: id } })),
        },
        { id: 'nobody', name: 'No Body', memberships: [] },
      ],
      clients: [],
    }
    hostileEmulator = await startEmulator({ data })
  })
  afterAll(async () => {
    await hostileEmulator.close()
  })

  it.each(hostile)('round-trips %j through encodeURIComponent on every id endpoint', async (id) => {
    const h = hostileEmulator.issueToken('h')
    const membership = await get(hostileEmulator, `/groups/me/groups/${enc(id)}`, h)
    expect(membership.status).toBe(200)
    expect(membership.json).toEqual({ basic: 'member', displayName: id })
    expect((await get(hostileEmulator, `/groups/groups/${enc(id)}`, h)).json).toMatchObject({ id })
    expect((await get(hostileEmulator, `/groups/v1/groups/${enc(id)}/members`, h)).json).toEqual([
      { name: 'Hostile Holder', membership: { basic: 'member', displayName: id } },
    ])
    expect((await get(hostileEmulator, `/groups/me/groups/${enc(id)}`, hostileEmulator.issueToken('nobody'))).status).toBe(404)
  })

  it('lists every hostile id intact in me/groups', async () => {
    expect(ids(await get(hostileEmulator, '/groups/me/groups', hostileEmulator.issueToken('h')))).toEqual(hostile)
  })
})

describe('live data', () => {
  it('serves changes to emulator.data on the next request', async () => {
    const erin = emulator.data.users.find((user) => user.id === 'erin')
    expect(erin).toBeDefined()
    erin?.memberships.push({ groupId: PUBLIC_ADHOC_GROUP_ID, membership: { basic: 'member' } })
    try {
      expect(ids(await get(emulator, '/groups/me/groups', token['erin']))).toEqual([PUBLIC_ADHOC_GROUP_ID])
    } finally {
      erin?.memberships.pop()
    }
    expect((await get(emulator, '/groups/me/groups', token['erin'])).json).toEqual([])
  })
})

describe('internal errors', () => {
  it('answers 500 {"message":"Internal server error"} when answering throws', async () => {
    const data = emulator.data as unknown as Record<string, unknown>
    const groups = data['groups']
    data['groups'] = null
    try {
      const reply = await get(emulator, '/groups/me/groups', token['alice'])
      expect(reply.status).toBe(500)
      expect(reply.headers['content-type']).toBe('application/json; charset=utf-8')
      expect(reply.json).toEqual({ message: 'Internal server error' })
    } finally {
      data['groups'] = groups
    }
    expect((await get(emulator, '/groups/me/groups', token['alice'])).status).toBe(200)
  })
})
