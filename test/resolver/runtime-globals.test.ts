// What the resolver does on a runtime without Node's globals (Workers without
// nodejs_compat, Vercel's Edge): no diagnostics_channel means channels that never have
// subscribers, and no process.emitWarning means a misconfiguration warning on console.warn.
import { afterEach, describe, expect, it, vi } from 'vitest'
import { UpstreamError } from '../../src/errors.js'
import { createMisconfigurationNotice, MISCONFIGURED_WARNING } from '../../src/resolver/misconfiguration.js'

afterEach(() => {
  vi.restoreAllMocks()
})

describe('without process.emitWarning', () => {
  it('a misconfiguration is warned once per cause on console.warn, with the code', () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined)
    const emitWarning = vi.spyOn(process, 'emitWarning')
    const original = Object.getOwnPropertyDescriptor(process, 'emitWarning')
    Object.defineProperty(process, 'emitWarning', { value: undefined, configurable: true, writable: true })
    try {
      const notice = createMisconfigurationNotice('https://groups.example.org', undefined)
      const notFound = new UpstreamError('ERR_UPSTREAM_STATUS', 'status 404', { endpoint: 'me/groups', upstreamStatus: 404 })
      notice(notFound)
      notice(notFound)
    } finally {
      if (original !== undefined) Object.defineProperty(process, 'emitWarning', original)
    }
    expect(warn).toHaveBeenCalledTimes(1)
    expect(String(warn.mock.calls[0]?.[0])).toContain('baseUrl is likely missing its path prefix')
    expect(String(warn.mock.calls[0]?.[0])).toContain(MISCONFIGURED_WARNING)
    expect(emitWarning).not.toHaveBeenCalled()
  })
})

describe('without node:diagnostics_channel', () => {
  it('channels have no subscribers, trace methods only run the work, publishing is a no-op', async () => {
    vi.spyOn(process, 'getBuiltinModule').mockReturnValue(undefined as never)
    vi.resetModules()
    const { channel, tracingChannel } = await import('../../src/diagnostics-channel.js')
    const { subscribe } = await import('node:diagnostics_channel')
    // A subscriber in the real module must not reach the stand-ins.
    const seen: unknown[] = []
    const onMessage = (message: unknown): void => void seen.push(message)
    subscribe('voot-guard:test-circuit', onMessage)
    const traced = tracingChannel<{ endpoint: string }>('voot-guard:test-resolve')
    expect(traced.hasSubscribers).toBe(false)
    expect(traced.start.hasSubscribers).toBe(false)
    expect(traced.traceSync(() => 42, { endpoint: 'me/groups' })).toBe(42)
    await expect(traced.tracePromise(() => Promise.resolve('ok'), { endpoint: 'me/groups' })).resolves.toBe('ok')
    const plain = channel('voot-guard:test-circuit')
    expect(plain.hasSubscribers).toBe(false)
    plain.publish({ state: 'open' })
    expect(seen).toEqual([])
  })

  it("a TracingChannel without hasSubscribers (Bun's) gets one derived from its five channels", async () => {
    const real = await import('node:diagnostics_channel')
    const bunLike = {
      ...real,
      tracingChannel: (name: string) => {
        const made = real.tracingChannel(name)
        const { start, end, asyncStart, asyncEnd, error } = made
        return { start, end, asyncStart, asyncEnd, error, tracePromise: made.tracePromise.bind(made), traceSync: made.traceSync.bind(made) }
      },
    }
    vi.spyOn(process, 'getBuiltinModule').mockReturnValue(bunLike as never)
    vi.resetModules()
    const { tracingChannel } = await import('../../src/diagnostics-channel.js')
    const traced = tracingChannel<{ endpoint: string }>('voot-guard:test-bun')
    expect(traced.hasSubscribers).toBe(false)
    const ends: unknown[] = []
    const none = (): void => undefined
    const subscriber = { start: none, end: none, asyncStart: none, error: none, asyncEnd: (context: unknown) => void ends.push(context) }
    real.tracingChannel('voot-guard:test-bun').subscribe(subscriber)
    try {
      expect(traced.hasSubscribers).toBe(true)
      await traced.tracePromise(() => Promise.resolve(1), { endpoint: 'me/groups' })
    } finally {
      real.tracingChannel('voot-guard:test-bun').unsubscribe(subscriber)
    }
    expect(ends).toHaveLength(1)
    expect(traced.hasSubscribers).toBe(false)
  })

  it('with it, the channels are node:diagnostics_channel itself', async () => {
    vi.resetModules()
    const { channel } = await import('../../src/diagnostics-channel.js')
    const { subscribe, unsubscribe } = await import('node:diagnostics_channel')
    const seen: unknown[] = []
    const onMessage = (message: unknown): void => void seen.push(message)
    subscribe('voot-guard:test-circuit-2', onMessage)
    try {
      channel('voot-guard:test-circuit-2').publish({ state: 'open' })
    } finally {
      unsubscribe('voot-guard:test-circuit-2', onMessage)
    }
    expect(seen).toEqual([{ state: 'open' }])
  })
})
