// Response semantics of the groups client against undici's MockAgent: status mapping, body
// problems, tolerant parsing, group id encoding, token and option validation.
import { inspect } from 'node:util'
import { MockAgent } from 'undici'
import type { MockInterceptor } from 'undici/types/mock-interceptor.js'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createGroupsClient } from '../../src/client/groups-client.js'
import type { GroupsClient } from '../../src/client/groups-client.js'
import {
  AbortedError,
  InsufficientScopeError,
  InvalidArgumentError,
  InvalidGroupIdError,
  InvalidOptionError,
  InvalidTokenError,
  TokenMalformedError,
  UpstreamError,
} from '../../src/errors.js'
import { VERSION } from '../../src/version.js'

const ORIGIN = 'https://groups.example.org'
const BASE_URL = `${ORIGIN}/groups`
const TOKEN = 'S3cret-Token.value_~+/=='
const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8' }

let agent: MockAgent
let client: GroupsClient
let seen: MockInterceptor.MockResponseCallbackOptions[]

beforeEach(() => {
  agent = new MockAgent()
  agent.disableNetConnect()
  client = createGroupsClient({ baseUrl: BASE_URL, dispatcher: agent })
  seen = []
})

afterEach(async () => {
  await client.close()
  await agent.close()
})

/** Answers the next request (any path) and records it in `seen`. */
function answer(status: number, body: string | Buffer = '', headers: Record<string, string> = JSON_HEADERS): void {
  agent
    .get(ORIGIN)
    .intercept({ path: () => true, method: 'GET' })
    .reply((request) => {
      seen.push(request)
      return { statusCode: status, data: body, responseOptions: { headers } }
    })
}

function answerJson(value: unknown, status = 200): void {
  answer(status, JSON.stringify(value))
}

async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise
  } catch (err) {
    expect(err).toBeInstanceOf(Error)
    assertNoToken(err)
    return err as Error
  }
  throw new Error('expected the call to reject')
}

async function upstreamRejection(promise: Promise<unknown>): Promise<UpstreamError> {
  const err = await rejection(promise)
  expect(err).toBeInstanceOf(UpstreamError)
  return err as UpstreamError
}

function assertNoToken(err: unknown, token = TOKEN): void {
  const e = err as Error
  for (const text of [e.message, e.stack ?? '', JSON.stringify(err), inspect(err, { depth: 20, showHidden: true })]) {
    expect(text).not.toContain(token)
  }
}

function header(request: MockInterceptor.MockResponseCallbackOptions, name: string): string | undefined {
  const headers = request.headers as Record<string, string> | undefined
  const key = Object.keys(headers ?? {}).find((k) => k.toLowerCase() === name)
  return key === undefined ? undefined : headers?.[key]
}

