/**
 * What the Hono adapter offers beyond the contract table: the typed `voot` variable, the
 * exact content type, delegated `HTTPException`s, the synchronous warm path.
 */
import { Hono } from 'hono'
import { HTTPException } from 'hono/http-exception'
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest'
import { createGuard, type HonoGuard, type VootEnv } from '../../adapters/hono/index.js'
import type { VootContext, VootError } from '../../src/index.js'
import { ORG_ID, startEmulator, type Emulator } from '../../testing/index.js'

let emulator: Emulator
let guard: HonoGuard
beforeAll(async () => {
  emulator = await startEmulator()
  guard = createGuard({ baseUrl: emulator.baseUrl, realm: 'hono' })
})
afterAll(async () => {
  await guard.resolver.close()
  await emulator.close()
})

const bearer = (user: string): Record<string, string> => ({ authorization: `Bearer ${emulator.issueToken(user)}` })

describe('guarded routes', () => {
  it('hand the handler a typed c.var.voot, also on an app without VootEnv', async () => {
    const app = new Hono()
    app.get('/x', guard.requireGroup(ORG_ID, 'admin'), (c) => {
      expectTypeOf(c.var.voot).toEqualTypeOf<VootContext>()
      expectTypeOf(c.get('voot')).toEqualTypeOf<VootContext>()
      return c.json({ reason: c.var.voot.decision.reason, same: c.get('voot') === c.var.voot })
    })
    expect(await (await app.request('/x', { headers: bearer('alice') })).json()).toEqual({ reason: 'member', same: true })
  })

  it('refuse with the exact content type and no token in the body', async () => {
    const app = new Hono<VootEnv>()
    app.use('/api/*', guard.authenticate())
    app.get('/api/me', (c) => c.json(c.var.voot.decision))
    const token = 'not-a-known-token'
    const response = await app.request('/api/me', { headers: { authorization: `Bearer ${token}` } })
    expect(response.status).toBe(401)
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8')
    expect(response.headers.get('www-authenticate')).toBe('Bearer realm="hono", error="invalid_token"')
    const text = await response.text()
    expect(JSON.parse(text)).toMatchObject({ error: 'invalid_token' })
    expect(text).not.toContain(token)
  })
})

describe('authenticate({ optional: true })', () => {
  it('leaves c.var.voot undefined (typed so) without credentials, and answers as authenticate() with any', async () => {
    const app = new Hono()
    app.get('/', guard.authenticate({ optional: true }), (c) => {
      expectTypeOf(c.var.voot).toEqualTypeOf<VootContext | undefined>()
      return c.json({ reason: c.var.voot?.decision.reason ?? null, set: 'voot' in c.var })
    })
    expect(await (await app.request('/')).json()).toEqual({ reason: null, set: false })
    expect(await (await app.request('/', { headers: bearer('erin') })).json()).toEqual({ reason: 'authenticated', set: true })
    const refused = await app.request('/', { headers: { authorization: 'Basic x' } })
    expect(refused.status).toBe(401)
    expect(refused.headers.get('www-authenticate')).toBe('Bearer realm="hono"')
  })
})

describe('two Authorization headers', () => {
  it('are a 400 both from Node (raw header list) and from Web Headers (one joined value)', async () => {
    const app = new Hono()
    app.get('/x', guard.authenticate(), (c) => c.text('ok'))
    const headers = new Headers([
      ['authorization', `Bearer ${emulator.issueToken('alice')}`],
      ['authorization', 'Basic eDp5'],
    ])
    const web = await app.request('/x', { headers })
    expect(web.status).toBe(400)
    const rawHeaders = ['Authorization', 'Basic eDp5', 'authorization', `Bearer ${emulator.issueToken('alice')}`]
    const node = await app.request('/x', { headers: { authorization: 'Basic eDp5' } }, { incoming: { rawHeaders } })
    expect(node.status).toBe(400)
    expect(node.headers.get('www-authenticate')).toBe('Bearer realm="hono", error="invalid_request"')
  })
})

describe("errorHandling: 'delegate'", () => {
  it("throws an HTTPException whose res is the contract's answer, which Hono's default handler sends", async () => {
    const delegating = createGuard({ baseUrl: emulator.baseUrl, realm: 'd', errorHandling: 'delegate' })
    const seen: unknown[] = []
    const app = new Hono()
    app.get('/x', delegating.requireGroup(ORG_ID, 'admin'), (c) => c.text('ok'))
    const withHandler = new Hono()
    withHandler.onError((error, c) => {
      seen.push(error)
      return error instanceof HTTPException ? error.getResponse() : c.text('bug', 500)
    })
    withHandler.route('/', app)
    const token = emulator.issueToken('bob')
    for (const server of [app, withHandler]) {
      const response = await server.request('/x', { headers: { authorization: `Bearer ${token}` } })
      expect(response.status).toBe(403)
      expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8')
      expect(await response.json()).toMatchObject({ error: 'forbidden' })
    }
    const error = seen[0] as HTTPException
    expect(error).toBeInstanceOf(HTTPException)
    expect(error.status).toBe(403)
    expect((error.cause as VootError).code).toBe('ERR_FORBIDDEN')
    expect(error.message + JSON.stringify(error)).not.toContain(token)
    const missing = await app.request('/x')
    expect(missing.headers.get('www-authenticate')).toBe('Bearer realm="d"')
    await delegating.resolver.close()
  })
})

describe('the warm path', () => {
  it('reaches the handler synchronously on a warm cache', async () => {
    const app = new Hono()
    const ran: boolean[] = []
    let handled = false
    app.use(async (_c, next) => {
      handled = false
      const downstream = next()
      ran.push(handled)
      await downstream
    })
    app.get('/x', guard.requireGroup(ORG_ID, 'admin'), (c) => {
      handled = true
      return c.text('ok')
    })
    const headers = bearer('alice')
    expect((await app.request('/x', { headers })).status).toBe(200)
    expect((await app.request('/x', { headers })).status).toBe(200)
    expect(ran).toEqual([false, true])
  })
})
