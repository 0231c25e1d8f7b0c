// Timing and HTTP behaviour of the groups client against real servers on loopback, with the
// client's own keep-alive pool: deadlines, refused connections, streamed oversized bodies,
// redirects, caller aborts, connection reuse.
import type { IncomingMessage, ServerResponse } from 'node:http'
import { inspect } from 'node:util'
import { Agent, interceptors } from 'undici'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { createGroupsClient } from '../../src/client/groups-client.js'
import type { GroupsClient } from '../../src/client/groups-client.js'
import { AbortedError, UpstreamError } from '../../src/errors.js'
import { json, rejectionWithout, startLoopbackServer, type TestServer } from '../support/loopback-http.js'

const TOKEN = 'HttpT0ken-abc.def_ghi~jkl+mno/pqr='

const cleanups: Array<() => Promise<void>> = []

afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.()
})

const startServer = (handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<TestServer> =>
  startLoopbackServer(handler, cleanups)
const rejection = (promise: Promise<unknown>): Promise<Error> => rejectionWithout(promise, TOKEN)

function clientFor(server: { url: string }, options: { timeout?: number; maxResponseBytes?: number } = {}): GroupsClient {
  const client = createGroupsClient({ baseUrl: `${server.url}/groups`, ...options })
  // Registered after the server, so it runs first (cleanups pop in reverse order).
  cleanups.push(() => client.close())
  return client
}

describe('groups client over real HTTP', () => {
  it('answers and reuses one keep-alive connection, also after error statuses', async () => {
    const server = await startServer((req, res) => {
      if (req.url === '/groups/grouptypes') {
        // The error body arrives late: a client that destroyed it instead of reading it
        // would lose the connection.
        const body = JSON.stringify({ message: 'Internal server error' })
        res.writeHead(500, { 'content-type': 'application/json', 'content-length': body.length })
        res.write(body.slice(0, 5))
        return void setTimeout(() => res.end(body.slice(5)), 30)
      }
      if (req.url === '/groups/groups') return json(res, 429, { message: 'slow down' })
      json(res, 200, [{ id: 'fc:org:example.org', displayName: 'Example', membership: { basic: 'admin' } }])
    })
    const client = clientFor(server)
    // undici waits one event-loop turn before it reuses a socket (for servers that close
    // despite keep-alive); separate requests to a guard are at least that far apart.
    const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))
    await expect(client.myGroups(TOKEN)).resolves.toHaveLength(1)
    await turn()
    expect(((await rejection(client.groupTypes())) as UpstreamError).code).toBe('ERR_UPSTREAM_STATUS')
    await turn()
    expect(((await rejection(client.groups())) as UpstreamError).code).toBe('ERR_UPSTREAM_RATE_LIMITED')
    await turn()
    await expect(client.myGroups(TOKEN)).resolves.toHaveLength(1)
    expect(server.requests.map((r) => r.headers.authorization)).toEqual([`Bearer ${TOKEN}`, undefined, undefined, `Bearer ${TOKEN}`])
    expect(server.connections).toBe(1)
  })

  it('clears its deadline timer when a call settles, on success and on failure', async () => {
    const server = await startServer((req, res) => {
      if (req.url === '/groups/grouptypes') return json(res, 500, { message: 'Internal server error' })
      json(res, 200, [])
    })
    // A distinctive timeout tells the client's deadline timers from undici's own.
    const timeout = 59_999
    const client = clientFor(server, { timeout })
    const started: unknown[] = []
    const cleared = new Set<unknown>()
    const setSpy = vi.spyOn(globalThis, 'setTimeout')
    const clearSpy = vi.spyOn(globalThis, 'clearTimeout')
    try {
      await client.myGroups(TOKEN)
      await client.myGroups(TOKEN, { signal: new AbortController().signal })
      await rejection(client.groupTypes())
      setSpy.mock.calls.forEach((args, i) => {
        if (args[1] === timeout) started.push(setSpy.mock.results[i]?.value)
      })
      for (const [handle] of clearSpy.mock.calls) cleared.add(handle)
    } finally {
      setSpy.mockRestore()
      clearSpy.mockRestore()
    }
    expect(started).toHaveLength(3)
    for (const handle of started) expect(cleared.has(handle)).toBe(true)
  })

  it('a server that never answers -> ERR_UPSTREAM_TIMEOUT within the deadline', async () => {
    const server = await startServer(() => {
      // Never answers.
    })
    const client = clientFor(server, { timeout: 300 })
    const started = performance.now()
    const err = await rejection(client.myMembership(TOKEN, 'fc:org:example.org'))
    const elapsed = performance.now() - started
    expect(err).toBeInstanceOf(UpstreamError)
    expect((err as UpstreamError).code).toBe('ERR_UPSTREAM_TIMEOUT')
    expect((err as UpstreamError).endpoint).toBe('me/groups/{groupid}')
    expect(elapsed).toBeGreaterThanOrEqual(290)
    expect(elapsed).toBeLessThan(300 + 700)
  })

  it('a body that stalls after the headers -> ERR_UPSTREAM_TIMEOUT (the deadline covers the body)', async () => {
    const server = await startServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' })
      res.write('[{"id":"fc:org:exa')
    })
    const client = clientFor(server, { timeout: 300 })
    const started = performance.now()
    const err = await rejection(client.myGroups(TOKEN))
    expect((err as UpstreamError).code).toBe('ERR_UPSTREAM_TIMEOUT')
    expect(performance.now() - started).toBeLessThan(300 + 700)
  })

  it('connection refused -> ERR_UPSTREAM_NETWORK with the cause', async () => {
    const server = await startServer(() => {})
    await server.close()
    const client = clientFor(server)
    const err = await rejection(client.myGroups(TOKEN))
    expect(err).toBeInstanceOf(UpstreamError)
    expect((err as UpstreamError).code).toBe('ERR_UPSTREAM_NETWORK')
    expect((err as UpstreamError).endpoint).toBe('me/groups')
    expect(inspect(err.cause)).toContain('ECONNREFUSED')
  })

  it('a connection closed before the answer -> ERR_UPSTREAM_NETWORK', async () => {
    const server = await startServer((req) => req.socket.destroy())
    const client = clientFor(server)
    const err = await rejection(client.groups({ token: TOKEN }))
    expect((err as UpstreamError).code).toBe('ERR_UPSTREAM_NETWORK')
    expect((err as UpstreamError).endpoint).toBe('groups')
    expect(err.cause).toBeDefined()
  })

  it('an endless body without Content-Length -> ERR_UPSTREAM_BODY_TOO_LARGE, destroyed early', async () => {
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
    const err = await rejection(client.members('fc:org:example.org', { token: TOKEN }))
    expect((err as UpstreamError).code).toBe('ERR_UPSTREAM_BODY_TOO_LARGE')
    expect((err as UpstreamError).endpoint).toBe('groups/{groupid}/members')
    await serverSawClose
    // The client stopped reading long before the server's 64 MiB; socket buffers hold a few MiB at most.
    expect(written).toBeLessThan(16 << 20)
  })

  it('refuses unread bodies (declared too large, not JSON, complete or not) without an uncaught error', async () => {
    const closes: Array<Promise<void>> = []
    const server = await startServer((req, res) => {
      closes.push(new Promise((resolve) => res.on('close', resolve)))
      if (req.url === '/groups/groups') {
        // Complete but never read: the case where undici itself attaches no error listener.
        res.writeHead(200, { 'content-type': 'text/html', 'content-length': 2 })
        return void res.end('[]')
      }
      const type = req.url === '/groups/grouptypes' ? 'text/html' : 'application/json'
      res.writeHead(200, { 'content-type': type, 'content-length': 10 << 20 })
      res.write(Buffer.alloc(64 * 1024, 0x20)) // and then stalls
    })
    const client = clientFor(server, { maxResponseBytes: 1 << 20 })
    const tooLarge = await rejection(client.myGroups(TOKEN))
    expect((tooLarge as UpstreamError).code).toBe('ERR_UPSTREAM_BODY_TOO_LARGE')
    const notJson = await rejection(client.groupTypes())
    expect((notJson as UpstreamError).code).toBe('ERR_UPSTREAM_BODY')
    const complete = await rejection(client.groups())
    expect((complete as UpstreamError).code).toBe('ERR_UPSTREAM_BODY')
    await Promise.all(closes.slice(0, 2))
    // undici reports a destroyed unread body a turn later; an unhandled one would fail the run.
    await new Promise((resolve) => setTimeout(resolve, 20))
  })

  it('a redirect -> ERR_UPSTREAM_REDIRECT; the target receives no request', async () => {
    const target = await startServer((_req, res) => json(res, 200, []))
    const server = await startServer((_req, res) => {
      res.writeHead(302, { location: `${target.url}/groups/me/groups` })
      res.end()
    })
    const client = clientFor(server)
    const err = await rejection(client.myGroups(TOKEN))
    expect((err as UpstreamError).code).toBe('ERR_UPSTREAM_REDIRECT')
    expect((err as UpstreamError).upstreamStatus).toBe(302)
    expect(target.requests).toHaveLength(0)
    expect(target.connections).toBe(0)
  })

  it('a redirect is not followed even by a caller dispatcher composed with the redirect interceptor', async () => {
    const target = await startServer((_req, res) => json(res, 200, []))
    const server = await startServer((_req, res) => {
      res.writeHead(307, { location: `${target.url}/groups/me/groups` })
      res.end()
    })
    const dispatcher = new Agent().compose(interceptors.redirect({ maxRedirections: 3 }))
    cleanups.push(() => dispatcher.close())
    const client = createGroupsClient({ baseUrl: `${server.url}/groups`, dispatcher })
    const err = await rejection(client.myGroups(TOKEN))
    expect((err as UpstreamError).code).toBe('ERR_UPSTREAM_REDIRECT')
    expect(target.requests).toHaveLength(0)
  })

  it('a caller abort -> AbortedError; a concurrent call on the same client still succeeds', async () => {
    const server = await startServer((req, res) => {
      if (req.url === '/groups/me/groups') return // hangs
      setTimeout(() => json(res, 200, { basic: 'member' }), 150)
    })
    const client = clientFor(server, { timeout: 5000 })
    const controller = new AbortController()
    const abandoned = client.myGroups(TOKEN, { signal: controller.signal })
    const other = client.myMembership(TOKEN, 'fc:org:example.org')
    setTimeout(() => controller.abort(new Error('user went away')), 50)
    const started = performance.now()
    const err = await rejection(abandoned)
    expect(err).toBeInstanceOf(AbortedError)
    expect(performance.now() - started).toBeLessThan(1000)
    await expect(other).resolves.toEqual({ basic: 'member' })
  })

  it('a caller abort while the body streams -> AbortedError', async () => {
    const server = await startServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' })
      res.write('[')
    })
    const client = clientFor(server, { timeout: 5000 })
    const err = await rejection(client.myGroups(TOKEN, { signal: AbortSignal.timeout(100) }))
    expect(err).toBeInstanceOf(AbortedError)
  })
})
