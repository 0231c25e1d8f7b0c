/**
 * Every factory refuses an unknown option key at creation, through the one check in
 * src/option-checks.ts: the error names the key and suggests the option it misspells.
 */
import express from 'express'
import { describe, expect, it } from 'vitest'
import { createGuard as createExpressGuard } from '../adapters/express/index.js'
import { createGuard as createKoaGuard } from '../adapters/koa/index.js'
import { createGuard as createFastifyGuard } from '../adapters/fastify/index.js'
import { createGuard as createHonoGuard } from '../adapters/hono/index.js'
import { createGuard as createFetchGuard } from '../adapters/fetch/index.js'
import { createOAuthClient } from '../oauth/index.js'
import { instrumentVootGuard } from '../otel/index.js'
import { createRedisCache } from '../redis/index.js'
import { rejectUnknownKeys } from '../src/option-checks.js'
import { createGuardCore } from '../src/adapter-kit.js'
import {
  createGroupsClient,
  createMembershipResolver,
  createServiceResolvers,
  group,
  InvalidArgumentError,
  InvalidOptionError,
} from '../src/index.js'
import { startEmulator } from '../testing/index.js'

const BASE_URL = 'http://127.0.0.1:9/groups'
const SECRET = 'k3Jx9-Qw2v7Rz0pLm4Nc8Ty1Ub6Hs5Ga2Fe'

/** The InvalidOptionError `make` throws (synchronously or as a rejection). */
async function refusal(make: () => unknown): Promise<InvalidOptionError> {
  try {
    await make()
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidOptionError)
    return error as InvalidOptionError
  }
  throw new Error('no error was thrown')
}

describe('rejectUnknownKeys', () => {
  it('names the key after its place and suggests the nearest known key', () => {
    expect(() => rejectUnknownKeys('cache.', { tll: 1 }, ['max', 'ttl'])).toThrow('options.cache.tll: is not an option (did you mean ttl?)')
    expect(() => rejectUnknownKeys('', { lockTTL: 1 }, ['lockTtl', 'timeout'])).toThrow('(did you mean lockTtl?)')
  })

  it('suggests nothing for a key far from every option, and passes known keys', () => {
    expect(() => rejectUnknownKeys('', { colour: 1 }, ['timeout'])).toThrow(/^options\.colour: is not an option$/)
    expect(() => rejectUnknownKeys('', { timeout: 1 }, ['timeout'])).not.toThrow()
  })

  it('suggests the nearest of several near keys, not the first listed', () => {
    expect(() => rejectUnknownKeys('', { maxBytez: 1 }, ['max', 'maxBytes'])).toThrow('(did you mean maxBytes?)')
    expect(() => rejectUnknownKeys('', { timout: 1 }, ['timeouts', 'timeout'])).toThrow('(did you mean timeout?)')
  })
})

describe('a misspelt key is refused at creation, naming it and the option it means', () => {
  const fakeRedis = { sendCommand: async () => null, duplicate: () => ({}) } as never
  const cases: [string, () => unknown, string, string][] = [
    ['createMembershipResolver', () => createMembershipResolver({ basUrl: BASE_URL } as never), 'basUrl', 'baseUrl'],
    ['createGroupsClient', () => createGroupsClient({ baseUrl: BASE_URL, timout: 5 } as never), 'timout', 'timeout'],
    ['createGuardCore', () => createGuardCore({ baseUrl: BASE_URL, reaml: 'x' } as never), 'reaml', 'realm'],
    [
      'createGuardCore with a resolver',
      () => createGuardCore({ resolver: createMembershipResolver({ baseUrl: BASE_URL }), retryAftr: 5 } as never),
      'retryAftr',
      'retryAfter',
    ],
    ['express createGuard', () => createExpressGuard({ baseUrl: BASE_URL, getTokn: () => 'x' } as never), 'getTokn', 'getToken'],
    ['koa createGuard', () => createKoaGuard({ baseUrl: BASE_URL, errorHandlng: 'respond' } as never), 'errorHandlng', 'errorHandling'],
    ['fastify createGuard', () => createFastifyGuard({ basUrl: BASE_URL } as never), 'basUrl', 'baseUrl'],
    ['hono createGuard', () => createHonoGuard({ baseUrl: BASE_URL, cache: { maxbytes: 1 } } as never), 'cache.maxbytes', 'maxBytes'],
    ['fetch createGuard', () => createFetchGuard({ baseUrl: BASE_URL, getToken: () => 'x', realn: 'y' } as never), 'realn', 'realm'],
    ['createRedisCache', () => createRedisCache({ client: fakeRedis, secret: SECRET, lockTTL: 100 } as never), 'lockTTL', 'lockTtl'],
    [
      'createRedisCache breaker',
      () => createRedisCache({ client: fakeRedis, secret: SECRET, breaker: { cooldwn: 1 } } as never),
      'breaker.cooldwn',
      'cooldown',
    ],
    ['startEmulator', () => startEmulator({ dialekt: 'openconext' } as never), 'dialekt', 'dialect'],
    ['startEmulator rateLimit', () => startEmulator({ rateLimit: { limit: 1, windowMS: 1 } } as never), 'rateLimit.windowMS', 'windowMs'],
    [
      'createOAuthClient',
      () => createOAuthClient({ authUrl: 'https://auth.example.org', clientId: 'c', scope: ['x'] } as never),
      'scope',
      'scopes',
    ],
    ['instrumentVootGuard', () => instrumentVootGuard({ tracerprovider: undefined } as never), 'tracerprovider', 'tracerProvider'],
  ]

  it.each(cases)('%s', async (_name, make, option, meant) => {
    const error = await refusal(make)
    expect(error.option).toBe(option)
    expect(error.message).toContain(`is not an option (did you mean ${meant}?)`)
  })

  it("the emulator's issueToken and issueClientToken", async () => {
    const emulator = await startEmulator()
    try {
      expect((await refusal(() => emulator.issueToken('alice', { expiresin: 60 } as never))).message).toContain('did you mean expiresIn?')
      expect((await refusal(() => emulator.issueClientToken({ clientID: 'x' } as never))).message).toContain('did you mean clientId?')
    } finally {
      await emulator.close()
    }
  })

  it('the options that are known still pass (a guard on a real Express app)', () => {
    const guard = createExpressGuard({ baseUrl: BASE_URL, realm: 'app', retryAfter: 3, getToken: () => undefined, cache: { ttl: 5 } })
    expect(() => express().get('/x', guard.requireGroup('fc:org:example.org'))).not.toThrow()
    return guard.resolver.close()
  })
})

