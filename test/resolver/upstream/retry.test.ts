/**
 * Retries: only a call that failed before any answer (refused, reset) is tried again, at
 * most `retries` times, and always inside the one `timeout` budget of the whole call.
 */
import { createServer as createTcpServer, type Server, type Socket } from 'node:net'
import type { AddressInfo } from 'node:net'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import {
  AbortedError,
  createMembershipResolver,
  group,
  InsufficientScopeError,
  InvalidOptionError,
  InvalidTokenError,
  UpstreamError,
  type MembershipResolver,
  type ResolverEvent,
} from '../../../src/index.js'
import { createRetrier, isRetryable, MIN_ATTEMPT_MS, type RetryInfo } from '../../../src/resolver/upstream/retry.js'
import { ORG_ID, startEmulator, type Emulator } from '../../../testing/index.js'

const network = (): UpstreamError => new UpstreamError('ERR_UPSTREAM_NETWORK', 'refused', { endpoint: 'me/groups' })

describe('isRetryable', () => {
  it('is true only for a network failure without an upstream status', () => {
    expect(isRetryable(network())).toBe(true)
    expect(isRetryable(new UpstreamError('ERR_UPSTREAM_NETWORK', 'x', { upstreamStatus: 200 }))).toBe(false)
    for (const [code, upstreamStatus] of [
      ['ERR_UPSTREAM_STATUS', 500],
      ['ERR_UPSTREAM_STATUS', 400],
      ['ERR_UPSTREAM_RATE_LIMITED', 429],
      ['ERR_UPSTREAM_REDIRECT', 302],
      ['ERR_UPSTREAM_BODY', 200],
      ['ERR_UPSTREAM_BODY_TOO_LARGE', 200],
    ] as const) {
      expect(isRetryable(new UpstreamError(code, 'x', { upstreamStatus }))).toBe(false)
    }
    expect(isRetryable(new UpstreamError('ERR_UPSTREAM_TIMEOUT', 'slow'))).toBe(false)
    expect(isRetryable(new UpstreamError('ERR_UPSTREAM_OVERLOADED', 'busy'))).toBe(false)
    expect(isRetryable(new InvalidTokenError())).toBe(false)
    expect(isRetryable(new InsufficientScopeError())).toBe(false)
    expect(isRetryable(new Error('ECONNRESET'))).toBe(false)
  })
})

