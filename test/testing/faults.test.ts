/**
 * Fault injection on the emulator's group endpoints: every fault kind, matching by token,
 * path and times, and close() with answers still hanging.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { ORG_ID, startEmulator, type Emulator } from '../../testing/index.js'

const enc = encodeURIComponent
const JSON_TYPE = 'application/json; charset=utf-8'

let emulator: Emulator
let alice: string
let bob: string

function get(path: string, token = alice, init: RequestInit = {}) {
  return fetch(`${emulator.baseUrl}${path}`, { redirect: 'manual', ...init, headers: { authorization: `Bearer ${token}` } })
}

async function poll(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 5))
}

beforeAll(async () => {
  emulator = await startEmulator()
  alice = emulator.issueToken('alice')
  bob = emulator.issueToken('bob')
})
afterAll(async () => {
  await emulator.close()
})
afterEach(() => {
  emulator.faults.clear()
  emulator.resetLog()
})

describe('fault kinds', () => {
  it('latency: waits, then answers normally', async () => {
    const normal = await (await get('/me/groups')).text()
    emulator.faults.add({ kind: 'latency', ms: 150 })
    const started = performance.now()
    const res = await get('/me/groups')
    expect(await res.text()).toBe(normal)
    expect(performance.now() - started).toBeGreaterThanOrEqual(140)
  })

  it('status: answers that status, with a {"message"} body by default', async () => {
    emulator.faults.add({ kind: 'status', status: 503 })
    const res = await get('/me/groups')
    expect(res.status).toBe(503)
    expect(res.headers.get('content-type')).toBe(JSON_TYPE)
    expect(await res.json()).toEqual({ message: 'Service Unavailable' })
  })

  it('status: with a custom body and headers', async () => {
    emulator.faults.add({ kind: 'status', status: 429, body: '', headers: { 'retry-after': '7' } })
    const res = await get('/me/groups')
    expect(res.status).toBe(429)
    expect(res.headers.get('retry-after')).toBe('7')
    expect(await res.text()).toBe('')
  })

  it('hang: sends no headers; the client gives up; logged with status 0', async () => {
    emulator.faults.add({ kind: 'hang' })
    await expect(get('/me/groups', alice, { signal: AbortSignal.timeout(100) })).rejects.toThrow()
    expect(emulator.requests).toEqual([expect.objectContaining({ path: '/groups/me/groups', status: 0, user: 'alice' })])
  })

  it('slow-body: sends headers at once and trickles the normal body', async () => {
    const normal = await (await get(`/me/groups/${enc(ORG_ID)}`)).text()
    expect(normal.length).toBeGreaterThan(100)
    emulator.faults.add({ kind: 'slow-body', bytesPerSecond: normal.length * 4 }) // about 250 ms
    const res = await get(`/me/groups/${enc(ORG_ID)}`)
    const headersAt = performance.now()
    expect(res.status).toBe(200)
    expect(await res.text()).toBe(normal)
    expect(performance.now() - headersAt).toBeGreaterThanOrEqual(150)
  })

  it('reset: the connection is reset before any answer; logged with status 0', async () => {
    emulator.faults.add({ kind: 'reset' })
    await expect(get('/me/groups')).rejects.toThrow()
    expect(emulator.requests.map((entry) => entry.status)).toEqual([0])
  })

  it('reset-mid-body: headers and part of the body arrive, then the connection ends', async () => {
    emulator.faults.add({ kind: 'reset-mid-body' })
    const res = await get('/me/groups')
    expect(res.status).toBe(200)
    expect(Number(res.headers.get('content-length'))).toBeGreaterThan(0)
    await expect(res.text()).rejects.toThrow()
  })

  it('invalid-json: 200 application/json that does not parse', async () => {
    emulator.faults.add({ kind: 'invalid-json' })
    const res = await get('/me/groups')
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe(JSON_TYPE)
    const text = await res.text()
    expect(() => JSON.parse(text)).toThrow(SyntaxError)
  })

  it('wrong-shape: an object where an array is due, and an array where an object is due', async () => {
    emulator.faults.add({ kind: 'wrong-shape' })
    const list = (await (await get('/me/groups')).json()) as unknown
    expect(Array.isArray(list)).toBe(false)
    expect(list).toEqual({ items: expect.any(Array) })
    const membership = (await (await get(`/me/groups/${enc(ORG_ID)}`)).json()) as unknown
    expect(Array.isArray(membership)).toBe(true)
    const notMember = await get(`/me/groups/${enc(ORG_ID)}`, emulator.issueToken('erin'))
    expect(notMember.status).toBe(200)
    expect(await notMember.json()).toEqual([])
  })

  it('non-json: 200 with an HTML page', async () => {
    emulator.faults.add({ kind: 'non-json' })
    const res = await get('/me/groups')
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toMatch(/^text\/html/)
    expect(await res.text()).toMatch(/^<!DOCTYPE html>/)
  })

  it('oversized: streams a valid JSON array of exactly that many bytes, without Content-Length', async () => {
    const bytes = 3 * 1024 * 1024 + 17
    emulator.faults.add({ kind: 'oversized', bytes })
    const res = await get('/me/groups')
    expect(res.status).toBe(200)
    expect(res.headers.get('content-length')).toBeNull()
    const body = Buffer.from(await res.arrayBuffer())
    expect(body.length).toBe(bytes)
    const parsed = JSON.parse(body.toString('utf8')) as { id: string }[]
    expect(parsed.length).toBeGreaterThan(1000)
    expect(parsed[0]?.id).toMatch(/^fc:adhoc:/)
  })

  it('oversized: stops streaming when the client gives up', async () => {
    emulator.faults.add({ kind: 'oversized', bytes: 512 * 1024 * 1024 })
    const controller = new AbortController()
    const res = await get('/me/groups', alice, { signal: controller.signal })
    const reader = res.body!.getReader()
    await reader.read()
    controller.abort()
    await expect(reader.read()).rejects.toThrow()
    // The emulator still answers other requests promptly.
    expect((await get('/grouptypes')).status).toBe(200)
  })

  it.each([
    [{ kind: 'redirect', location: 'https://elsewhere.example/groups/me/groups' } as const, 302],
    [{ kind: 'redirect', location: '/groups/v1/me/groups', status: 307 } as const, 307],
  ])('redirect: %j', async (fault, status) => {
    emulator.faults.add(fault)
    const res = await get('/me/groups')
    expect(res.status).toBe(status)
    expect(res.headers.get('location')).toBe(fault.location)
  })

  it('partial: me/groups leaves out the ids, me/groups/{id} still knows them', async () => {
    emulator.faults.add({ kind: 'partial', omit: [ORG_ID] }, { times: 1 })
    // A partial fault aims at me/groups only: this request does not use it up.
    expect((await get(`/me/groups/${enc(ORG_ID)}`)).status).toBe(200)
    const partial = (await (await get('/me/groups')).json()) as { id: string }[]
    expect(partial.length).toBeGreaterThan(0)
    expect(partial.map((group) => group.id)).not.toContain(ORG_ID)
    expect(((await (await get('/me/groups')).json()) as { id: string }[]).map((group) => group.id)).toContain(ORG_ID)
  })
})

describe('matching', () => {
  it("by token: only that token's requests", async () => {
    emulator.faults.add({ kind: 'status', status: 500 }, { token: alice })
    expect((await get('/me/groups', alice)).status).toBe(500)
    expect((await get('/me/groups', bob)).status).toBe(200)
  })

  it('by path: a string matches the pathname as sent or decoded, never the query', async () => {
    emulator.faults.add({ kind: 'status', status: 502 }, { path: `/groups/me/groups/${ORG_ID}` })
    emulator.faults.add({ kind: 'status', status: 504 }, { path: '/groups/me/groups' })
    expect((await get(`/me/groups/${enc(ORG_ID)}`)).status).toBe(502)
    expect((await get('/me/groups?showAll=true')).status).toBe(504)
    expect((await get('/grouptypes')).status).toBe(200)
    expect((await fetch(`${emulator.baseUrl}/v1/me/groups`, { headers: { authorization: `Bearer ${alice}` } })).status).toBe(200)
  })

  it('by path: a RegExp', async () => {
    emulator.faults.add({ kind: 'status', status: 503 }, { path: /\/members$/g })
    expect((await get(`/groups/${enc(ORG_ID)}/members`)).status).toBe(503)
    expect((await get(`/groups/${enc(ORG_ID)}/members`)).status).toBe(503)
    expect((await get(`/groups/${enc(ORG_ID)}`)).status).toBe(200)
  })

  it('times: the fault goes away after that many uses; the oldest matching fault wins', async () => {
    emulator.faults.add({ kind: 'status', status: 500 }, { times: 2 })
    emulator.faults.add({ kind: 'status', status: 502 }, { times: 1 })
    const statuses = []
    for (let i = 0; i < 4; i++) statuses.push((await get('/me/groups')).status)
    expect(statuses).toEqual([500, 500, 502, 200])
  })

  it('remove and clear', async () => {
    const id = emulator.faults.add({ kind: 'status', status: 500 })
    emulator.faults.remove(id)
    expect((await get('/me/groups')).status).toBe(200)
    emulator.faults.add({ kind: 'status', status: 500 })
    emulator.faults.add({ kind: 'reset' })
    emulator.faults.clear()
    expect((await get('/me/groups')).status).toBe(200)
  })

  it('applies to group endpoints only, not to the authorization server', async () => {
    emulator.faults.add({ kind: 'status', status: 500 })
    expect((await fetch(`${emulator.authUrl}/no-such-page`)).status).toBe(404)
    expect((await get('/grouptypes')).status).toBe(500)
  })

  it('logs and counts faulted requests like any other', async () => {
    emulator.faults.add({ kind: 'status', status: 503 }, { times: 1 })
    await get('/me/groups')
    await get('/me/groups')
    expect(emulator.count('/groups/me/groups')).toBe(2)
    expect(emulator.requests.map((entry) => entry.status)).toEqual([503, 200])
  })

  it.each([
    [{ kind: 'latency', ms: -1 }, /fault\.ms/],
    [{ kind: 'status', status: 99 }, /fault\.status/],
    [{ kind: 'slow-body', bytesPerSecond: 0 }, /fault\.bytesPerSecond/],
    [{ kind: 'oversized', bytes: 1.5 }, /fault\.bytes/],
    [{ kind: 'redirect', location: '/x', status: 303 }, /fault\.status/],
    [{ kind: 'partial', omit: 'x' }, /fault\.omit/],
    [{ kind: 'explode' }, /unknown fault kind "explode"/],
  ])('refuses the invalid fault %j', (fault, message) => {
    expect(() => emulator.faults.add(fault as never)).toThrow(message)
  })

  it('refuses invalid match options', () => {
    expect(() => emulator.faults.add({ kind: 'hang' }, { times: 0 })).toThrow(/match\.times/)
    expect(() => emulator.faults.add({ kind: 'hang' }, { token: '' })).toThrow(/match\.token/)
    expect(() => emulator.faults.add({ kind: 'hang' }, { path: 42 as never })).toThrow(/match\.path/)
  })
})

describe('options.latency', () => {
  it('delays every group-endpoint answer', async () => {
    const slow = await startEmulator({ latency: 120 })
    try {
      const started = performance.now()
      const res = await fetch(`${slow.baseUrl}/grouptypes`)
      expect(res.status).toBe(200)
      await res.text()
      expect(performance.now() - started).toBeGreaterThanOrEqual(110)
    } finally {
      await slow.close()
    }
  })
})

describe('close()', () => {
  it('destroys hanging, slow and delayed answers and resolves', async () => {
    const closing = await startEmulator()
    const token = closing.issueToken('alice')
    closing.faults.add({ kind: 'hang' }, { path: '/groups/me/groups' })
    closing.faults.add({ kind: 'slow-body', bytesPerSecond: 1 }, { path: '/groups/grouptypes' })
    closing.faults.add({ kind: 'latency', ms: 60_000 }, { path: '/groups/groups' })
    const headers = { authorization: `Bearer ${token}` }
    // Settle at once, so no rejection is ever unhandled while close() runs.
    const outcome = (request: Promise<unknown>) =>
      request.then(
        () => 'answered',
        () => 'failed',
      )
    const hanging = outcome(fetch(`${closing.baseUrl}/me/groups`, { headers }))
    const slow = outcome(fetch(`${closing.baseUrl}/grouptypes`, { headers }).then((res) => res.text()))
    const delayed = outcome(fetch(`${closing.baseUrl}/groups`, { headers }))
    await poll(() => closing.count() === 3)
    await closing.close()
    expect(await Promise.all([hanging, slow, delayed])).toEqual(['failed', 'failed', 'failed'])
    expect(closing.requests.find((entry) => entry.path === '/groups/me/groups')?.status).toBe(0)
    await closing.close() // a second call is harmless
  })
})