describe('a Feide baseUrl without /groups', () => {
  it.each(['https://groups-api.dataporten.no', 'https://groups-api.dataporten.no/', 'https://groups-api.feide.no/me'])(
    '%s is refused at creation, saying to append /groups',
    async (baseUrl) => {
      for (const make of [
        () => createGroupsClient({ baseUrl }),
        () => createMembershipResolver({ baseUrl }),
        () => createGuardCore({ baseUrl }),
      ]) {
        const error = await refusal(make)
        expect(error.option).toBe('baseUrl')
        expect(error.message).toContain(`append /groups (${new URL(baseUrl).origin}/groups)`)
      }
    },
  )

  it.each(['https://groups-api.dataporten.no/groups', 'https://groups-api.dataporten.no/groups/', 'https://groups-api.feide.no/groups/v1'])(
    '%s is accepted',
    async (baseUrl) => {
      const client = createGroupsClient({ baseUrl })
      await client.close()
    },
  )

  it('another host without a prefix is accepted (SURFconext serves at its root)', async () => {
    await createGroupsClient({ baseUrl: 'https://voot.surfconext.nl' }).close()
  })
})

describe("a SURFconext baseUrl with Feide's /groups (issue 52, item 5)", () => {
  it.each([
    'https://voot.surfconext.nl/groups',
    'https://voot.surfconext.nl/groups/',
    'https://voot.test.surfconext.nl/groups',
    'https://voot.surfconext.nl/groups/v1',
    'https://voot.surfconext.nl/me',
  ])('%s is refused at creation, naming baseUrl and saying to use the origin', async (baseUrl) => {
    const { origin } = new URL(baseUrl)
    const services = () => createServiceResolvers({ services: { surf: { baseUrl } }, groupPrefixes: { 'urn:collab:': 'surf' } })
    for (const make of [
      () => createGroupsClient({ baseUrl }),
      () => createMembershipResolver({ baseUrl }),
      () => createGuardCore({ baseUrl }),
      () => createExpressGuard({ baseUrl }),
      services,
    ]) {
      const error = await refusal(make)
      expect(error.option).toMatch(/^(services\.surf\.)?baseUrl$/)
      expect(error.message).toContain(`options.${error.option}: `)
      expect(error.message).toContain("SURFconext's VOOT (OpenConext-voot), which serves the group API at its root")
      expect(error.message).toContain(`set baseUrl to ${origin} (its endpoints are ${origin}/me/groups and ${origin}/me/groups/{groupId})`)
    }
    expect((await refusal(services)).option).toBe('services.surf.baseUrl')
  })

  it.each(['https://voot.surfconext.nl', 'https://voot.surfconext.nl/', 'https://voot.test.surfconext.nl'])(
    '%s is accepted',
    async (baseUrl) => {
      await createGroupsClient({ baseUrl }).close()
      await createMembershipResolver({ baseUrl }).close()
    },
  )

  it('a /groups path on another host is not refused: only the address says which service it is', async () => {
    await createGroupsClient({ baseUrl: 'https://voot.example.nl/groups' }).close()
  })
})

describe('a Feide affiliation given as a role', () => {
  const resolver = createMembershipResolver({ baseUrl: BASE_URL })

  function roleError(role: string): string {
    try {
      resolver.assertRequirement(group('fc:org:example.org', role))
    } catch (error) {
      expect(error).toBeInstanceOf(InvalidArgumentError)
      return (error as Error).message
    }
    throw new Error('no error was thrown')
  }

  it.each([
    ['employee', "a Feide employee is 'admin' on fc:org"],
    ['faculty', "'admin' on fc:org"],
    ['staff', "'admin' on fc:org"],
    ['student', "a Feide student is 'member' on fc:org"],
  ])('%s names the role it means', (role, hint) => {
    expect(roleError(role)).toContain(hint)
  })

  it('another unknown role gets no hint, and member (a real role) passes', () => {
    expect(roleError('wizard')).toBe(`Unknown role "wizard": the resolver's roles are member < manager < admin < owner`)
    expect(() => resolver.assertRequirement(group('fc:org:example.org', 'member'))).not.toThrow()
  })
})