describe('createRetrier', () => {
  it('makes one retry by default after a network failure, and reports it', async () => {
    const retrier = createRetrier({ retries: 1, delay: 0, budget: 5000 })
    const signals: (AbortSignal | undefined)[] = []
    const infos: RetryInfo[] = []
    const result = await retrier.run(
      async (signal) => {
        signals.push(signal)
        if (signals.length === 1) throw network()
        return 'ok'
      },
      (info) => infos.push(info),
    )
    expect(result).toBe('ok')
    expect(signals[0]).toBeUndefined()
    expect(signals[1]).toBeInstanceOf(AbortSignal)
    expect(infos).toEqual([{ attempt: 1, delayMs: 0, error: expect.objectContaining({ code: 'ERR_UPSTREAM_NETWORK' }) }])
  })

  it('gives up after `retries` retries with the last failure', async () => {
    let calls = 0
    const retrier = createRetrier({ retries: 2, delay: 0, budget: 5000 })
    await expect(
      retrier.run(async () => {
        calls++
        throw network()
      }),
    ).rejects.toMatchObject({ code: 'ERR_UPSTREAM_NETWORK' })
    expect(calls).toBe(3)
  })

  it.each([
    ['a 5xx', new UpstreamError('ERR_UPSTREAM_STATUS', '500', { upstreamStatus: 500 })],
    ['a 4xx', new UpstreamError('ERR_UPSTREAM_STATUS', '400', { upstreamStatus: 400 })],
    ['a 429', new UpstreamError('ERR_UPSTREAM_RATE_LIMITED', '429', { upstreamStatus: 429, retryAfter: 1 })],
    ['a timeout', new UpstreamError('ERR_UPSTREAM_TIMEOUT', 'slow')],
    ['a bad body', new UpstreamError('ERR_UPSTREAM_BODY', 'bad', { upstreamStatus: 200 })],
    ['a 401', new InvalidTokenError()],
    ['a 403', new InsufficientScopeError()],
    ['an abort', new AbortedError()],
  ])('never retries %s', async (_label, failure) => {
    let calls = 0
    const retrier = createRetrier({ retries: 3, delay: 0, budget: 5000 })
    await expect(
      retrier.run(async () => {
        calls++
        throw failure
      }),
    ).rejects.toBe(failure)
    expect(calls).toBe(1)
  })

  it('makes no retry with retries 0', async () => {
    let calls = 0
    const retrier = createRetrier({ retries: 0, delay: 0, budget: 5000 })
    await expect(retrier.run(async () => (calls++, Promise.reject(network())))).rejects.toMatchObject({ code: 'ERR_UPSTREAM_NETWORK' })
    expect(calls).toBe(1)
  })

  it('waits 50 to 100 % of the delay, doubled for each further retry', async () => {
    const delays = (random: number): Promise<number[]> => {
      const seen: number[] = []
      const retrier = createRetrier({ retries: 2, delay: 8, budget: 5000, random: () => random })
      return retrier
        .run(
          () => Promise.reject(network()),
          (info) => seen.push(info.delayMs),
        )
        .catch(() => seen)
    }
    expect(await delays(0)).toEqual([4, 8])
    expect(await delays(0.999)).toEqual([8, 16])
  })

  it('makes no retry when the budget has no room left for one', async () => {
    let clock = 0
    let calls = 0
    const retrier = createRetrier({ retries: 1, delay: 10, budget: 100, random: () => 1, clock: () => clock })
    await expect(
      retrier.run(async () => {
        calls++
        clock += 100 - MIN_ATTEMPT_MS - 9 // what is left cannot hold the delay and an attempt
        throw network()
      }),
    ).rejects.toMatchObject({ code: 'ERR_UPSTREAM_NETWORK' })
    expect(calls).toBe(1)
  })

  it('ends a retry that outlives the budget as a timeout of the whole call', async () => {
    const retrier = createRetrier({ retries: 1, delay: 0, budget: 150 })
    const started = performance.now()
    let calls = 0
    const failure = await retrier
      .run((signal) => {
        calls++
        if (calls === 1) return Promise.reject(network())
        // A retry that would hang: only the budget's signal ends it.
        return new Promise((_resolve, reject) => signal!.addEventListener('abort', () => reject(new AbortedError())))
      })
      .catch((error: unknown) => error)
    expect(failure).toBeInstanceOf(UpstreamError)
    expect(failure).toMatchObject({ code: 'ERR_UPSTREAM_TIMEOUT', endpoint: 'me/groups' })
    expect(performance.now() - started).toBeLessThan(150 + 1000)
  })
})

