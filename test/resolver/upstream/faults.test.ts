/**
 * The fault matrix: every way the group service (or the network) fails, on real loopback
 * servers, through a real Express 5 guard. For each fault, on both endpoints a decision
 * can need (`me/groups` and `me/groups/{id}`): the status, that the route handler never
 * ran, what got cached (nothing from a failure), how many upstream requests were made
 * (a retry only before any answer), and that the answer came within the deadline.
 */
import { createServer, type Server } from 'node:http'
import { createServer as createTcpServer } from 'node:net'
import type { AddressInfo } from 'node:net'
import express from 'express'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createGuard } from '../../../adapters/express/index.js'
import type { ResolverEvent } from '../../../src/index.js'
import { ORG_ID, startEmulator, type Emulator, type Fault } from '../../../testing/index.js'

const TIMEOUT = 400
/** Generous: only "answers within the deadline" is asserted, never a precise time. */
const MARGIN = 1500
const MAX_BYTES = 64 * 1024
const LIST_PATH = '/groups/me/groups'
const MEMBERSHIP_PATH = `/groups/me/groups/${encodeURIComponent(ORG_ID)}`

let emulator: Emulator

beforeAll(async () => {
  emulator = await startEmulator()
})
afterAll(async () => {
  await emulator.close()
})

