/**
 * A 429's Retry-After is honoured for the whole service: the real service limits per client
 * address, so one token's 429 means every cold lookup would get one. Until it has passed,
 * every cold lookup, of any token, fails fast (503 with the remaining Retry-After) instead of
 * hammering the service; warm cache entries are still served.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import express from 'express'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { createGuard } from '../../../adapters/express/index.js'
import { createMembershipResolver, group, UpstreamError, type MembershipResolver, type ResolverEvent } from '../../../src/index.js'
import { ADHOC_GROUP_ID, ORG_ID, startEmulator, type Emulator } from '../../../testing/index.js'

const T0 = Date.parse('2026-11-21T12:00:00Z')

describe('the service-wide 429 back-off in the resolver', () => {
  let emulator: Emulator
  let resolver: MembershipResolver
  let clock: number
  let events: ResolverEvent[]

  beforeAll(async () => {
    emulator = await startEmulator()
  })
  afterAll(async () => {
    await emulator.close()
  })
  beforeEach(() => {
    clock = T0
    events = []
    resolver = createMembershipResolver({ baseUrl: emulator.baseUrl, now: () => clock, onEvent: (e) => events.push(e) })
  })
  afterEach(async () => {
    emulator.faults.clear()
    emulator.resetLog()
    await resolver.close()
  })

  it('after a 429 with Retry-After, every cold lookup of any token fails fast until it has passed', async () => {
    const alice = emulator.issueToken('alice')
    const bob = emulator.issueToken('bob')
    emulator.faults.add({ kind: 'status', status: 429, body: '', headers: { 'retry-after': '30' } }, { token: alice, times: 1 })

    await expect(resolver.check(alice, group(ORG_ID))).rejects.toMatchObject({ code: 'ERR_UPSTREAM_RATE_LIMITED', retryAfter: 30 })
    expect(emulator.count()).toBe(1)

    clock += 12_000
    for (let i = 0; i < 5; i++) {
      await expect(resolver.check(alice, group(ORG_ID))).rejects.toMatchObject({ code: 'ERR_UPSTREAM_RATE_LIMITED', retryAfter: 18 })
      await expect(resolver.membership(alice, ADHOC_GROUP_ID)).rejects.toMatchObject({ code: 'ERR_UPSTREAM_RATE_LIMITED' })
    }
    expect(emulator.count()).toBe(1)
    await expect(resolver.check(bob, group(ORG_ID))).rejects.toMatchObject({ code: 'ERR_UPSTREAM_RATE_LIMITED', retryAfter: 18 })
    // A spray of random tokens costs the service nothing either.
    for (let i = 0; i < 50; i++) {
      await expect(resolver.check(`random-${i}-${Math.random().toString(36).slice(2)}`, group(ORG_ID))).rejects.toMatchObject({
        code: 'ERR_UPSTREAM_RATE_LIMITED',
      })
    }
    expect(emulator.count()).toBe(1)
    expect(events).toContainEqual(
      expect.objectContaining({ type: 'upstream_rejected', endpoint: 'me/groups', code: 'ERR_UPSTREAM_RATE_LIMITED', retryAfter: 18 }),
    )
    expect(JSON.stringify(events)).not.toContain(alice)

    clock += 18_000
    expect(await resolver.check(alice, group(ORG_ID))).toMatchObject({ allowed: true })
    expect(await resolver.check(bob, group(ORG_ID))).toMatchObject({ allowed: true })
    expect(emulator.count()).toBe(3)
  })

  it('an HTTP-date Retry-After works too', async () => {
    const alice = emulator.issueToken('alice')
    // The client reads a date against the real clock; the back-off runs on the resolver's.
    const date = new Date(Date.now() + 20_000).toUTCString()
    emulator.faults.add({ kind: 'status', status: 429, body: '', headers: { 'retry-after': date } }, { token: alice, times: 1 })
    await expect(resolver.check(alice, group(ORG_ID))).rejects.toMatchObject({ code: 'ERR_UPSTREAM_RATE_LIMITED' })
    await expect(resolver.check(alice, group(ORG_ID))).rejects.toMatchObject({ code: 'ERR_UPSTREAM_RATE_LIMITED' })
    expect(emulator.count()).toBe(1)
  })

  it('a 429 without Retry-After does not block the token', async () => {
    const alice = emulator.issueToken('alice')
    emulator.faults.add({ kind: 'status', status: 429, body: '' }, { token: alice, times: 1 })
    await expect(resolver.check(alice, group(ORG_ID))).rejects.toMatchObject({ code: 'ERR_UPSTREAM_RATE_LIMITED' })
    expect(await resolver.check(alice, group(ORG_ID))).toMatchObject({ allowed: true })
    expect(emulator.count()).toBe(2)
  })

  it('warm entries are still served while the service is backed off', async () => {
    const alice = emulator.issueToken('alice')
    const bob = emulator.issueToken('bob')
    expect(await resolver.check(alice, group(ORG_ID))).toMatchObject({ allowed: true })
    expect(await resolver.check(bob, group(ORG_ID))).toMatchObject({ allowed: true })
    emulator.faults.add({ kind: 'status', status: 429, body: '', headers: { 'retry-after': '60' } }, { token: alice, times: 1 })
    await expect(resolver.membership(alice, ADHOC_GROUP_ID)).rejects.toMatchObject({ code: 'ERR_UPSTREAM_RATE_LIMITED' })
    expect(await resolver.check(alice, group(ORG_ID))).toMatchObject({ allowed: true })
    expect(await resolver.check(bob, group(ORG_ID))).toMatchObject({ allowed: true })
    expect(emulator.count()).toBe(3)
  })

  it("the emulator's own rate limit (per client address) is honoured the same way", async () => {
    const limited = await startEmulator({ rateLimit: { limit: 2, windowMs: 60_000 } })
    const limitedResolver = createMembershipResolver({ baseUrl: limited.baseUrl, now: () => clock })
    try {
      const alice = limited.issueToken('alice')
      const carol = limited.issueToken('carol')
      await limitedResolver.membership(alice, ORG_ID)
      await limitedResolver.membership(alice, ADHOC_GROUP_ID)
      const failure = await limitedResolver.check(alice, group(ORG_ID)).catch((error: unknown) => error)
      expect(failure).toMatchObject({ code: 'ERR_UPSTREAM_RATE_LIMITED', upstreamStatus: 429 })
      const retryAfter = (failure as UpstreamError).retryAfter!
      expect(retryAfter).toBeGreaterThan(0)
      for (let i = 0; i < 10; i++) await expect(limitedResolver.check(alice, group(ORG_ID))).rejects.toBeInstanceOf(UpstreamError)
      expect(limited.count()).toBe(3)
      // Another token does not try: the limit is per client address, not per token.
      await expect(limitedResolver.check(carol, group(ORG_ID))).rejects.toMatchObject({ code: 'ERR_UPSTREAM_RATE_LIMITED' })
      expect(limited.count()).toBe(3)
    } finally {
      await limitedResolver.close()
      await limited.close()
    }
  })

  it('through an Express guard: 503 with the remaining Retry-After, handler not run', async () => {
    let guardClock = T0
    let handlerCalls = 0
    const guard = createGuard({ baseUrl: emulator.baseUrl, now: () => guardClock })
    const app = express()
    app.get('/staff', guard.requireGroup(ORG_ID), (_req, res) => {
      handlerCalls++
      res.json({ ok: true })
    })
    const server: Server = createServer(app)
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/staff`
    try {
      const alice = emulator.issueToken('alice')
      emulator.faults.add({ kind: 'status', status: 429, body: '', headers: { 'retry-after': '40' } }, { token: alice, times: 1 })
      const get = () => fetch(url, { headers: { authorization: `Bearer ${alice}` } })
      const first = await get()
      expect(first.status).toBe(503)
      expect(first.headers.get('retry-after')).toBe('40')
      guardClock += 15_000
      const second = await get()
      expect(second.status).toBe(503)
      expect(second.headers.get('retry-after')).toBe('25')
      expect(await second.json()).toMatchObject({ error: 'temporarily_unavailable' })
      expect(emulator.count()).toBe(1)
      expect(handlerCalls).toBe(0)
    } finally {
      await guard.resolver.close()
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  })
})