describe('retries against real sockets', () => {
  let emulator: Emulator
  let resolver: MembershipResolver | undefined
  let raw: Server | undefined
  const sockets = new Set<Socket>()

  beforeAll(async () => {
    emulator = await startEmulator()
  })
  afterAll(async () => {
    await emulator.close()
  })
  afterEach(async () => {
    emulator.faults.clear()
    emulator.resetLog()
    await resolver?.close()
    resolver = undefined
    for (const socket of sockets) socket.destroy()
    sockets.clear()
    if (raw !== undefined) await new Promise<void>((resolve) => raw!.close(() => resolve()))
    raw = undefined
  })

  /** A TCP server whose n-th connection (from 1) is handled by `behaviour(n, socket)`. */
  async function rawServer(behaviour: (n: number, socket: Socket) => void): Promise<string> {
    let n = 0
    raw = createTcpServer((socket) => {
      sockets.add(socket)
      socket.on('error', () => {})
      behaviour(++n, socket)
    })
    await new Promise<void>((resolve) => raw!.listen(0, '127.0.0.1', resolve))
    return `http://127.0.0.1:${(raw.address() as AddressInfo).port}/groups`
  }

  it('a reset before the answer is retried once, and the retry decides', async () => {
    const events: ResolverEvent[] = []
    resolver = createMembershipResolver({ baseUrl: emulator.baseUrl, onEvent: (e) => events.push(e) })
    const token = emulator.issueToken('alice')
    emulator.faults.add({ kind: 'reset' }, { token, times: 1 })
    expect(await resolver.check(token, group(ORG_ID, 'admin'))).toMatchObject({ allowed: true })
    expect(emulator.count('/groups/me/groups')).toBe(2)
    expect(resolver.stats()).toMatchObject({ upstreamCalls: 1, retries: 1, size: 1 })
    expect(events.filter((e) => e.type === 'upstream_retry')).toEqual([
      expect.objectContaining({ type: 'upstream_retry', endpoint: 'me/groups', attempt: 1, code: 'ERR_UPSTREAM_NETWORK' }),
    ])
    expect(JSON.stringify(events)).not.toContain(token)
  })

  it('concurrent callers share the call and its retry', async () => {
    resolver = createMembershipResolver({ baseUrl: emulator.baseUrl })
    const token = emulator.issueToken('alice')
    emulator.faults.add({ kind: 'reset' }, { token, times: 1 })
    const decisions = await Promise.all(Array.from({ length: 10 }, () => resolver!.check(token, group(ORG_ID))))
    expect(decisions.every((d) => d.allowed)).toBe(true)
    expect(emulator.count('/groups/me/groups')).toBe(2)
  })

  it('with retries 0, a reset is a failure at once', async () => {
    resolver = createMembershipResolver({ baseUrl: emulator.baseUrl, retries: 0 })
    const token = emulator.issueToken('alice')
    emulator.faults.add({ kind: 'reset' }, { token, times: 1 })
    await expect(resolver.check(token, group(ORG_ID))).rejects.toMatchObject({ code: 'ERR_UPSTREAM_NETWORK', status: 503 })
    expect(emulator.count('/groups/me/groups')).toBe(1)
  })

  it('never retries a 5xx, a 429 or a hang', async () => {
    resolver = createMembershipResolver({ baseUrl: emulator.baseUrl, timeout: 200, retries: 3 })
    for (const fault of [{ kind: 'status', status: 500 }, { kind: 'status', status: 429, body: '' }, { kind: 'hang' }] as const) {
      const token = emulator.issueToken('alice')
      emulator.resetLog()
      emulator.faults.add(fault, { token })
      await expect(resolver.check(token, group(ORG_ID))).rejects.toBeInstanceOf(UpstreamError)
      expect(emulator.count('/groups/me/groups')).toBe(1)
    }
    expect(resolver.stats().retries).toBe(0)
  })

  it('a retry never stretches the deadline: a late reset, then a hang, still ends at the timeout', async () => {
    const timeout = 1000
    const baseUrl = await rawServer((n, socket) => {
      // First connection: reset late in the budget; second: never answer.
      if (n === 1) setTimeout(() => socket.resetAndDestroy(), 700)
    })
    resolver = createMembershipResolver({ baseUrl, timeout, retryDelay: 0 })
    const started = performance.now()
    const failure = await resolver.check('opaque-token', group(ORG_ID)).catch((error: unknown) => error)
    const elapsed = performance.now() - started
    expect(failure).toMatchObject({ code: 'ERR_UPSTREAM_TIMEOUT', status: 503 })
    expect(resolver.stats().retries).toBe(1)
    // Within the deadline (with a generous margin); a retry with its own full timeout
    // would end at 700 + 1000 ms.
    expect(elapsed).toBeLessThan(timeout + 500)
  })

  it('no retry when the failure leaves no room in the budget', async () => {
    const timeout = 300
    let connections = 0
    const baseUrl = await rawServer((_n, socket) => {
      connections++
      setTimeout(() => socket.resetAndDestroy(), timeout - 20)
    })
    resolver = createMembershipResolver({ baseUrl, timeout, retryDelay: 10 })
    await expect(resolver.check('opaque-token', group(ORG_ID))).rejects.toMatchObject({ code: 'ERR_UPSTREAM_NETWORK' })
    expect(resolver.stats().retries).toBe(0)
    expect(connections).toBe(1)
  })
})

describe('retry options', () => {
  it.each([
    [{ retries: -1 }, 'retries'],
    [{ retries: 6 }, 'retries'],
    [{ retries: 1.5 }, 'retries'],
    [{ retries: '1' }, 'retries'],
    [{ retryDelay: -1 }, 'retryDelay'],
    [{ retryDelay: 10_001 }, 'retryDelay'],
    [{ retryDelay: Number.NaN }, 'retryDelay'],
  ])('rejects %j naming the option', (options, name) => {
    const create = (): unknown => createMembershipResolver({ baseUrl: 'https://groups.example.org/groups', ...(options as object) })
    expect(create).toThrow(InvalidOptionError)
    expect(create).toThrow(`options.${name}:`)
  })

  it('accepts the bounds', async () => {
    for (const options of [{ retries: 0 }, { retries: 5 }, { retryDelay: 0 }, { retryDelay: 10_000 }]) {
      const resolver = createMembershipResolver({ baseUrl: 'https://groups.example.org/groups', ...options })
      await resolver.close()
    }
  })
})