describe('requests', () => {
  it('sends GET me/groups with the bearer token, Accept and User-Agent', async () => {
    answerJson([])
    await expect(client.myGroups(TOKEN)).resolves.toEqual([])
    expect(seen).toHaveLength(1)
    const [request] = seen
    expect(request?.method).toBe('GET')
    expect(request?.path).toBe('/groups/me/groups')
    expect(header(request!, 'authorization')).toBe(`Bearer ${TOKEN}`)
    expect(header(request!, 'accept')).toBe('application/json')
    expect(header(request!, 'user-agent')).toBe(`voot-guard/${VERSION}`)
  })

  it('uses a custom User-Agent', async () => {
    const custom = createGroupsClient({ baseUrl: BASE_URL, dispatcher: agent, userAgent: 'my-app/2.0 (ops@example.org)' })
    answerJson([])
    await custom.groupTypes()
    expect(header(seen[0]!, 'user-agent')).toBe('my-app/2.0 (ops@example.org)')
  })

  it('adds showAll=true only when asked', async () => {
    answerJson([])
    answerJson([])
    answerJson([])
    await client.myGroups(TOKEN, { showAll: true })
    await client.myGroups(TOKEN, { showAll: false })
    await client.members('fc:org:example.org', { showAll: true })
    expect(seen.map((r) => r.path)).toEqual([
      '/groups/me/groups?showAll=true',
      '/groups/me/groups',
      '/groups/groups/fc%3Aorg%3Aexample.org/members?showAll=true',
    ])
  })

  it('sends no Authorization header when no token is given', async () => {
    answerJson({ id: 'fc:org:example.org', displayName: 'Example' })
    answerJson([])
    answerJson([])
    answerJson([])
    await client.group('fc:org:example.org')
    await client.members('fc:org:example.org')
    await client.groups()
    await client.groupTypes()
    expect(seen).toHaveLength(4)
    for (const request of seen) expect(header(request, 'authorization')).toBeUndefined()
  })

  it('sends the token on the optional-token endpoints when given', async () => {
    answerJson({ id: 'x', displayName: 'X' })
    answerJson([])
    answerJson([])
    answerJson([])
    await client.group('x', { token: TOKEN })
    await client.members('x', { token: TOKEN })
    await client.groups({ token: TOKEN })
    await client.groupTypes({ token: TOKEN })
    expect(seen.map((r) => header(r, 'authorization'))).toEqual(Array(4).fill(`Bearer ${TOKEN}`))
    expect(seen.map((r) => r.path)).toEqual(['/groups/groups/x', '/groups/groups/x/members', '/groups/groups', '/groups/grouptypes'])
  })

  it('encodes the groups query as one query parameter and omits an empty one', async () => {
    answerJson([])
    answerJson([])
    await client.groups({ query: 'a b&c=d#e/ä' })
    await client.groups({ query: '' })
    expect(seen.map((r) => r.path)).toEqual(['/groups/groups?query=a%20b%26c%3Dd%23e%2F%C3%A4', '/groups/groups'])
  })

  it('refuses a query that is not a string or not well-formed Unicode, before any request', async () => {
    await expect(client.groups({ query: 42 as unknown as string })).rejects.toBeInstanceOf(InvalidArgumentError)
    await expect(client.groups({ query: 'x\uD800' })).rejects.toBeInstanceOf(InvalidArgumentError)
    expect(seen).toHaveLength(0)
  })

  it('tolerates a trailing slash on baseUrl and works at the root and under /v1', async () => {
    const slash = createGroupsClient({ baseUrl: `${BASE_URL}//`, dispatcher: agent })
    const v1 = createGroupsClient({ baseUrl: `${ORIGIN}/v1/groups/`, dispatcher: agent })
    const root = createGroupsClient({ baseUrl: `${ORIGIN}/`, dispatcher: agent })
    expect(slash.baseUrl).toBe(BASE_URL)
    expect(v1.baseUrl).toBe(`${ORIGIN}/v1/groups`)
    expect(root.baseUrl).toBe(ORIGIN)
    answerJson([])
    answerJson([])
    answerJson([])
    await slash.myGroups(TOKEN)
    await v1.myGroups(TOKEN)
    await root.myGroups(TOKEN)
    expect(seen.map((r) => r.path)).toEqual(['/groups/me/groups', '/v1/groups/me/groups', '/me/groups'])
  })
})

