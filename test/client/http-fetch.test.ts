// The groups client on the fetch transport (what Workers, Vercel's Edge, Deno and Bun get),
// here on Node's own global fetch against real servers on loopback: the same deadline,
// redirects refused, the byte limit while the body streams, the concurrency bound, and
// every failure an UpstreamError. test/runtimes runs the packed package in those runtimes.
import type { IncomingMessage, ServerResponse } from 'node:http'
import { MockAgent } from 'undici'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { createGroupsClient } from '../../src/client/groups-client.js'
import type { GroupsClient } from '../../src/client/groups-client.js'
import { MAX_CONCURRENT_CALLS } from '../../src/client/transport.js'
import { AbortedError, InvalidOptionError, UpstreamError } from '../../src/errors.js'
import { json, rejectionWithout, startLoopbackServer, type TestServer } from '../support/loopback-http.js'

vi.mock('#transport', () => import('../../src/client/transport-fetch.js'))

const TOKEN = 'FetchT0ken-abc.def_ghi~jkl+mno/pqr='

const cleanups: Array<() => Promise<void>> = []

afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.()
})

const startServer = (handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<TestServer> =>
  startLoopbackServer(handler, cleanups)
const rejection = (promise: Promise<unknown>): Promise<Error> => rejectionWithout(promise, TOKEN)

function clientFor(server: { url: string }, options: { timeout?: number; maxResponseBytes?: number } = {}): GroupsClient {
  const client = createGroupsClient({ baseUrl: `${server.url}/groups`, ...options })
  cleanups.push(() => client.close())
  return client
}

describe('groups client on the fetch transport, over real HTTP', () => {
  it('answers, sends the token and its headers, maps 401, 403, 404 and 429', async () => {
    const server = await startServer((req, res) => {
      if (req.url === '/groups/me/groups')
        return json(res, 200, [{ id: 'fc:org:example.org', displayName: 'Example', membership: { basic: 'admin' } }])
      if (req.url === '/groups/me/groups/fc%3Aorg%3Aother') return json(res, 404, { message: 'Not found' })
      if (req.url === '/groups/grouptypes') return json(res, 401, { message: 'no' })
      if (req.url === '/groups/groups') return json(res, 429, { message: 'slow down' }, { 'retry-after': '7' })
      json(res, 403, { message: 'scope' })
    })
    const client = clientFor(server)
    await expect(client.myGroups(TOKEN)).resolves.toHaveLength(1)
    await expect(client.myMembership(TOKEN, 'fc:org:other')).resolves.toBeNull()
    expect((await rejection(client.groupTypes({ token: TOKEN }))).name).toBe('InvalidTokenError')
    const limited = (await rejection(client.groups({ token: TOKEN }))) as UpstreamError
    expect([limited.code, limited.retryAfter]).toEqual(['ERR_UPSTREAM_RATE_LIMITED', 7])
    expect((await rejection(client.myMembership(TOKEN, 'fc:org:example.org'))).name).toBe('InsufficientScopeError')
    expect(server.requests[0]?.headers.authorization).toBe(`Bearer ${TOKEN}`)
    expect(server.requests[0]?.headers['user-agent']).toMatch(/^voot-guard\//)
  })

  it('a server that never answers -> ERR_UPSTREAM_TIMEOUT within the deadline', async () => {
    const server = await startServer(() => {})
    const client = clientFor(server, { timeout: 300 })
    const started = performance.now()
    const err = (await rejection(client.myMembership(TOKEN, 'fc:org:example.org'))) as UpstreamError
    expect([err.code, err.endpoint]).toEqual(['ERR_UPSTREAM_TIMEOUT', 'me/groups/{groupid}'])
    expect(performance.now() - started).toBeLessThan(300 + 700)
  })

  it('a body that stalls after the headers -> ERR_UPSTREAM_TIMEOUT (the deadline covers the body)', async () => {
    const server = await startServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' })
      res.write('[{"id":"fc:org:exa')
    })
    const client = clientFor(server, { timeout: 300 })
    const started = performance.now()
    expect(((await rejection(client.myGroups(TOKEN))) as UpstreamError).code).toBe('ERR_UPSTREAM_TIMEOUT')
    expect(performance.now() - started).toBeLessThan(300 + 700)
  })

  it('connection refused, or closed before the answer -> ERR_UPSTREAM_NETWORK', async () => {
    const hangUp = await startServer((req) => req.socket.destroy())
    expect(((await rejection(clientFor(hangUp).myGroups(TOKEN))) as UpstreamError).code).toBe('ERR_UPSTREAM_NETWORK')
    const refused = await startServer(() => {})
    await cleanups.pop()?.()
    expect(((await rejection(clientFor(refused).myGroups(TOKEN))) as UpstreamError).code).toBe('ERR_UPSTREAM_NETWORK')
  })

  it('an endless body without Content-Length -> ERR_UPSTREAM_BODY_TOO_LARGE, stopped while it streams', async () => {
    let written = 0
    let closed!: () => void
    const serverSawClose = new Promise<void>((resolve) => (closed = resolve))
    const chunk = Buffer.alloc(16 * 1024, 0x20)
    const server = await startServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' })
      res.write('[')
      res.on('close', closed)
      const pump = (): void => {
        while (!res.destroyed && written < 64 << 20) {
          written += chunk.length
          if (!res.write(chunk)) return void res.once('drain', pump)
        }
      }
      pump()
    })
    const client = clientFor(server, { maxResponseBytes: 64 * 1024 })
    const err = (await rejection(client.members('fc:org:example.org', { token: TOKEN }))) as UpstreamError
    expect([err.code, err.endpoint]).toEqual(['ERR_UPSTREAM_BODY_TOO_LARGE', 'groups/{groupid}/members'])
    await serverSawClose
    expect(written).toBeLessThan(16 << 20)
  })

  it('a declared oversized body, a body that is not JSON, and bad UTF-8 -> 503 errors', async () => {
    const server = await startServer((req, res) => {
      if (req.url === '/groups/grouptypes') return void res.writeHead(200, { 'content-type': 'text/html' }).end('<html>')
      if (req.url === '/groups/groups')
        return void res.writeHead(200, { 'content-type': 'application/json' }).end(Buffer.from([0x5b, 0xff, 0x5d]))
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': 10 << 20 })
      res.write(Buffer.alloc(64 * 1024, 0x20))
    })
    const client = clientFor(server, { maxResponseBytes: 1 << 20 })
    expect(((await rejection(client.myGroups(TOKEN))) as UpstreamError).code).toBe('ERR_UPSTREAM_BODY_TOO_LARGE')
    expect(((await rejection(client.groupTypes())) as UpstreamError).code).toBe('ERR_UPSTREAM_BODY')
    expect(((await rejection(client.groups())) as UpstreamError).code).toBe('ERR_UPSTREAM_BODY')
  })

  it('a redirect -> ERR_UPSTREAM_REDIRECT; the target receives no request', async () => {
    const target = await startServer((_req, res) => json(res, 200, []))
    const server = await startServer((_req, res) => {
      res.writeHead(307, { location: `${target.url}/groups/me/groups` })
      res.end()
    })
    const err = (await rejection(clientFor(server).myGroups(TOKEN))) as UpstreamError
    expect([err.code, err.upstreamStatus]).toEqual(['ERR_UPSTREAM_REDIRECT', 307])
    expect(target.connections).toBe(0)
  })

  it('a caller abort, before or while the body streams -> AbortedError', async () => {
    const server = await startServer((req, res) => {
      if (req.url === '/groups/me/groups') return // hangs
      res.writeHead(200, { 'content-type': 'application/json' })
      res.write('[')
    })
    const client = clientFor(server, { timeout: 5000 })
    expect(await rejection(client.myGroups(TOKEN, { signal: AbortSignal.timeout(100) }))).toBeInstanceOf(AbortedError)
    expect(await rejection(client.groups({ signal: AbortSignal.timeout(100) }))).toBeInstanceOf(AbortedError)
  })

  it(`holds at most ${MAX_CONCURRENT_CALLS} calls in flight; the others wait their turn within their deadline`, async () => {
    let inFlight = 0
    let most = 0
    const held: ServerResponse[] = []
    const server = await startServer((_req, res) => {
      inFlight++
      most = Math.max(most, inFlight)
      res.on('close', () => inFlight--)
      held.push(res)
    })
    const client = clientFor(server, { timeout: 3000 })
    const calls = Array.from({ length: MAX_CONCURRENT_CALLS + 6 }, () => client.myGroups(TOKEN))
    const late = client.myGroups(TOKEN, { signal: AbortSignal.timeout(200) })
    await vi.waitFor(() => expect(held).toHaveLength(MAX_CONCURRENT_CALLS))
    expect(await rejection(late)).toBeInstanceOf(AbortedError)
    while (held.length > 0 || server.requests.length < calls.length) {
      held.shift()?.writeHead(200, { 'content-type': 'application/json' }).end('[]')
      await new Promise((resolve) => setTimeout(resolve, 1))
    }
    await expect(Promise.all(calls)).resolves.toHaveLength(calls.length)
    expect(most).toBe(MAX_CONCURRENT_CALLS)
    expect(server.requests).toHaveLength(calls.length)
  })

  it('close() resolves; a call after it fails as a network error', async () => {
    const server = await startServer((_req, res) => json(res, 200, []))
    const client = createGroupsClient({ baseUrl: `${server.url}/groups` })
    await expect(client.myGroups(TOKEN)).resolves.toEqual([])
    await client.close()
    expect(((await rejection(client.myGroups(TOKEN))) as UpstreamError).code).toBe('ERR_UPSTREAM_NETWORK')
  })

  it('refuses an undici dispatcher at creation, naming the option', () => {
    expect(() => createGroupsClient({ baseUrl: 'https://groups.example.org/groups', dispatcher: new MockAgent() })).toThrow(
      InvalidOptionError,
    )
    expect(() => createGroupsClient({ baseUrl: 'https://groups.example.org/groups', dispatcher: new MockAgent() })).toThrow(/dispatcher/)
  })
})
