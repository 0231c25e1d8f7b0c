/**
 * What the Fastify adapter offers beyond the contract table: the plugin and its
 * decorations, `@fastify/auth` compositions, delegated errors, the synchronous warm path.
 */
import fastifyAuth from '@fastify/auth'
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify'
import { afterAll, beforeAll, describe, expect, expectTypeOf, it, vi } from 'vitest'
import vootGuard, { createGuard } from '../../adapters/fastify/index.js'
import type { VootContext } from '../../src/index.js'
import { ADHOC_GROUP_ID, ORG_ID, startEmulator, type Emulator } from '../../testing/index.js'

let emulator: Emulator
beforeAll(async () => {
  emulator = await startEmulator()
})
afterAll(async () => {
  await emulator.close()
})

const bearer = (user: string): Record<string, string> => ({ authorization: `Bearer ${emulator.issueToken(user)}` })

describe('the plugin', () => {
  let app: FastifyInstance
  beforeAll(async () => {
    app = Fastify()
    await app.register(vootGuard, { baseUrl: emulator.baseUrl, realm: 'plugin' })
    app.get('/open', async (request) => ({ voot: request.voot }))
    app.get('/staff', { onRequest: app.voot.requireGroup(ORG_ID, 'admin') }, async (request) => {
      expectTypeOf(request.voot).toEqualTypeOf<VootContext | null>()
      return { reason: request.voot?.decision.reason }
    })
    // The decorations reach routes of child contexts too (fastify-plugin).
    await app.register(async (child) => {
      child.get('/child', { onRequest: child.voot.authenticate() }, async (request) => ({ reason: request.voot?.decision.reason }))
    })
  })
  afterAll(() => app.close())

  it('decorates app.voot with the guards and request.voot with null', async () => {
    expect(Object.keys(app.voot).sort()).toEqual([
      'authenticate',
      'health',
      'ready',
      'require',
      'requireAllGroups',
      'requireAnyGroup',
      'requireGroup',
      'resolver',
    ])
    expect(app.hasRequestDecorator('voot')).toBe(true)
    expect((await app.inject({ url: '/open' })).json()).toEqual({ voot: null })
  })

  it('guards routes with the decorated guards, in child contexts too', async () => {
    const staff = await app.inject({ url: '/staff', headers: bearer('alice') })
    expect(staff.json()).toEqual({ reason: 'member' })
    const refused = await app.inject({ url: '/staff', headers: bearer('bob') })
    expect(refused.statusCode).toBe(403)
    expect(refused.headers['content-type']).toBe('application/json; charset=utf-8')
    expect(refused.json()).toMatchObject({ error: 'forbidden' })
    expect((await app.inject({ url: '/child', headers: bearer('erin') })).json()).toEqual({ reason: 'authenticated' })
    expect((await app.inject({ url: '/child' })).headers['www-authenticate']).toBe('Bearer realm="plugin"')
  })

  it('fails registration with the option named', async () => {
    const broken = Fastify()
    await expect(broken.register(vootGuard, { baseUrl: emulator.baseUrl, realm: '' }).ready()).rejects.toThrow(/realm/)
  })
})

describe('delegated errors', () => {
  it("reach Fastify's default error handler, which sends statusCode and headers", async () => {
    const app = Fastify()
    const guard = createGuard({ baseUrl: emulator.baseUrl, realm: 'r', errorHandling: 'delegate' })
    app.get('/x', { onRequest: guard.requireGroup(ORG_ID, 'admin') }, async () => 'ok')
    const missing = await app.inject({ url: '/x', headers: { authorization: 'Basic abc' } })
    expect(missing.statusCode).toBe(401)
    expect(missing.headers['www-authenticate']).toBe('Bearer realm="r"')
    expect(missing.json()).toMatchObject({ code: 'ERR_TOKEN_MISSING', statusCode: 401 })
    const token = emulator.issueToken('bob')
    const forbidden = await app.inject({ url: '/x', headers: { authorization: `Bearer ${token}` } })
    expect(forbidden.statusCode).toBe(403)
    expect(forbidden.json()).toMatchObject({ code: 'ERR_FORBIDDEN' })
    expect(forbidden.body).not.toContain(token)
    await app.close()
  })
})

