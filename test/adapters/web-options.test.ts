/**
 * Options and declaration-time checks of the Fastify, Hono and fetch adapters, and
 * `getToken` through each of them.
 */
import Fastify from 'fastify'
import { Hono } from 'hono'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createGuard as createFastifyGuard } from '../../adapters/fastify/index.js'
import { createGuard as createFetchGuard } from '../../adapters/fetch/index.js'
import { createGuard as createHonoGuard } from '../../adapters/hono/index.js'
import { createMembershipResolver, InvalidOptionError } from '../../src/index.js'
import { ORG_ID, startEmulator, type Emulator } from '../../testing/index.js'

let emulator: Emulator
beforeAll(async () => {
  emulator = await startEmulator()
})
afterAll(async () => {
  await emulator.close()
})

const CREATORS = [
  ['fastify', createFastifyGuard],
  ['hono', createHonoGuard],
  ['fetch', createFetchGuard],
] as const

describe.each(CREATORS)('%s createGuard', (_name, create) => {
  it.each([[undefined], [null], ['https://groups-api.example.org/groups'], [42]])(
    'refuses %j as options with an InvalidOptionError',
    (bad) => {
      expect(() => create(bad as never)).toThrow(InvalidOptionError)
    },
  )

  // Each option named in its error: test/adapters/options.test.ts, over every adapter.
  it('rejects an invalid baseUrl or realm naming it', () => {
    expect(() => create({ baseUrl: 'not a url' })).toThrow(/baseUrl/)
    expect(() => create({ baseUrl: emulator.baseUrl, realm: 'a\r\nb' })).toThrow(/realm/)
  })

  it('validates guard arguments when the route is declared', async () => {
    const guard = create({ baseUrl: emulator.baseUrl })
    expect(() => guard.requireGroup('..')).toThrow(/refused/)
    expect(() => guard.requireGroup(ORG_ID, 'emperor')).toThrow(/Unknown role/)
    expect(() => guard.requireAnyGroup([])).toThrow(/non-empty/)
    expect(() => guard.requireAllGroups('fc:org:example.org' as never)).toThrow(/non-empty array/)
    expect(() => guard.require({ kind: 'group', groupId: ORG_ID } as never)).toThrow(/requirement/)
    await guard.resolver.close()
  })

  it('shares a resolver', async () => {
    const resolver = createMembershipResolver({ baseUrl: emulator.baseUrl })
    expect(create({ resolver }).resolver).toBe(resolver)
    await resolver.close()
  })
})

describe('getToken', () => {
  it('reads the token elsewhere in each framework, with the same checks as a header', async () => {
    const fastify = Fastify()
    const fastifyGuard = createFastifyGuard({
      baseUrl: emulator.baseUrl,
      getToken: (request) => request.headers['x-token'] as string | undefined,
    })
    fastify.get('/', { onRequest: fastifyGuard.requireGroup(ORG_ID, 'admin') }, async () => 'ok')
    const hono = new Hono()
    const honoGuard = createHonoGuard({ baseUrl: emulator.baseUrl, getToken: (c) => c.req.header('x-token') })
    hono.get('/', honoGuard.requireGroup(ORG_ID, 'admin'), (c) => c.text('ok'))
    const fetchGuard = createFetchGuard({ baseUrl: emulator.baseUrl, getToken: (request) => request.headers.get('x-token') ?? undefined })
    const handler = fetchGuard.protect(fetchGuard.requireGroup(ORG_ID, 'admin'), () => new Response('ok'))

    const statusOf = {
      fastify: async (headers: Record<string, string>) => (await fastify.inject({ url: '/', headers })).statusCode,
      hono: async (headers: Record<string, string>) => (await hono.request('/', { headers })).status,
      fetch: async (headers: Record<string, string>) => (await handler(new Request('http://app.example/', { headers }))).status,
    }
    for (const status of Object.values(statusOf)) {
      expect(await status({ 'x-token': emulator.issueToken('alice') })).toBe(200)
      expect(await status({ authorization: `Bearer ${emulator.issueToken('alice')}` })).toBe(401)
      expect(await status({ 'x-token': 'bad token!' })).toBe(400)
      expect(await status({ 'x-token': emulator.issueToken('bob') })).toBe(403)
    }
    await fastify.close()
  })
})