interface App {
  url: string
  handlerCalls: number
  events: ResolverEvent[]
  /** The misconfiguration warnings, caught here rather than printed by process.emitWarning. */
  warnings: string[]
  stats(): { size: number; upstreamCalls: number; retries: number }
  advance(ms: number): void
  close(): Promise<void>
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

/** An Express 5 app with one guarded route, `GET /staff` = requireGroup(ORG, 'admin'). */
async function startApp(baseUrl: string): Promise<App> {
  let clock = Date.now()
  const events: ResolverEvent[] = []
  const warnings: string[] = []
  const guard = createGuard({
    baseUrl,
    timeout: TIMEOUT,
    maxResponseBytes: MAX_BYTES,
    now: () => clock,
    onEvent: (event) => events.push(event),
    logger: { warn: (message) => warnings.push(message) },
  })
  const state = { handlerCalls: 0 }
  const app = express()
  app.get('/staff', guard.requireGroup(ORG_ID, 'admin'), (_req, res) => {
    state.handlerCalls++
    res.json({ ok: true })
  })
  const server = createServer(app)
  const url = await listen(server)
  return {
    url,
    get handlerCalls() {
      return state.handlerCalls
    },
    events,
    warnings,
    stats: () => guard.resolver.stats(),
    advance: (ms) => {
      clock += ms
    },
    close: async () => {
      await guard.resolver.close()
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}

async function timedGet(url: string, token: string): Promise<{ status: number; headers: Headers; body: string; ms: number }> {
  const started = performance.now()
  const res = await fetch(url, { headers: { authorization: `Bearer ${token}` } })
  const body = await res.text()
  return { status: res.status, headers: res.headers, body, ms: performance.now() - started }
}

interface Row {
  name: string
  fault: Fault
  /** Upstream requests the failing guarded request makes to the faulty endpoint. */
  attempts: number
  /** Expected `Retry-After` of the 503, when the fault dictates it. */
  retryAfter?: string
  /** The misconfiguration warning the fault gives (a redirect or a web page says baseUrl is wrong). */
  warns?: RegExp
}

// Each fault stays on (no `times`), so a retry meets it again.
const ROWS: Row[] = [
  { name: 'hang before headers', fault: { kind: 'hang' }, attempts: 1 },
  { name: 'a slow body', fault: { kind: 'slow-body', bytesPerSecond: 20 }, attempts: 1 },
  // Reset before any answer: the one failure worth a retry.
  { name: 'a reset before the answer', fault: { kind: 'reset' }, attempts: 2 },
  // The connection broke after the status line: the service answered, so no retry.
  { name: 'a reset mid-body', fault: { kind: 'reset-mid-body' }, attempts: 1 },
  { name: 'a 500', fault: { kind: 'status', status: 500 }, attempts: 1 },
  { name: 'a 502', fault: { kind: 'status', status: 502, body: '<html>Bad gateway</html>' }, attempts: 1 },
  { name: 'a 503', fault: { kind: 'status', status: 503 }, attempts: 1 },
  {
    name: 'a 429 with Retry-After',
    fault: { kind: 'status', status: 429, body: '', headers: { 'retry-after': '3' } },
    attempts: 1,
    retryAfter: '3',
  },
  { name: 'a 302 redirect', fault: { kind: 'redirect', location: '/v1/groups/me/groups' }, attempts: 1, warns: /a redirect \(302\)/ },
  {
    name: 'a 307 redirect',
    fault: { kind: 'redirect', location: '/v1/groups/me/groups', status: 307 },
    attempts: 1,
    warns: /a redirect \(307\)/,
  },
  { name: 'invalid JSON', fault: { kind: 'invalid-json' }, attempts: 1 },
  { name: 'JSON of the wrong shape', fault: { kind: 'wrong-shape' }, attempts: 1 },
  { name: 'a non-JSON maintenance page', fault: { kind: 'non-json' }, attempts: 1, warns: /something that is not JSON/ },
  { name: 'an oversized body', fault: { kind: 'oversized', bytes: 4 * MAX_BYTES }, attempts: 1 },
]

const ENDPOINTS = [
  // Alice is an admin of ORG: a whole me/groups proves it with one call.
  { endpoint: 'me/groups', path: LIST_PATH, cachedAfterFailure: 0 },
  // With ORG left out of me/groups (partial), the decision needs me/groups/{id}; the
  // partial list itself is a good answer and is cached.
  { endpoint: 'me/groups/{id}', path: MEMBERSHIP_PATH, cachedAfterFailure: 1 },
] as const

describe.each(ENDPOINTS)('fault matrix on $endpoint', ({ endpoint, path, cachedAfterFailure }) => {
  it.each(ROWS)('$name: 503, handler not run, nothing cached, within the deadline', async (row) => {
    const app = await startApp(emulator.baseUrl)
    const token = emulator.issueToken('alice')
    try {
      emulator.resetLog()
      if (endpoint === 'me/groups/{id}') emulator.faults.add({ kind: 'partial', omit: [ORG_ID] }, { token, path: LIST_PATH })
      const faultId = emulator.faults.add(row.fault, { token, path })

      const failed = await timedGet(`${app.url}/staff`, token)
      expect(failed.status).toBe(503)
      expect(JSON.parse(failed.body)).toMatchObject({ error: 'temporarily_unavailable' })
      expect(failed.headers.get('retry-after')).toBe(row.retryAfter ?? '5')
      expect(failed.body).not.toContain(token)
      expect(app.handlerCalls).toBe(0)
      expect(failed.ms).toBeLessThan(TIMEOUT + MARGIN)
      expect(emulator.count(path)).toBe(row.attempts)
      // Never followed: the redirect target (same service, /v1 prefix) saw nothing.
      expect(emulator.count('/v1/groups/me/groups')).toBe(0)
      expect(app.stats().size).toBe(cachedAfterFailure)
      expect(app.stats().retries).toBe(row.attempts - 1)
      expect(JSON.stringify(app.events)).not.toContain(token)
      expect(app.warnings).toEqual(row.warns === undefined ? [] : [expect.stringMatching(row.warns)])

      // Nothing of the failure was cached: once the fault is gone (and a Retry-After has
      // passed), the next request asks the service again and is allowed.
      emulator.faults.remove(faultId)
      app.advance(5_000)
      const healed = await timedGet(`${app.url}/staff`, token)
      expect(healed.status).toBe(200)
      expect(app.handlerCalls).toBe(1)
      expect(emulator.count(path)).toBe(row.attempts + 1)
    } finally {
      emulator.faults.clear()
      await app.close()
    }
  })
})

describe('fault matrix: other cases', () => {
  it('connection refused: 503 after one retry, handler not run, nothing cached, within the deadline', async () => {
    const probe = createTcpServer()
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve))
    const { port } = probe.address() as AddressInfo
    await new Promise<void>((resolve) => probe.close(() => resolve()))

    const app = await startApp(`http://127.0.0.1:${port}/groups`)
    try {
      const token = emulator.issueToken('alice')
      const failed = await timedGet(`${app.url}/staff`, token)
      expect(failed.status).toBe(503)
      expect(failed.headers.get('retry-after')).toBe('5')
      expect(app.handlerCalls).toBe(0)
      expect(failed.ms).toBeLessThan(TIMEOUT + MARGIN)
      expect(app.stats()).toMatchObject({ size: 0, upstreamCalls: 1, retries: 1 })
      expect(app.events).toContainEqual(
        expect.objectContaining({ type: 'upstream_retry', endpoint: 'me/groups', attempt: 1, code: 'ERR_UPSTREAM_NETWORK' }),
      )
      expect(app.events).toContainEqual(expect.objectContaining({ type: 'upstream_error', code: 'ERR_UPSTREAM_NETWORK' }))
    } finally {
      await app.close()
    }
  })

  it('partial me/groups: absence is not denial; the member is allowed after me/groups/{id}, both answers cached', async () => {
    const app = await startApp(emulator.baseUrl)
    const token = emulator.issueToken('alice')
    try {
      emulator.resetLog()
      emulator.faults.add({ kind: 'partial', omit: [ORG_ID] }, { token })
      const first = await timedGet(`${app.url}/staff`, token)
      expect(first.status).toBe(200)
      expect(app.handlerCalls).toBe(1)
      expect(emulator.count(LIST_PATH)).toBe(1)
      expect(emulator.count(MEMBERSHIP_PATH)).toBe(1)
      expect(app.stats().size).toBe(2)
      const second = await timedGet(`${app.url}/staff`, token)
      expect(second.status).toBe(200)
      expect(emulator.count()).toBe(2)
    } finally {
      emulator.faults.clear()
      await app.close()
    }
  })

  it('a non-member: denied (403) only after me/groups/{id} answered 404, never from the list alone', async () => {
    const app = await startApp(emulator.baseUrl)
    const token = emulator.issueToken('erin')
    try {
      emulator.resetLog()
      const res = await timedGet(`${app.url}/staff`, token)
      expect(res.status).toBe(403)
      expect(app.handlerCalls).toBe(0)
      expect(emulator.count(MEMBERSHIP_PATH)).toBe(1)
    } finally {
      emulator.faults.clear()
      await app.close()
    }
  })

  it('latency below the deadline is no fault: allowed, and cached', async () => {
    const app = await startApp(emulator.baseUrl)
    const token = emulator.issueToken('alice')
    try {
      emulator.resetLog()
      emulator.faults.add({ kind: 'latency', ms: 50 }, { token })
      expect((await timedGet(`${app.url}/staff`, token)).status).toBe(200)
      expect((await timedGet(`${app.url}/staff`, token)).status).toBe(200)
      expect(emulator.count(LIST_PATH)).toBe(1)
      expect(app.handlerCalls).toBe(2)
    } finally {
      emulator.faults.clear()
      await app.close()
    }
  })
})
