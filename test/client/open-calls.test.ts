/**
 * The bound on calls open at the group service, and the deadline, on both transports
 * (undici on Node, the global fetch everywhere else), when many calls time out together:
 * the service never has more than MAX_CONCURRENT_CALLS requests open at once, and no
 * request is sent after its caller's deadline.
 *
 * A call that waited for a slot is handed on only while at least MIN_SEND_MS of its
 * deadline is left (else it fails as the timeout it is). When a request is sent is when
 * undici writes its headers to the connection (`undici:client:sendHeaders`, published by
 * the undici package and by the undici inside Node's fetch alike), on the caller's clock:
 * the server thread's own reading of an arrival is when its event loop got to it, which on
 * a busy machine can be long after the bytes arrived.
 *
 * - undici: the time to send is checked again just before the write, so no request is
 *   written after its deadline, exactly.
 * - fetch: the runtime writes when its connection is ready, out of our sight; what stops a
 *   late write is the abort at the deadline, which fires on the event loop. So a request
 *   is never written after its call gave up, exactly, and never after its deadline by more
 *   than the event loop was late (measured) to fire that deadline.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { afterEach, describe, expect, it } from 'vitest'
import { resolveGroupsClientOptions } from '../../src/client/options.js'
import { MIN_SEND_MS } from '../../src/client/send-by.js'
import { createTransport as createFetchTransport } from '../../src/client/transport-fetch.js'
import { createTransport as createUndiciTransport } from '../../src/client/transport-undici.js'
import { MAX_CONCURRENT_CALLS, type CreateTransport } from '../../src/client/transport.js'
import { send } from '../../src/client/upstream-call.js'
import { startOpenCallsServer, type OpenCallsServer, type OpenCallsStats } from './open-calls-server.js'

const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.()
})

const TIMEOUT = 300
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/** When each request was written to its connection, by its bearer token, on `performance.now()`. */
function recordSends(): Map<string, number> {
  const sent = new Map<string, number>()
  const onSend = (message: unknown): void => {
    const at = performance.now()
    const token = /^authorization: Bearer (\S+)\r?$/im.exec(String((message as { headers?: unknown }).headers))?.[1]
    if (token !== undefined) sent.set(token, at)
  }
  subscribe('undici:client:sendHeaders', onSend)
  cleanups.push(() => {
    unsubscribe('undici:client:sendHeaders', onSend)
    return Promise.resolve()
  })
  return sent
}

/** Sends `waves` waves of `perWave` calls, `gapMs` apart; each settles to its error code (or 'ok'). */
async function sendWaves(
  create: CreateTransport,
  server: OpenCallsServer,
  waves: number,
  perWave: number,
  gapMs: number,
): Promise<{ codes: Map<string, number>; deadlines: Map<string, number>; gaveUp: Map<string, number> }> {
  const settings = resolveGroupsClientOptions({ baseUrl: `${server.url}/groups`, timeout: TIMEOUT })
  const transport = create(settings)
  cleanups.push(() => transport.close())
  const deadlines = new Map<string, number>()
  const gaveUp = new Map<string, number>()
  const calls: Promise<string>[] = []
  for (let wave = 0; wave < waves; wave++) {
    for (let i = 0; i < perWave; i++) {
      const token = `call-${wave}-${i}`
      // Taken before the call starts: at or a little before the call's own deadline.
      deadlines.set(token, performance.now() + TIMEOUT)
      const call = { endpoint: 'me/groups', path: '/groups/me/groups', token, signal: undefined, notFoundIsNull: false } as const
      calls.push(
        send(settings, transport, call).then(
          () => 'ok',
          (error: unknown) => {
            gaveUp.set(token, performance.now())
            return String((error as { code?: unknown }).code)
          },
        ),
      )
    }
    await sleep(gapMs)
  }
  const codes = new Map<string, number>()
  for (const code of await Promise.all(calls)) codes.set(code, (codes.get(code) ?? 0) + 1)
  return { codes, deadlines, gaveUp }
}

/** Waits until the server has no request open (the client tore down what it gave up). */
async function settled(server: OpenCallsServer): Promise<OpenCallsStats> {
  for (;;) {
    const stats = await server.stats()
    if (stats.open === 0) return stats
    await sleep(20)
  }
}

/** What was sent after its deadline (by more than `allowanceMs`) or after its call gave up. */
function sentLate(sent: Map<string, number>, deadlines: Map<string, number>, gaveUp: Map<string, number>, allowanceMs: number): string[] {
  const late: string[] = []
  for (const [token, at] of sent) {
    const deadline = deadlines.get(token) ?? -Infinity
    if (at > deadline + allowanceMs) late.push(`${token} sent ${(at - deadline).toFixed(1)} ms after its deadline`)
    const over = gaveUp.get(token)
    if (over !== undefined && at > over) late.push(`${token} sent ${(at - over).toFixed(1)} ms after its call gave up`)
  }
  return late
}

/** The event loop's lateness during a test, in ms. */
function loopLag(): () => number {
  const histogram = monitorEventLoopDelay({ resolution: 1 })
  histogram.enable()
  cleanups.push(() => {
    histogram.disable()
    return Promise.resolve()
  })
  return () => histogram.max / 1e6
}

describe.each([
  ['undici', createUndiciTransport],
  ['fetch', createFetchTransport],
] as const)('the %s transport, when many calls time out together', (name, create) => {
  // See the module comment: exact on undici; on fetch, the deadline fires on the event loop.
  const allowance = (lag: () => number): number => (name === 'undici' ? 0 : lag())

  it(`a service that never answers: at most ${MAX_CONCURRENT_CALLS} open, nothing sent after its deadline`, async () => {
    const server = await startOpenCallsServer()
    cleanups.push(() => server.close())
    const sent = recordSends()
    const lag = loopLag()
    // Waves a little apart: when the first calls time out, the waiting ones are close to
    // their own deadlines, the moment a freed slot must not be handed to them.
    const { codes, deadlines, gaveUp } = await sendWaves(create, server, 5, 60, 23)
    expect([...codes.keys()]).toEqual(['ERR_UPSTREAM_TIMEOUT'])
    const stats = await settled(server)
    expect(stats.most).toBeLessThanOrEqual(MAX_CONCURRENT_CALLS)
    expect(stats.most).toBe(MAX_CONCURRENT_CALLS)
    expect(sentLate(sent, deadlines, gaveUp, allowance(lag))).toEqual([])
    expect(stats.arrivals.length).toBe(sent.size)
    // Waiting calls were refused unsent rather than sent with under MIN_SEND_MS left.
    expect(sent.size).toBeLessThan(deadlines.size)
  })

  it('a service that answers after half the deadline: the same, whether a slot frees by an answer or a timeout', async () => {
    const server = await startOpenCallsServer({ answerAfterMs: TIMEOUT / 2 })
    cleanups.push(() => server.close())
    const sent = recordSends()
    const lag = loopLag()
    const { codes, deadlines, gaveUp } = await sendWaves(create, server, 4, 70, 31)
    expect(codes.get('ok')).toBeGreaterThan(0)
    const stats = await settled(server)
    expect(stats.most).toBeLessThanOrEqual(MAX_CONCURRENT_CALLS)
    expect(sentLate(sent, deadlines, gaveUp, allowance(lag))).toEqual([])
    expect(stats.arrivals.length).toBe(sent.size)
  })
})

it('a call that waited for a slot is sent only with at least MIN_SEND_MS of its deadline left', () => {
  expect(MIN_SEND_MS).toBeGreaterThan(0)
  expect(MIN_SEND_MS).toBeLessThan(TIMEOUT / 4)
})