describe('hostile group ids', () => {
  const safe = ['a/b', 'a?b#c', '50%', 'ä', '.a', 'fc:gogroup:example.org:u:NO123:4a%2F3:2026-08-01:2027-06-30', 'x'.repeat(1024)]
  const unsafe = ['..', '.', '%2e%2E', '.%2e', '', 'a\r\nb', 'a\nb', 'x'.repeat(1025), 'lone\uD800']
  const endpoints = [
    { name: 'myMembership', prefix: '/groups/me/groups/', suffix: '', call: (id: string) => client.myMembership(TOKEN, id) },
    { name: 'group', prefix: '/groups/groups/', suffix: '', call: (id: string) => client.group(id) },
    { name: 'members', prefix: '/groups/groups/', suffix: '/members', call: (id: string) => client.members(id) },
  ]

  for (const endpoint of endpoints) {
    it(`${endpoint.name}: sends each safe id as exactly one encoded path segment`, async () => {
      for (const id of safe) {
        answerJson(endpoint.name === 'members' ? [] : { id, basic: 'member' })
        await endpoint.call(id)
        const path = seen.at(-1)!.path
        expect(path.startsWith(endpoint.prefix)).toBe(true)
        expect(path.endsWith(endpoint.suffix)).toBe(true)
        const segment = path.slice(endpoint.prefix.length, path.length - endpoint.suffix.length)
        expect(segment).not.toMatch(/[/?#]/)
        expect(decodeURIComponent(segment)).toBe(id)
      }
      expect(seen).toHaveLength(safe.length)
    })

    it(`${endpoint.name}: refuses each unsafe id before any request`, async () => {
      for (const id of unsafe) {
        await expect(endpoint.call(id)).rejects.toBeInstanceOf(InvalidGroupIdError)
      }
      await expect(endpoint.call(42 as unknown as string)).rejects.toBeInstanceOf(InvalidGroupIdError)
      expect(seen).toHaveLength(0)
    })
  }
})

describe('token validation', () => {
  const malformed = ['', 'two words', 'tok\r\nX-Evil: 1', 'tøken', '=abc', 'abc=def', 'a'.repeat(4097), 'tab\there']

  it('refuses a malformed token before any request, without echoing it', async () => {
    for (const token of malformed) {
      for (const call of [
        () => client.myGroups(token),
        () => client.myMembership(token, 'x'),
        () => client.group('x', { token }),
        () => client.members('x', { token }),
        () => client.groups({ token }),
        () => client.groupTypes({ token }),
      ]) {
        const err = await rejection(call())
        expect(err).toBeInstanceOf(TokenMalformedError)
        if (token.length > 3) assertNoToken(err, token)
      }
    }
    for (const token of [undefined, null, 42]) {
      await expect(client.myGroups(token as unknown as string)).rejects.toBeInstanceOf(TokenMalformedError)
    }
    expect(seen).toHaveLength(0)
  })

  it('accepts every b64token character and 4096 characters', async () => {
    answerJson([])
    answerJson([])
    await client.myGroups('AZaz09-._~+/==')
    await client.myGroups('a'.repeat(4096))
    expect(seen).toHaveLength(2)
  })
})

describe('status mapping', () => {
  const calls: Array<{ endpoint: string; call: () => Promise<unknown>; me: boolean }> = [
    { endpoint: 'me/groups', call: () => client.myGroups(TOKEN), me: true },
    { endpoint: 'me/groups/{groupid}', call: () => client.myMembership(TOKEN, 'fc:org:example.org'), me: true },
    { endpoint: 'groups/{groupid}', call: () => client.group('fc:org:example.org', { token: TOKEN }), me: false },
    { endpoint: 'groups/{groupid}/members', call: () => client.members('fc:org:example.org', { token: TOKEN }), me: false },
    { endpoint: 'groups', call: () => client.groups({ token: TOKEN, query: 'x' }), me: false },
    { endpoint: 'grouptypes', call: () => client.groupTypes({ token: TOKEN }), me: false },
  ]

  for (const { endpoint, call, me } of calls) {
    it(`${endpoint}: 401 -> InvalidTokenError`, async () => {
      answerJson({ message: `Token ${TOKEN} is invalid` }, 401)
      const err = await rejection(call())
      expect(err).toBeInstanceOf(InvalidTokenError)
    })

    it(`${endpoint}: 403 -> InsufficientScopeError without the upstream message`, async () => {
      answerJson({ message: `This resource requires a personal token, not ${TOKEN}` }, 403)
      const err = await rejection(call())
      expect(err).toBeInstanceOf(InsufficientScopeError)
      expect(err.message).not.toContain('This resource requires')
      if (me) expect(err.message).toContain('requires a personal token with the groups scope')
    })

    it(`${endpoint}: 5xx and other statuses -> ERR_UPSTREAM_STATUS with upstreamStatus and endpoint`, async () => {
      for (const status of [500, 502, 503, 204, 201, 400, 418]) {
        answer(status, status === 500 ? '{"message":"Internal server error"}' : '')
        const err = await upstreamRejection(call())
        expect(err.code).toBe('ERR_UPSTREAM_STATUS')
        expect(err.upstreamStatus).toBe(status)
        expect(err.endpoint).toBe(endpoint)
        expect(err.status).toBe(503)
      }
    })

    it(`${endpoint}: 3xx -> ERR_UPSTREAM_REDIRECT, never followed`, async () => {
      for (const status of [301, 302, 303, 307, 308]) {
        answer(status, '', { location: `${ORIGIN}/elsewhere` })
        const err = await upstreamRejection(call())
        expect(err.code).toBe('ERR_UPSTREAM_REDIRECT')
        expect(err.upstreamStatus).toBe(status)
        expect(err.endpoint).toBe(endpoint)
      }
      expect(seen).toHaveLength(5)
      expect(seen.some((r) => r.path.includes('elsewhere'))).toBe(false)
    })

    it(`${endpoint}: 429 -> ERR_UPSTREAM_RATE_LIMITED with retryAfter`, async () => {
      answer(429, '', { 'retry-after': '17' })
      const err = await upstreamRejection(call())
      expect(err.code).toBe('ERR_UPSTREAM_RATE_LIMITED')
      expect(err.retryAfter).toBe(17)
      expect(err.headers['retry-after']).toBe('17')
      expect(err.upstreamStatus).toBe(429)
      expect(err.endpoint).toBe(endpoint)
    })

    it(`${endpoint}: network error -> ERR_UPSTREAM_NETWORK with cause`, async () => {
      const cause = Object.assign(new Error('connect ECONNREFUSED 10.0.0.1:443'), { code: 'ECONNREFUSED' })
      agent
        .get(ORIGIN)
        .intercept({ path: () => true, method: 'GET' })
        .replyWithError(cause)
      const err = await upstreamRejection(call())
      expect(err.code).toBe('ERR_UPSTREAM_NETWORK')
      expect(err.endpoint).toBe(endpoint)
      expect(err.cause).toBe(cause)
    })
  }

  it('429 Retry-After as an HTTP-date, clamped, or missing', async () => {
    const inAMinute = new Date(Date.now() + 60_000).toUTCString()
    answer(429, '', { 'retry-after': inAMinute })
    answer(429, '', { 'retry-after': '86400' })
    answer(429, '', { 'retry-after': 'soon' })
    answer(429, '')
    const errors = [
      await upstreamRejection(client.myGroups(TOKEN)),
      await upstreamRejection(client.myGroups(TOKEN)),
      await upstreamRejection(client.myGroups(TOKEN)),
      await upstreamRejection(client.myGroups(TOKEN)),
    ]
    expect(errors[0]?.retryAfter).toBeGreaterThanOrEqual(58)
    expect(errors[0]?.retryAfter).toBeLessThanOrEqual(61)
    expect(errors[1]?.retryAfter).toBe(3600)
    expect(errors[2]?.retryAfter).toBeUndefined()
    expect(errors[3]?.retryAfter).toBeUndefined()
    expect(errors[3]?.headers['retry-after']).toBeUndefined()
  })

  it('404 on me/groups/{id} and groups/{id} -> null', async () => {
    answerJson({ message: 'Requested resource was not found' }, 404)
    answerJson({ message: 'Requested resource was not found' }, 404)
    await expect(client.myMembership(TOKEN, 'fc:org:example.org')).resolves.toBeNull()
    await expect(client.group('fc:org:example.org')).resolves.toBeNull()
  })

  it('404 on me/groups, members, groups and grouptypes is a failure, never an empty list', async () => {
    const calls404 = [
      ['me/groups', () => client.myGroups(TOKEN)],
      ['groups/{groupid}/members', () => client.members('x')],
      ['groups', () => client.groups()],
      ['grouptypes', () => client.groupTypes()],
    ] as const
    for (const [endpoint, call] of calls404) {
      answerJson({ message: 'Requested resource was not found' }, 404)
      const err = await upstreamRejection(call())
      expect(err.code).toBe('ERR_UPSTREAM_STATUS')
      expect(err.upstreamStatus).toBe(404)
      expect(err.endpoint).toBe(endpoint)
    }
  })

  it('withholds a network error that contains the token (MockAgent puts request headers into its message)', async () => {
    // An interceptor that matches all but the headers: MockNotMatchedError lists the request headers.
    agent
      .get(ORIGIN)
      .intercept({ path: '/groups/me/groups', method: 'GET', headers: { authorization: 'Bearer other' } })
      .reply(200, '[]', { headers: JSON_HEADERS })
    const err = await upstreamRejection(client.myGroups(TOKEN))
    expect(err.code).toBe('ERR_UPSTREAM_NETWORK')
    expect(err.cause).toBeInstanceOf(Error)
    expect((err.cause as Error).message).toContain('withheld')
  })

  it('a caller signal that already fired -> AbortedError, no request', async () => {
    answerJson([])
    const err = await rejection(client.myGroups(TOKEN, { signal: AbortSignal.abort() }))
    expect(err).toBeInstanceOf(AbortedError)
    expect(seen).toHaveLength(0)
  })
})

describe('bodies', () => {
  it('accepts application/json and */*+json with parameters, and a UTF-8 BOM', async () => {
    for (const type of [
      'application/json',
      'Application/JSON; charset=UTF-8',
      'application/vnd.voot+json',
      'application/problem+json ; x=y',
    ]) {
      answer(200, '[]', { 'content-type': type })
      await expect(client.myGroups(TOKEN)).resolves.toEqual([])
    }
    answer(200, Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('[]')]))
    await expect(client.myGroups(TOKEN)).resolves.toEqual([])
  })

  const bad: Array<[string, string | Buffer, Record<string, string>]> = [
    ['text/html', '[]', { 'content-type': 'text/html' }],
    ['text/json', '[]', { 'content-type': 'text/json' }],
    ['no content type', '[]', {}],
    ['application/jsonp', '[]', { 'content-type': 'application/jsonp' }],
    ['gzip encoding', '[]', { 'content-type': 'application/json', 'content-encoding': 'gzip' }],
    ['invalid JSON', '[{"id":', JSON_HEADERS],
    ['empty body', '', JSON_HEADERS],
    ['invalid UTF-8', Buffer.from([0x5b, 0x22, 0xff, 0x22, 0x5d]), JSON_HEADERS],
    ['an object instead of an array', '{"groups":[]}', JSON_HEADERS],
    ['null', 'null', JSON_HEADERS],
    ['a group without id', '[{"displayName":"x"}]', JSON_HEADERS],
    ['a group with an empty id', '[{"id":""}]', JSON_HEADERS],
    ['a group with a numeric id', '[{"id":7}]', JSON_HEADERS],
    ['an element that is not an object', '[{"id":"a"},"b"]', JSON_HEADERS],
    ['a membership of the wrong type', '[{"id":"a","membership":42}]', JSON_HEADERS],
  ]
  for (const [what, body, headers] of bad) {
    it(`me/groups with ${what} -> ERR_UPSTREAM_BODY`, async () => {
      answer(200, body, headers)
      const err = await upstreamRejection(client.myGroups(TOKEN))
      expect(err.code).toBe('ERR_UPSTREAM_BODY')
      expect(err.endpoint).toBe('me/groups')
      expect(err.upstreamStatus).toBe(200)
    })
  }

  it('does not quote the body in the error message', async () => {
    answer(200, `[{"id": "${TOKEN}" `)
    const err = await upstreamRejection(client.myGroups(TOKEN))
    expect(err.code).toBe('ERR_UPSTREAM_BODY')
  })

  it('single-object endpoints refuse non-objects', async () => {
    answerJson([{ basic: 'member' }])
    answerJson('member')
    answerJson({ displayName: 'no id' })
    expect((await upstreamRejection(client.myMembership(TOKEN, 'x'))).code).toBe('ERR_UPSTREAM_BODY')
    expect((await upstreamRejection(client.myMembership(TOKEN, 'x'))).code).toBe('ERR_UPSTREAM_BODY')
    const err = await upstreamRejection(client.group('x'))
    expect(err.code).toBe('ERR_UPSTREAM_BODY')
    expect(err.endpoint).toBe('groups/{groupid}')
  })

  it('a Content-Length over maxResponseBytes -> ERR_UPSTREAM_BODY_TOO_LARGE', async () => {
    const small = createGroupsClient({ baseUrl: BASE_URL, dispatcher: agent, maxResponseBytes: 100 })
    answer(200, '[]', { 'content-type': 'application/json', 'content-length': '101' })
    const err = await upstreamRejection(small.myGroups(TOKEN))
    expect(err.code).toBe('ERR_UPSTREAM_BODY_TOO_LARGE')
    expect(err.endpoint).toBe('me/groups')
  })

  it('a body over maxResponseBytes without Content-Length -> ERR_UPSTREAM_BODY_TOO_LARGE; exactly the limit is fine', async () => {
    const small = createGroupsClient({ baseUrl: BASE_URL, dispatcher: agent, maxResponseBytes: 100 })
    const exact = JSON.stringify([{ id: 'x'.repeat(100 - 11) }])
    expect(Buffer.byteLength(exact)).toBe(100)
    answer(200, exact)
    answer(200, JSON.stringify([{ id: 'x'.repeat(100 - 10) }]))
    await expect(small.myGroups(TOKEN)).resolves.toHaveLength(1)
    const err = await upstreamRejection(small.myGroups(TOKEN))
    expect(err.code).toBe('ERR_UPSTREAM_BODY_TOO_LARGE')
  })
})