describe('@fastify/auth compositions', () => {
  let app: FastifyInstance
  const seen: Array<string | undefined> = []
  beforeAll(async () => {
    app = Fastify()
    await app.register(fastifyAuth)
    await app.register(vootGuard, { baseUrl: emulator.baseUrl, realm: 'auth', errorHandling: 'delegate' })
    const staff = app.voot.requireGroup(ORG_ID, 'admin')
    const adhoc = app.voot.requireGroup(ADHOC_GROUP_ID)
    const handler = async (request: FastifyRequest) => {
      seen.push(request.voot?.decision.reason)
      return 'ok'
    }
    app.get('/or', { onRequest: app.auth([staff, adhoc]) }, handler)
    app.get('/and', { onRequest: app.auth([staff, adhoc], { relation: 'and' }) }, handler)
    const apiKey = (request: FastifyRequest, _reply: FastifyReply, done: (error?: Error) => void): void => {
      done(request.headers['x-api-key'] === 'k' ? undefined : new Error('no key'))
    }
    app.get('/key-or-staff', { onRequest: app.auth([apiKey, staff]) }, handler)
  })
  afterAll(() => app.close())

  it("lets a request through when one guard of an 'or' allows it", async () => {
    expect((await app.inject({ url: '/or', headers: bearer('alice') })).statusCode).toBe(200)
    // bob is no employee, but a member of the ad-hoc group: the first refusal does not answer.
    const bob = await app.inject({ url: '/or', headers: bearer('bob') })
    expect(bob.statusCode).toBe(200)
    expect(seen.at(-1)).toBe('member')
    const erin = await app.inject({ url: '/or', headers: bearer('erin') })
    expect(erin.statusCode).toBe(403)
    expect(erin.json()).toMatchObject({ code: 'ERR_FORBIDDEN' })
  })

  it("needs every guard of an 'and'", async () => {
    expect((await app.inject({ url: '/and', headers: bearer('alice') })).statusCode).toBe(200)
    expect((await app.inject({ url: '/and', headers: bearer('bob') })).statusCode).toBe(403)
  })

  it("composes with other schemes, keeping the guard's challenge", async () => {
    expect((await app.inject({ url: '/key-or-staff', headers: { 'x-api-key': 'k' } })).statusCode).toBe(200)
    expect((await app.inject({ url: '/key-or-staff', headers: bearer('alice') })).statusCode).toBe(200)
    const none = await app.inject({ url: '/key-or-staff' })
    expect(none.statusCode).toBe(401)
    expect(none.headers['www-authenticate']).toBe('Bearer realm="auth"')
  })
})

describe('the warm path', () => {
  it('allows a request with cached answers synchronously: done() runs before the hook returns', async () => {
    const guard = createGuard({ baseUrl: emulator.baseUrl })
    const hook = guard.requireGroup(ORG_ID, 'admin')
    const request = {
      raw: { rawHeaders: ['Authorization', `Bearer ${emulator.issueToken('alice')}`] },
      voot: null,
    } as unknown as FastifyRequest
    const reply = {} as FastifyReply
    const run = (): { calls: unknown[][]; returned: unknown } => {
      const calls: unknown[][] = []
      const returned = hook.call(Fastify(), request, reply, (...args: unknown[]) => calls.push(args))
      return { calls, returned }
    }
    const cold = run()
    expect(cold.calls).toEqual([])
    await vi.waitFor(() => expect(cold.calls).toEqual([[]]))
    const warm = run()
    expect(warm.returned).toBeUndefined()
    expect(warm.calls).toEqual([[]])
    expect(request.voot?.decision.allowed).toBe(true)
    await guard.resolver.close()
  })
})
