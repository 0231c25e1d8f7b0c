/**
 * What an operator sees: one warning per cause when baseUrl answers like no group service,
 * `health()` for readiness probes, and `verify()` to fail at start instead of on the first user.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createMembershipResolver, group, MISCONFIGURED_WARNING, UpstreamError } from '../../src/index.js'
import { ORG_ID, startEmulator, type Emulator } from '../../testing/index.js'

let emulator: Emulator
beforeAll(async () => {
  emulator = await startEmulator()
})
afterAll(async () => {
  await emulator.close()
})

function collectingLogger() {
  const messages: string[] = []
  return { messages, logger: { warn: (message: string) => void messages.push(message) } }
}

describe('loud misconfiguration', () => {
  it('a baseUrl without its /groups prefix is named once, through the logger, with both service shapes', async () => {
    const { messages, logger } = collectingLogger()
    const origin = new URL(emulator.baseUrl).origin
    const resolver = createMembershipResolver({ baseUrl: origin, logger })
    const token = emulator.issueToken('alice')
    for (let i = 0; i < 5; i++) await expect(resolver.check(token, group(ORG_ID))).rejects.toBeInstanceOf(UpstreamError)
    expect(messages).toHaveLength(1)
    expect(messages[0]).toMatch(/404 for me\/groups/)
    expect(messages[0]).toMatch(/Dataporten serves the API under \/groups/)
    expect(messages[0]).toMatch(/OpenConext at the service root/)
    expect(messages[0]).not.toContain(token)
    await resolver.close()
  })

  it('without a logger, process.emitWarning with the code VOOT_GUARD_MISCONFIGURED', async () => {
    const warnings: Error[] = []
    const listener = (warning: Error): void => void warnings.push(warning)
    // Node's own listener prints every warning to stderr: set aside while this test
    // catches and checks the one it causes.
    const printers = process.listeners('warning')
    process.removeAllListeners('warning')
    process.on('warning', listener)
    try {
      const resolver = createMembershipResolver({ baseUrl: new URL(emulator.baseUrl).origin })
      await resolver.check(emulator.issueToken('alice'), group(ORG_ID)).catch(() => undefined)
      await resolver.check(emulator.issueToken('bob'), group(ORG_ID)).catch(() => undefined)
      await new Promise((resolve) => setImmediate(resolve))
      const ours = warnings.filter((w) => (w as Error & { code?: string }).code === MISCONFIGURED_WARNING)
      expect(ours).toHaveLength(1)
      await resolver.close()
    } finally {
      process.off('warning', listener)
      for (const printer of printers) process.on('warning', printer)
    }
  })

  it('a healthy service, and the failures healthy services have, say nothing', async () => {
    const { messages, logger } = collectingLogger()
    const resolver = createMembershipResolver({ baseUrl: emulator.baseUrl, logger })
    const token = emulator.issueToken('alice')
    emulator.faults.add({ kind: 'status', status: 500 }, { token, times: 1 })
    await expect(resolver.check(token, group(ORG_ID))).rejects.toBeInstanceOf(UpstreamError)
    expect((await resolver.check(token, group(ORG_ID))).allowed).toBe(true)
    expect(messages).toEqual([])
    emulator.faults.clear()
    await resolver.close()
  })
})

describe('health()', () => {
  it('ok, then degraded with the last failure, then down while the circuit is open', async () => {
    let clock = Date.parse('2026-11-23T12:00:00Z')
    const resolver = createMembershipResolver({
      baseUrl: emulator.baseUrl,
      now: () => clock,
      circuitBreaker: { failureThreshold: 2, cooldown: 30_000 },
    })
    expect(resolver.health()).toEqual({ status: 'ok', circuit: 'closed', inflight: 0, cacheEntries: 0 })
    const token = emulator.issueToken('alice')
    emulator.faults.add({ kind: 'status', status: 502 }, { token, times: 2 })
    await expect(resolver.check(token, group(ORG_ID))).rejects.toBeInstanceOf(UpstreamError)
    expect(resolver.health()).toMatchObject({
      status: 'degraded',
      circuit: 'closed',
      lastFailure: { code: 'ERR_UPSTREAM_STATUS', at: clock },
    })
    await expect(resolver.check(token, group(ORG_ID))).rejects.toBeInstanceOf(UpstreamError)
    expect(resolver.health()).toMatchObject({ status: 'down', circuit: 'open' })
    clock += 120_000
    expect((await resolver.check(token, group(ORG_ID))).allowed).toBe(true)
    expect(resolver.health()).toMatchObject({ status: 'ok', circuit: 'closed', cacheEntries: 1 })
    emulator.faults.clear()
    await resolver.close()
  })
})

describe('verify()', () => {
  it('resolves against a group service', async () => {
    const resolver = createMembershipResolver({ baseUrl: emulator.baseUrl })
    await expect(resolver.verify()).resolves.toBeUndefined()
    await resolver.close()
  })

  it('rejects with the likely mistake when baseUrl misses its prefix', async () => {
    const resolver = createMembershipResolver({ baseUrl: new URL(emulator.baseUrl).origin })
    const failure = await resolver.verify().catch((error: unknown) => error)
    expect(failure).toBeInstanceOf(UpstreamError)
    expect((failure as Error).message).toMatch(/path prefix/)
    await resolver.close()
  })
})

describe('guard.health() and guard.ready()', () => {
  it("every adapter guard offers its resolver's health and verification", async () => {
    const { createGuard } = await import('../../adapters/express/index.js')
    const guard = createGuard({ baseUrl: emulator.baseUrl })
    expect(guard.health()).toMatchObject({ status: 'ok', circuit: 'closed' })
    await expect(guard.ready()).resolves.toBeUndefined()
    const wrong = createGuard({ baseUrl: new URL(emulator.baseUrl).origin })
    await expect(wrong.ready()).rejects.toThrow(/path prefix/)
    await guard.resolver.close()
    await wrong.resolver.close()
  })

  it("health() reads degraded while the service's 429 back-off lasts", async () => {
    let clock = Date.parse('2026-11-23T12:00:00Z')
    const resolver = createMembershipResolver({ baseUrl: emulator.baseUrl, now: () => clock })
    const token = emulator.issueToken('alice')
    emulator.faults.add({ kind: 'status', status: 429, body: '', headers: { 'retry-after': '600' } }, { token, times: 1 })
    await expect(resolver.check(token, group(ORG_ID))).rejects.toBeInstanceOf(UpstreamError)
    clock += 120_000
    expect(resolver.health().status).toBe('degraded')
    clock += 600_000
    expect(resolver.health().status).toBe('ok')
    emulator.faults.clear()
    await resolver.close()
  })
})

describe('the upstream and circuit channels', () => {
  it('a real resolver traces each upstream call and publishes each circuit change, with no token', async () => {
    const { channel, tracingChannel } = await import('node:diagnostics_channel')
    const { CHANNELS } = await import('../../src/index.js')
    const calls: unknown[] = []
    const states: unknown[] = []
    const handlers = { start: (c: unknown) => void calls.push(c), end() {}, asyncStart() {}, asyncEnd() {}, error() {} }
    const onCircuit = (message: unknown): void => void states.push(message)
    tracingChannel(CHANNELS.upstream).subscribe(handlers)
    channel(CHANNELS.circuit).subscribe(onCircuit)
    try {
      const resolver = createMembershipResolver({ baseUrl: emulator.baseUrl, circuitBreaker: { failureThreshold: 1, cooldown: 60_000 } })
      const token = emulator.issueToken('alice')
      expect((await resolver.check(token, group(ORG_ID))).allowed).toBe(true)
      expect(calls.map((c) => (c as { endpoint: string }).endpoint)).toEqual(['me/groups'])
      const other = emulator.issueToken('bob')
      emulator.faults.add({ kind: 'status', status: 500 }, { token: other, times: 1 })
      await expect(resolver.check(other, group(ORG_ID))).rejects.toBeInstanceOf(UpstreamError)
      expect(states).toEqual([{ state: 'open' }])
      expect(JSON.stringify([calls, states])).not.toContain(token)
      emulator.faults.clear()
      await resolver.close()
    } finally {
      tracingChannel(CHANNELS.upstream).unsubscribe(handlers)
      channel(CHANNELS.circuit).unsubscribe(onCircuit)
    }
  })
})