describe('parsing through the client', () => {
  it('me/groups: translatable names, bare role strings, missing membership, unknown fields', async () => {
    answerJson([
      {
        id: 'fc:org:example.org',
        displayName: { nb: 'Eksempel', en: 'Example' },
        type: 'fc:org',
        membership: { basic: 'admin', affiliation: ['employee'], primaryAffiliation: 'employee' },
        orgType: ['higher_education'],
      },
      { id: 'urn:collab:group:x', displayName: 'X', membership: 'manager' },
      { id: 'fc:adhoc:1' },
    ])
    const groups = await client.myGroups(TOKEN)
    expect(groups).toEqual([
      {
        id: 'fc:org:example.org',
        displayName: { nb: 'Eksempel', en: 'Example' },
        type: 'fc:org',
        membership: { basic: 'admin', affiliation: ['employee'], primaryAffiliation: 'employee' },
        orgType: ['higher_education'],
      },
      { id: 'urn:collab:group:x', displayName: 'X', membership: { basic: 'manager' } },
      { id: 'fc:adhoc:1', displayName: 'fc:adhoc:1', membership: {} },
    ])
  })

  it('me/groups/{id}: a bare membership, the OpenConext shape, a group without membership', async () => {
    answerJson({ basic: 'member', active: true, notAfter: '2027-06-30T00:00:00Z' })
    answerJson({ id: 'urn:collab:group:x', displayName: 'X', membership: { basic: 'admin' } })
    answerJson({ id: 'urn:collab:group:x', displayName: 'X', membership: 'owner' })
    answerJson({ id: 'urn:collab:group:x', displayName: 'X' })
    await expect(client.myMembership(TOKEN, 'x')).resolves.toEqual({ basic: 'member', active: true, notAfter: '2027-06-30T00:00:00Z' })
    await expect(client.myMembership(TOKEN, 'x')).resolves.toEqual({ basic: 'admin' })
    await expect(client.myMembership(TOKEN, 'x')).resolves.toEqual({ basic: 'owner' })
    await expect(client.myMembership(TOKEN, 'x')).resolves.toEqual({})
  })

  it('active that is not a boolean fails closed', async () => {
    answerJson({ basic: 'member', active: 'yes' })
    answerJson([{ id: 'a', membership: { basic: 'member', active: 1 } }])
    await expect(client.myMembership(TOKEN, 'x')).resolves.toEqual({ basic: 'member', active: false })
    await expect(client.myGroups(TOKEN)).resolves.toEqual([{ id: 'a', displayName: 'a', membership: { basic: 'member', active: false } }])
  })

  it('members and grouptypes', async () => {
    answerJson([{ name: 'Alice', membership: { basic: 'admin' } }, { membership: 'member' }, { name: 7 }])
    answerJson([
      { id: 'fc:org', displayName: { en: 'Organisation' } },
      { id: 'voot:ad-hoc', extra: true },
    ])
    await expect(client.members('x')).resolves.toEqual([
      { name: 'Alice', membership: { basic: 'admin' } },
      { name: '', membership: { basic: 'member' } },
      { name: '', membership: {} },
    ])
    await expect(client.groupTypes()).resolves.toEqual([
      { id: 'fc:org', displayName: { en: 'Organisation' } },
      { id: 'voot:ad-hoc', displayName: 'voot:ad-hoc', extra: true },
    ])
  })

  it('drops __proto__, constructor and prototype keys at every depth', async () => {
    answer(
      200,
      '[{"id":"a","__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}},' +
        '"membership":{"basic":"member","__proto__":{"admin":true}},' +
        '"displayName":{"en":"A","__proto__":"x"},' +
        '"extra":{"nested":{"__proto__":{"polluted":true},"ok":1}}}]',
    )
    const [group] = await client.myGroups(TOKEN)
    expect(group).toEqual({ id: 'a', displayName: { en: 'A' }, membership: { basic: 'member' }, extra: { nested: { ok: 1 } } })
    for (const value of [group, group?.membership, group?.displayName, (group?.['extra'] as { nested: object }).nested]) {
      expect(Object.getPrototypeOf(value)).toBe(Object.prototype)
      expect(Object.hasOwn(value as object, '__proto__')).toBe(false)
      expect(Object.hasOwn(value as object, 'constructor')).toBe(false)
    }
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined()
    expect(({} as Record<string, unknown>)['admin']).toBeUndefined()
    // A later merge must not pollute either.
    const merged = Object.assign({}, group, group?.membership)
    expect(Object.getPrototypeOf(merged)).toBe(Object.prototype)
  })
})

