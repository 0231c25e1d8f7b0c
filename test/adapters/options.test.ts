/**
 * Adapter options beyond the contract table: `getToken`, a shared `resolver`, option checks.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import express from 'express'
import Koa from 'koa'
import { request } from 'undici'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createGuard as createExpressGuard } from '../../adapters/express/index.js'
import { createGuard as createKoaGuard } from '../../adapters/koa/index.js'
import { createGuard as createFastifyGuard } from '../../adapters/fastify/index.js'
import { createGuard as createHonoGuard } from '../../adapters/hono/index.js'
import { createGuard as createFetchGuard } from '../../adapters/fetch/index.js'
import { createMembershipResolver, InvalidOptionError } from '../../src/index.js'
import { startEmulator, type Emulator } from '../../testing/index.js'

let emulator: Emulator
beforeAll(async () => {
  emulator = await startEmulator()
})
afterAll(async () => {
  await emulator.close()
})

async function serve(listener: Parameters<typeof createServer>[1]): Promise<{ url: string; server: Server }> {
  const server = createServer(listener)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server }
}

async function statusOf(url: string, headers: Record<string, string>): Promise<number> {
  const response = await request(url, { headers })
  await response.body.dump()
  return response.statusCode
}

describe('getToken', () => {
  it('reads the token elsewhere (Express and Koa), with the same checks as a header', async () => {
    const fromHeader = (value: string | string[] | undefined): string | undefined => (typeof value === 'string' ? value : undefined)
    const app = express()
    const guard = createExpressGuard({ baseUrl: emulator.baseUrl, getToken: (req) => fromHeader(req.headers['x-token']) })
    app.get('/', guard.requireGroup('fc:org:example.org', 'admin'), (_req, res) => res.send('ok'))
    const koa = new Koa()
    const koaGuard = createKoaGuard({ baseUrl: emulator.baseUrl, getToken: (ctx) => fromHeader(ctx.headers['x-token']) })
    koa.use(koaGuard.requireGroup('fc:org:example.org', 'admin'))
    koa.use((ctx) => {
      ctx.body = 'ok'
    })
    for (const listener of [app, koa.callback()]) {
      const { url, server } = await serve(listener)
      expect(await statusOf(url, { 'x-token': emulator.issueToken('alice') })).toBe(200)
      expect(await statusOf(url, { authorization: `Bearer ${emulator.issueToken('alice')}` })).toBe(401)
      expect(await statusOf(url, { 'x-token': 'bad token!' })).toBe(400)
      expect(await statusOf(url, { 'x-token': emulator.issueToken('bob') })).toBe(403)
      server.closeAllConnections()
      server.close()
    }
  })
})

describe('authenticate({ optional: true }) with getToken', () => {
  it('is anonymous only when getToken found nothing (undefined or null); anything else is credentials', async () => {
    let found: unknown
    const getToken = () => found as never
    const app = express()
    const guard = createExpressGuard({ baseUrl: emulator.baseUrl, getToken })
    app.get('/', guard.authenticate({ optional: true }), (req, res) => res.json({ reason: req.voot?.decision.reason ?? null }))
    const fetchGuard = createFetchGuard({ baseUrl: emulator.baseUrl, getToken })
    const viaFetch = fetchGuard.protect(fetchGuard.authenticate({ optional: true }), (_request, voot) =>
      Response.json({ reason: voot?.decision.reason ?? null }),
    )
    const { url, server } = await serve(app)
    const cases: [unknown, number][] = [
      [undefined, 200],
      [null, 200],
      [{ token: undefined }, 200],
      [{ token: null }, 200],
      ['', 401],
      [{ token: '' }, 401],
      ['bad token!', 400],
      ['unknown-token', 401],
      [emulator.issueToken('erin'), 200],
      [{ token: emulator.issueToken('erin') }, 200],
    ]
    for (const [given, status] of cases) {
      found = given
      const anonymous = given == null || (typeof given === 'object' && (given as { token: unknown }).token == null)
      const response = await request(url)
      const fromFetch = await viaFetch(new Request('http://app.example/'))
      expect([response.statusCode, fromFetch.status], JSON.stringify(given)).toEqual([status, status])
      const body = await response.body.json()
      if (status === 200) {
        expect(body).toEqual({ reason: anonymous ? null : 'authenticated' })
        expect(await fromFetch.json()).toEqual(body)
      }
    }
    server.closeAllConnections()
    server.close()
  })

  it('refuses misspelt or mistyped options when the route is declared, naming the option', () => {
    const guard = createExpressGuard({ baseUrl: emulator.baseUrl })
    expect(() => guard.authenticate({ optinal: true } as never)).toThrow(InvalidOptionError)
    expect(() => guard.authenticate({ optinal: true } as never)).toThrow(/options\.optinal: is not an option of authenticate\(\)/)
    expect(() => guard.authenticate({ optional: 'yes' } as never)).toThrow(/options\.optional: must be a boolean/)
    expect(() => guard.authenticate('optional' as never)).toThrow(/authenticate\(\) takes an options object/)
    expect(() => guard.authenticate({ optional: false })).not.toThrow()
  })
})

describe('getToken with an expiry', () => {
  it('caps the cache at the token expiry and refuses an expired token without a call', async () => {
    let expiresAt = Date.now() + 60_000
    const token = emulator.issueToken('alice')
    const app = express()
    const guard = createExpressGuard({ baseUrl: emulator.baseUrl, getToken: () => ({ token, expiresAt }) })
    app.get('/', guard.requireGroup('fc:org:example.org', 'admin'), (_req, res) => res.send('ok'))
    const { url, server } = await serve(app)
    expect(await statusOf(url, {})).toBe(200)
    emulator.resetLog()
    expiresAt = Date.now() - 1
    expect(await statusOf(url, {})).toBe(401)
    expect(emulator.count()).toBe(0)
    server.closeAllConnections()
    server.close()
  })
})

describe('shared resolver', () => {
  it('lets several guards share one cache', async () => {
    const resolver = createMembershipResolver({ baseUrl: emulator.baseUrl })
    const a = createExpressGuard({ resolver })
    const b = createKoaGuard({ resolver, realm: 'other' })
    expect(a.resolver).toBe(resolver)
    expect(b.resolver).toBe(resolver)
    expect(() => createExpressGuard({ resolver, baseUrl: emulator.baseUrl })).toThrow(/either/)
    await resolver.close()
  })

  it.each([
    [{ realm: '' }, 'realm'],
    [{ retryAfter: 0 }, 'retryAfter'],
    [{ errorHandling: 'loud' }, 'errorHandling'],
    [{ getToken: 'header' }, 'getToken'],
    [{ resolver: {} }, 'resolver'],
  ])('rejects %j naming the option', (bad, name) => {
    for (const create of [createExpressGuard, createKoaGuard, createFastifyGuard, createHonoGuard, createFetchGuard]) {
      const attempt = (): unknown => create({ baseUrl: emulator.baseUrl, ...(bad as object) } as never)
      expect(attempt).toThrow(InvalidOptionError)
      expect(attempt).toThrow(name)
    }
  })
})

describe('missing options say what is missing (issue #52 item 4)', () => {
  const factories = [createExpressGuard, createKoaGuard, createFastifyGuard, createHonoGuard, createFetchGuard] as const

  it('createGuard() without options names baseUrl and shows a minimal call', () => {
    for (const createGuard of factories) {
      let missing: unknown
      try {
        ;(createGuard as (options?: unknown) => unknown)()
      } catch (error) {
        missing = error
      }
      expect(missing).toBeInstanceOf(InvalidOptionError)
      expect((missing as InvalidOptionError).option).toBe('baseUrl')
      expect((missing as Error).message).toContain(
        "options.baseUrl: is required: createGuard() was called without options; give it at least the group service's address, such as createGuard({ baseUrl: 'https://groups-api.dataporten.no/groups' })",
      )
    }
    expect(() => createMembershipResolver(undefined as never)).toThrow(
      /createMembershipResolver\(\) was called without options.*createMembershipResolver\(\{ baseUrl: /,
    )
  })

  it('a URL given in place of the options is shown as the baseUrl it was meant to be', () => {
    expect(() => createExpressGuard('https://groups-api.dataporten.no/groups' as never)).toThrow(
      'createGuard() takes an options object, not a string: createGuard({ baseUrl: "https://groups-api.dataporten.no/groups" })',
    )
    // Anything else is not repeated.
    expect(() => createExpressGuard('secret value' as never)).toThrow(/not a string: createGuard\(\{ baseUrl: 'https:\/\/groups-api/)
  })

  it("baseUrl: '' and a baseUrl left out say what to give, with examples of both shapes", () => {
    for (const options of [{ baseUrl: '' }, { baseUrl: process.env['VOOT_GUARD_UNSET_FOR_THIS_TEST'] as string }, {}]) {
      for (const createGuard of factories) {
        expect(() => createGuard(options)).toThrow(InvalidOptionError)
        expect(() => createGuard(options)).toThrow(/options\.baseUrl: is (empty|required)/)
        expect(() => createGuard(options)).toThrow(
          "'https://groups-api.dataporten.no/groups' (Feide, with its /groups prefix) or 'https://voot.surfconext.nl' (SURFconext)",
        )
      }
    }
    expect(() => createMembershipResolver({ baseUrl: '' })).toThrow(/is empty: .*\(an environment variable that is empty\?\)/)
    expect(() => createMembershipResolver({} as never)).toThrow(/is required: .*\(an environment variable that is not set\?\)/)
  })
})
