/**
 * Smoke tests: the examples run against the emulator and do what their comments say.
 */
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { request } from 'undici'
import { startEmulator, type Emulator } from 'voot-guard/testing'
import { createApp as createExpressApp } from '../../examples/express/app.js'
import { createApp as createKoaApp } from '../../examples/koa/app.js'
import { demoApp } from '../../demo/frameworks.js'
import { mayPublish } from '../../examples/service/check.js'

let emulator: Emulator
beforeAll(async () => {
  emulator = await startEmulator()
})
afterAll(async () => {
  await emulator.close()
})

async function serve(listener: Parameters<typeof import('node:http').createServer>[1]): Promise<{ url: string; server: Server }> {
  const { createServer } = await import('node:http')
  const server = createServer(listener)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server }
}

async function status(url: string, token?: string): Promise<number> {
  const response = await request(url, { headers: token === undefined ? {} : { authorization: `Bearer ${token}` } })
  await response.body.dump()
  return response.statusCode
}

// Imported by its address, so that the repo's type check (no experimentalDecorators) does not
// follow it: examples/nestjs/tsconfig.json checks it with Nest's decorator settings.
const nestExample = new URL('../../examples/nestjs/app.ts', import.meta.url).href

/** The Nest example as a request listener (its Express instance), and how to close it. */
async function nestListener(baseUrl: string) {
  const { createApp } = (await import(nestExample)) as { createApp(baseUrl: string): Promise<import('@nestjs/common').INestApplication> }
  const app = await createApp(baseUrl)
  await app.init()
  return { listener: app.getHttpAdapter().getInstance() as Listener, close: () => app.close() }
}

type Listener = Parameters<typeof import('node:http').createServer>[1]

describe.each([
  ['express', async (baseUrl: string) => ({ listener: createExpressApp(baseUrl) as Listener, close: async () => {} })],
  ['koa', async (baseUrl: string) => ({ listener: createKoaApp(baseUrl).callback() as Listener, close: async () => {} })],
  // The other examples as the demo serves them (examples/<name>/app.ts).
  ['fastify', async (baseUrl: string) => ({ listener: (await demoApp('fastify', baseUrl)).listener as Listener, close: async () => {} })],
  ['hono', async (baseUrl: string) => ({ listener: (await demoApp('hono', baseUrl)).listener as Listener, close: async () => {} })],
  ['fetch', async (baseUrl: string) => ({ listener: (await demoApp('fetch', baseUrl)).listener as Listener, close: async () => {} })],
  ['nestjs', nestListener],
] as const)('examples/%s', (_name, factory) => {
  let url: string
  let server: Server
  let close: () => Promise<void>
  beforeAll(async () => {
    const app = await factory(emulator.baseUrl)
    close = app.close
    ;({ url, server } = await serve(app.listener))
  })
  afterAll(async () => {
    server.closeAllConnections()
    server.close()
    await close()
  })

  it('allows an employee, forbids a student, asks for a token, and fails closed', async () => {
    expect(await status(`${url}/api/staff`, emulator.issueToken('alice'))).toBe(200)
    expect(await status(`${url}/api/staff`, emulator.issueToken('bob'))).toBe(403)
    expect(await status(`${url}/api/staff`)).toBe(401)
    const token = emulator.issueToken('alice')
    const fault = emulator.faults.add({ kind: 'status', status: 500 }, { token })
    expect(await status(`${url}/api/staff`, token)).toBe(503)
    emulator.faults.remove(fault)
    expect(await status(`${url}/api/me`, emulator.issueToken('erin'))).toBe(200)
    // The guide's third route, in every example: bob is enrolled in INF1000, alice is not.
    expect(await status(`${url}/api/inf1000`, emulator.issueToken('bob'))).toBe(200)
    expect(await status(`${url}/api/inf1000`, emulator.issueToken('alice'))).toBe(403)
  })
})

describe('examples/nestjs, its own rules', () => {
  it('guards every route but Public() ones; a class requirement and a method one both hold', async () => {
    const app = await nestListener(emulator.baseUrl)
    const { url, server } = await serve(app.listener)
    expect(await status(`${url}/api/me`)).toBe(401)
    expect(await status(`${url}/api/health`)).toBe(200)
    expect(await status(`${url}/api/courses/inf1000`, emulator.issueToken('bob'))).toBe(200)
    expect(await status(`${url}/api/courses/inf1000`, emulator.issueToken('alice'))).toBe(403)
    server.closeAllConnections()
    server.close()
    await app.close()
  })
})

describe('examples/service', () => {
  it('decides with resolver.check, and says so on the console', async () => {
    // What the example prints is caught and checked here, not left in the run's output.
    const log = vi.spyOn(console, 'log').mockImplementation(() => {})
    const error = vi.spyOn(console, 'error').mockImplementation(() => {})
    try {
      expect(await mayPublish(emulator.baseUrl, emulator.issueToken('alice'))).toBe(true)
      expect(await mayPublish(emulator.baseUrl, emulator.issueToken('bob'))).toBe(false)
      const token = emulator.issueToken('alice')
      emulator.faults.add({ kind: 'status', status: 502 }, { token })
      await expect(mayPublish(emulator.baseUrl, token)).rejects.toMatchObject({ code: 'ERR_UPSTREAM_STATUS' })
      expect(log.mock.calls).toEqual([['allowed'], ['denied: role_too_low']])
      expect(error.mock.calls).toEqual([['group service unavailable (ERR_UPSTREAM_STATUS)']])
    } finally {
      log.mockRestore()
      error.mockRestore()
    }
  })
})