describe('options', () => {
  const cases: Array<[string, Record<string, unknown>]> = [
    ['baseUrl', {}],
    ['baseUrl', { baseUrl: '' }],
    ['baseUrl', { baseUrl: 42 }],
    ['baseUrl', { baseUrl: 'groups.example.org/groups' }],
    ['baseUrl', { baseUrl: 'ftp://groups.example.org/groups' }],
    ['baseUrl', { baseUrl: 'file:///etc/passwd' }],
    ['baseUrl', { baseUrl: 'https://user:pass@groups.example.org/groups' }],
    ['baseUrl', { baseUrl: 'https://groups.example.org/groups?x=1' }],
    ['baseUrl', { baseUrl: 'https://groups.example.org/groups#x' }],
    ['timeout', { baseUrl: BASE_URL, timeout: 0 }],
    ['timeout', { baseUrl: BASE_URL, timeout: 1.5 }],
    ['timeout', { baseUrl: BASE_URL, timeout: 600_001 }],
    ['timeout', { baseUrl: BASE_URL, timeout: '5000' }],
    ['timeout', { baseUrl: BASE_URL, timeout: Number.NaN }],
    ['maxResponseBytes', { baseUrl: BASE_URL, maxResponseBytes: 0 }],
    ['maxResponseBytes', { baseUrl: BASE_URL, maxResponseBytes: (64 << 20) + 1 }],
    ['maxResponseBytes', { baseUrl: BASE_URL, maxResponseBytes: Infinity }],
    ['dispatcher', { baseUrl: BASE_URL, dispatcher: {} }],
    ['dispatcher', { baseUrl: BASE_URL, dispatcher: null }],
    ['userAgent', { baseUrl: BASE_URL, userAgent: '' }],
    ['userAgent', { baseUrl: BASE_URL, userAgent: 'x\r\nInjected: 1' }],
    ['userAgent', { baseUrl: BASE_URL, userAgent: ' padded' }],
    ['userAgent', { baseUrl: BASE_URL, userAgent: 'ä' }],
    ['userAgent', { baseUrl: BASE_URL, userAgent: 'x'.repeat(257) }],
  ]
  for (const [option, options] of cases) {
    it(`refuses ${option} in ${inspect(options)}`, () => {
      let thrown: unknown
      try {
        createGroupsClient(options as never)
      } catch (err) {
        thrown = err
      }
      expect(thrown).toBeInstanceOf(InvalidOptionError)
      expect((thrown as InvalidOptionError).option).toBe(option)
      expect((thrown as Error).message).toContain(`options.${option}`)
      expect((thrown as Error).message).not.toContain('pass')
    })
  }

  it('refuses a missing options object', () => {
    expect(() => createGroupsClient(undefined as never)).toThrow(InvalidOptionError)
  })

  it('accepts the bounds and explicit undefined', async () => {
    const edge = createGroupsClient({
      baseUrl: 'http://127.0.0.1:1/groups',
      timeout: 600_000,
      maxResponseBytes: 64 << 20,
      userAgent: undefined,
    })
    expect(edge.baseUrl).toBe('http://127.0.0.1:1/groups')
    await edge.close()
    const low = createGroupsClient({ baseUrl: BASE_URL, dispatcher: agent, timeout: 1, maxResponseBytes: 1 })
    expect(low.baseUrl).toBe(BASE_URL)
  })

  it('close() leaves a caller-supplied dispatcher open', async () => {
    await client.close()
    answerJson([])
    await expect(client.myGroups(TOKEN)).resolves.toEqual([])
  })

  it('close() of a client with its own pool is idempotent', async () => {
    const own = createGroupsClient({ baseUrl: BASE_URL })
    await own.close()
    await own.close()
    const err = await upstreamRejection(own.myGroups(TOKEN))
    expect(err.code).toBe('ERR_UPSTREAM_NETWORK')
  })
})
