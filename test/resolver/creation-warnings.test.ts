/**
 * Warnings where a mistake costs in production (issue #52 item 6): `allowInsecureHttp` with
 * `NODE_ENV=production`, and guards or resolvers created per request (one warning per
 * `baseUrl`, naming the fix), through the resolver's `logger` or `process.emitWarning`.
 */
import { createServer } from 'node:http'
import express from 'express'
import { request } from 'undici'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { createGuard } from '../../adapters/express/index.js'
import { createMembershipResolver, type MembershipResolver } from '../../src/index.js'
import { ORG_ID, startEmulator, type Emulator } from '../../testing/index.js'
import { closer, listen } from '../support/apps.js'

let emulator: Emulator
beforeAll(async () => {
  emulator = await startEmulator()
})
afterAll(async () => {
  await emulator.close()
})
afterEach(() => {
  vi.unstubAllEnvs()
})

function recorder(): { warn(message: string): void; messages: string[] } {
  const messages: string[] = []
  return { messages, warn: (message) => messages.push(message) }
}

describe('allowInsecureHttp with NODE_ENV=production', () => {
  it('warns once per resolver, through its logger, naming the option and the fix', async () => {
    vi.stubEnv('NODE_ENV', 'production')
    const logger = recorder()
    const resolver = createMembershipResolver({ baseUrl: 'http://groups.internal.example/groups', allowInsecureHttp: true, logger })
    expect(logger.messages).toEqual([
      'voot-guard: allowInsecureHttp is on with NODE_ENV=production (baseUrl http://groups.internal.example/groups): bearer tokens may travel in clear text over plain http:. ' +
        'Use an https: baseUrl and remove allowInsecureHttp; it is meant for a test rig inside a trusted network.',
    ])
    // A second resolver says it again (its own logger may be another); the first one never does.
    const other = recorder()
    const second = createMembershipResolver({ baseUrl: 'http://groups.internal.example/groups', allowInsecureHttp: true, logger: other })
    expect(other.messages).toHaveLength(1)
    expect(logger.messages).toHaveLength(1)
    await Promise.all([resolver.close(), second.close()])
  })

  it('goes to process.emitWarning with its code without a logger; nothing outside production or without the option', async () => {
    const warnings: { message: string; code?: string }[] = []
    const listener = (warning: Error & { code?: string }) => warnings.push(warning)
    process.on('warning', listener)
    try {
      vi.stubEnv('NODE_ENV', 'production')
      const resolvers = [
        createMembershipResolver({ baseUrl: 'http://groups.test.example/groups', allowInsecureHttp: true }),
        createMembershipResolver({ baseUrl: 'https://groups.test.example/groups' }),
      ]
      vi.stubEnv('NODE_ENV', 'development')
      resolvers.push(createMembershipResolver({ baseUrl: 'http://groups.test.example/groups', allowInsecureHttp: true }))
      // process.emitWarning emits on the next tick.
      await new Promise((resolve) => setImmediate(resolve))
      const insecure = warnings.filter((warning) => warning.code === 'VOOT_GUARD_INSECURE_HTTP')
      expect(insecure).toHaveLength(1)
      expect(insecure[0]?.message).toMatch(/^voot-guard: allowInsecureHttp is on with NODE_ENV=production/)
      await Promise.all(resolvers.map((resolver) => resolver.close()))
    } finally {
      process.off('warning', listener)
    }
  })
})

describe('guards created per request', () => {
  it('200 requests that each create a guard give one warning naming the fix, once', async () => {
    vi.stubEnv('NODE_ENV', 'production')
    const logger = recorder()
    const made: MembershipResolver[] = []
    const app = express()
    // The mistake: the guard made inside the handler, so that every request has its own.
    app.get('/', (req, res, next) => {
      const guard = createGuard({ baseUrl: emulator.baseUrl, logger })
      made.push(guard.resolver)
      guard.requireGroup(ORG_ID, 'admin')(req, res, next)
    })
    app.get('/', (_req, res) => res.send('ok'))
    const server = createServer(app)
    const url = await listen(server)
    const token = emulator.issueToken('alice')
    for (let i = 0; i < 200; i++) {
      const response = await request(url, { headers: { authorization: `Bearer ${token}` } })
      await response.body.dump()
      expect(response.statusCode).toBe(200)
    }
    await closer(server)()
    await Promise.all(made.map((resolver) => resolver.close()))
    expect(made).toHaveLength(200)
    const perRequest = logger.messages.filter((message) => message.includes('look created per request'))
    expect(perRequest).toEqual([
      `voot-guard: 50 resolvers for ${emulator.baseUrl} were created within 10 seconds: guards (createGuard) or resolvers look created per request, ` +
        'so every request starts with an empty cache and makes its own calls and connections to the group service. ' +
        'Create the guard once, at start-up, and use it for every request (several guards can share one resolver through the `resolver` option).',
    ])
  })

  it('a guard made once, and the few resolvers of a start-up, give none', async () => {
    vi.stubEnv('NODE_ENV', 'production')
    const logger = recorder()
    const resolvers = Array.from({ length: 20 }, () =>
      createMembershipResolver({ baseUrl: 'https://groups.startup.example/groups', logger }),
    )
    // Other addresses count apart.
    for (let i = 0; i < 40; i++) resolvers.push(createMembershipResolver({ baseUrl: `https://groups-${i}.startup.example/groups`, logger }))
    const guard = createGuard({ baseUrl: emulator.baseUrl.replace('127.0.0.1', 'localhost'), logger })
    const app = express()
    app.get('/', guard.requireGroup(ORG_ID, 'admin'), (_req, res) => res.send('ok'))
    const server = createServer(app)
    const url = await listen(server)
    const token = emulator.issueToken('alice')
    for (let i = 0; i < 100; i++) {
      const response = await request(url, { headers: { authorization: `Bearer ${token}` } })
      await response.body.dump()
      expect(response.statusCode).toBe(200)
    }
    await closer(server)()
    await Promise.all([...resolvers, guard.resolver].map((resolver) => resolver.close()))
    expect(logger.messages).toEqual([])
  })

  it('are not counted under NODE_ENV=test, where a suite makes a guard per test on purpose', async () => {
    vi.stubEnv('NODE_ENV', 'test')
    const logger = recorder()
    const resolvers = Array.from({ length: 120 }, () =>
      createMembershipResolver({ baseUrl: 'https://groups.suite.example/groups', logger }),
    )
    await Promise.all(resolvers.map((resolver) => resolver.close()))
    expect(logger.messages).toEqual([])
    // Without it, the same makes the one warning.
    vi.stubEnv('NODE_ENV', '')
    const more = Array.from({ length: 60 }, () => createMembershipResolver({ baseUrl: 'https://groups.suite.example/groups', logger }))
    await Promise.all(more.map((resolver) => resolver.close()))
    expect(logger.messages).toHaveLength(1)
    expect(logger.messages[0]).toMatch(
      /^voot-guard: 50 resolvers for https:\/\/groups\.suite\.example\/groups were created within 10 seconds: .* Create the guard once, at start-up/,
    )
  })
})
