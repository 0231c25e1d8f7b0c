/**
 * Emulator data sets (validation, files, the default set), the token store, and the
 * validation of startEmulator's options.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { InvalidOptionError } from '../../src/errors.js'
import {
  defaultData,
  loadEmulatorData,
  startEmulator,
  TokenStore,
  validateEmulatorData,
  type EmulatorData,
  type EmulatorMembership,
} from '../../testing/index.js'
import type { Membership } from '../../src/types.js'

function minimal(): EmulatorData {
  return {
    groups: [
      { id: 'g1', displayName: 'Group one', type: 'voot:ad-hoc' },
      { id: 'g2', displayName: { en: 'Group two', nb: 'Gruppe to' }, type: 'voot:ad-hoc', public: true },
    ],
    groupTypes: [{ id: 'voot:ad-hoc', displayName: 'Ad-hoc group' }],
    users: [
      { id: 'u1', name: 'User One', memberships: [{ groupId: 'g1', membership: { basic: 'owner' } }] },
      { id: 'u2', name: 'User Two', memberships: [] },
      { id: 'u3', name: 'User Three', memberships: [{ groupId: 'g2', membership: { basic: 'member' } }] },
    ],
    clients: [{ clientId: 'c', clientSecret: 'super-secret-value', redirectUris: ['http://127.0.0.1:3000/cb'] }],
  }
}

/** `minimal()` with one change applied. */
function broken(change: (data: Record<string, any>) => void): unknown {
  const data = minimal() as unknown as Record<string, any>
  change(data)
  return data
}

describe('validateEmulatorData', () => {
  it('accepts the default data and returns a mutable copy, leaving defaultData frozen', () => {
    const copy = validateEmulatorData(defaultData)
    expect(copy).toEqual(defaultData)
    expect(copy).not.toBe(defaultData)
    copy.users[0]?.memberships.pop()
    expect(copy.users[0]?.memberships.length).toBe((defaultData.users[0]?.memberships.length ?? 0) - 1)
    expect(Object.isFrozen(defaultData.users[0]?.memberships)).toBe(true)
  })

  it('derives groupTypes from the groups and defaults clients to none when left out', () => {
    const data = validateEmulatorData(
      broken((d) => {
        delete d['groupTypes']
        delete d['clients']
      }),
    )
    expect(data.groupTypes).toEqual([{ id: 'voot:ad-hoc', displayName: 'voot:ad-hoc' }])
    expect(data.clients).toEqual([])
  })

  it.each<[string, (d: Record<string, any>) => void, string]>([
    ['a non-object', () => undefined, 'data: must be an object'],
    [
      'an unknown top-level field',
      (d) => {
        d['group'] = []
      },
      'group: unknown field',
    ],
    [
      'missing groups',
      (d) => {
        delete d['groups']
      },
      'groups: missing (must be an array)',
    ],
    [
      'a group without id',
      (d) => {
        delete d['groups'][1].id
      },
      'groups[1].id: missing',
    ],
    [
      'a duplicate group id',
      (d) => {
        d['groups'][1].id = 'g1'
      },
      'groups[1].id: duplicate group id "g1" (also groups[0])',
    ],
    [
      'the group id ".."',
      (d) => {
        d['groups'][0].id = '..'
      },
      'groups[0].id: The group ids "." and ".."',
    ],
    [
      'a bad displayName',
      (d) => {
        d['groups'][1].displayName = { en: 3 }
      },
      'groups[1].displayName.en: must be a string',
    ],
    [
      'an empty translatable',
      (d) => {
        d['groups'][0].description = {}
      },
      'groups[0].description: must be a string or a non-empty object',
    ],
    [
      'an unknown group type',
      (d) => {
        d['groups'][1].type = 'fc:nope'
      },
      'groups[1].type: unknown group type "fc:nope"',
    ],
    [
      'a non-boolean public',
      (d) => {
        d['groups'][0].public = 'yes'
      },
      'groups[0].public: must be a boolean',
    ],
    [
      'a membership on a group',
      (d) => {
        d['groups'][0].membership = {}
      },
      'groups[0].membership: not allowed on a group',
    ],
    [
      'a bad group date',
      (d) => {
        d['groups'][0].notAfter = 'next year'
      },
      'groups[0].notAfter: must be an ISO 8601 timestamp',
    ],
    [
      'a duplicate group type',
      (d) => {
        d['groupTypes'].push({ id: 'voot:ad-hoc', displayName: 'x' })
      },
      'groupTypes[1].id: duplicate group type id',
    ],
    [
      'a user without name',
      (d) => {
        delete d['users'][1].name
      },
      'users[1].name: must be a string',
    ],
    [
      'a duplicate user id',
      (d) => {
        d['users'][2].id = 'u1'
      },
      'users[2].id: duplicate user id "u1" (also users[0])',
    ],
    [
      'memberships not an array',
      (d) => {
        d['users'][1].memberships = {}
      },
      'users[1].memberships: must be an array',
    ],
    [
      'a membership of an unknown group',
      (d) => {
        d['users'][2].memberships[0].groupId = 'x'
      },
      'users[2].memberships[0].groupId: unknown group "x"',
    ],
    [
      'a typo in a membership entry',
      (d) => {
        d['users'][0].memberships[0].groupID = 'g1'
      },
      'users[0].memberships[0].groupID: unknown field',
    ],
    [
      'a duplicate membership',
      (d) => {
        d['users'][0].memberships.push({ groupId: 'g1', membership: {} })
      },
      'users[0].memberships[1].groupId: duplicate membership of "g1"',
    ],
    [
      'a membership that is neither an object nor a role string',
      (d) => {
        d['users'][0].memberships[0].membership = 7
      },
      'users[0].memberships[0].membership: must be an object or a role string',
    ],
    [
      'an empty role string',
      (d) => {
        d['users'][0].memberships[0].membership = ''
      },
      'users[0].memberships[0].membership: must be an object or a non-empty role string',
    ],
    [
      'a logo that is not an image data: URL',
      (d) => {
        d['groups'][0].logo = 'https://example.org/logo.png'
      },
      'groups[0].logo: must be an image data: URL',
    ],
    [
      'a logo with broken base64',
      (d) => {
        d['groups'][0].logo = 'data:image/png;base64,iVBOR!w0'
      },
      'groups[0].logo: must be an image data: URL',
    ],
    [
      'a non-boolean active',
      (d) => {
        d['users'][0].memberships[0].membership.active = 'false'
      },
      'users[0].memberships[0].membership.active: must be a boolean',
    ],
    [
      'a bad notBefore',
      (d) => {
        d['users'][0].memberships[0].membership.notBefore = '2027-13-45'
      },
      'users[0].memberships[0].membership.notBefore: must be an ISO 8601',
    ],
    [
      'a bad redirect URI',
      (d) => {
        d['clients'][0].redirectUris = ['/relative']
      },
      'clients[0].redirectUris[0]: must be an absolute URL',
    ],
    [
      'a duplicate client',
      (d) => {
        d['clients'].push({ ...d['clients'][0] })
      },
      'clients[1].clientId: duplicate client id "c"',
    ],
  ])('names the field for %s', (_case, change, message) => {
    const input = _case === 'a non-object' ? 'nope' : broken(change)
    expect(() => validateEmulatorData(input)).toThrow(message)
  })

  it('never repeats a client secret in an error', () => {
    const input = broken((d) => {
      d['clients'][0].clientSecret = 42
    })
    expect(() => validateEmulatorData(input)).toThrow('clients[0].clientSecret: must be a string')
    const withSecret = broken((d) => {
      d['clients'][0].redirectUris = 'super-secret-value'
    })
    expect(() => validateEmulatorData(withSecret)).toThrow(/^(?!.*super-secret-value)/)
  })
})

describe('data files', () => {
  let dir: string

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'voot-emulator-data-'))
  })
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true })
  })

  it('serves a data set loaded from a JSON file', async () => {
    const file = join(dir, 'good.json')
    await writeFile(file, JSON.stringify(minimal()))
    expect((await loadEmulatorData(file)).users.map((user) => user.id)).toEqual(['u1', 'u2', 'u3'])
    const emulator = await startEmulator({ data: file })
    try {
      const res = await fetch(`${emulator.baseUrl}/me/groups`, { headers: { authorization: `Bearer ${emulator.issueToken('u1')}` } })
      expect(await res.json()).toEqual([{ id: 'g1', displayName: 'Group one', type: 'voot:ad-hoc', membership: { basic: 'owner' } }])
    } finally {
      await emulator.close()
    }
  })

  it('rejects an invalid data file with the path and the bad field', async () => {
    const file = join(dir, 'bad.json')
    const text = JSON.stringify(
      broken((d) => {
        d['users'][2].memberships[0].groupId = 'x'
      }),
      null,
      2,
    )
    await writeFile(file, text)
    const error = await startEmulator({ data: file }).then(
      () => undefined,
      (err: unknown) => err,
    )
    expect(error).toBeInstanceOf(InvalidOptionError)
    // The line of the bad value, then its key.
    const line = text.split('\n').findIndex((each) => each.includes('"groupId": "x"')) + 1
    expect((error as Error).message).toBe(`options.data: ${file}:${line}: users[2].memberships[0].groupId: unknown group "x"`)
  })

  it('rejects a file that is not JSON, and one that does not exist', async () => {
    const file = join(dir, 'not-json.json')
    await writeFile(file, '{ groups: [] ')
    // Where the JSON breaks: line and column.
    await expect(startEmulator({ data: file })).rejects.toThrow(`options.data: ${file}:1:3: not valid JSON`)
    await expect(startEmulator({ data: join(dir, 'missing.json') })).rejects.toThrow(/cannot read the data file \(ENOENT\)/)
  })

  it('rejects an invalid data object passed directly', async () => {
    await expect(
      startEmulator({
        data: broken((d) => {
          d['groups'] = null
        }) as EmulatorData,
      }),
    ).rejects.toThrow('options.data: groups: must be an array')
  })
})

describe('startEmulator options', () => {
  it.each([
    [{ port: -1 }, 'options.port'],
    [{ port: 1.5 }, 'options.port'],
    [{ host: '' }, 'options.host'],
    [{ latency: -5 }, 'options.latency'],
    [{ latency: Number.NaN }, 'options.latency'],
    [{ rateLimit: { limit: 0, windowMs: 1000 } }, 'options.rateLimit.limit'],
    [{ rateLimit: { limit: 5, windowMs: 0 } }, 'options.rateLimit.windowMs'],
    [{ now: 'yesterday' }, 'options.now'],
  ])('refuses %j', async (options, name) => {
    await expect(startEmulator(options as never)).rejects.toThrow(name)
  })

  it('serves the default data when given none, as a copy per emulator', async () => {
    const one = await startEmulator()
    const two = await startEmulator()
    try {
      expect(one.data).toEqual(defaultData)
      one.data.users.pop()
      expect(two.data.users.length).toBe(defaultData.users.length)
      expect(one.baseUrl).not.toBe(two.baseUrl)
    } finally {
      await Promise.all([one.close(), two.close()])
    }
  })
})

describe('defaultData', () => {
  const user = (id: string) => defaultData.users.find((candidate) => candidate.id === id)
  // The Dataporten data writes every membership as an object (plain role strings are OpenConext's).
  const object = (m: EmulatorMembership): Membership => {
    if (typeof m.membership === 'string') throw new Error(`a plain string membership of ${m.groupId}`)
    return m.membership
  }

  it('has the cases the brief names', () => {
    expect(defaultData.users.length).toBeGreaterThanOrEqual(5)
    expect(user('alice')?.memberships.map((m) => [m.groupId, object(m).basic])).toEqual(
      expect.arrayContaining([
        ['fc:org:example.org', 'admin'],
        [expect.stringMatching(/^fc:adhoc:/), 'owner'],
      ]),
    )
    expect(user('bob')?.memberships.some((m) => object(m).active === false)).toBe(true)
    expect(user('carol')?.memberships[0]?.membership).toMatchObject({ basic: 'admin', affiliation: 'faculty' })
    expect(user('dave')?.memberships.every((m) => object(m).notBefore !== undefined || object(m).notAfter !== undefined)).toBe(true)
    expect(user('erin')?.memberships).toEqual([])
    expect(defaultData.groups.some((group) => group.id.includes('%2F'))).toBe(true)
    expect(defaultData.groups.filter((group) => group.type === 'voot:ad-hoc' && group.public === true).length).toBe(1)
    expect(defaultData.clients[0]).toMatchObject({
      clientId: 'demo-client',
      clientSecret: 'demo-secret',
      redirectUris: ['http://127.0.0.1/*', 'http://localhost/*'],
    })
  })
})

describe('TokenStore', () => {
  it('issues opaque tokens, looks them up, expires and revokes them by its clock', () => {
    let now = 1_000
    const store = new TokenStore(() => now)
    const token = store.issue({ userId: 'u1', clientId: 'c', scopes: ['groups'], expiresIn: 10 })
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(store.issue({ clientId: 'c', scopes: [], expiresIn: 10 })).not.toBe(token)
    expect(store.lookup(token)).toEqual({ userId: 'u1', clientId: 'c', scopes: ['groups'], expiresAt: 11_000 })
    expect(Object.isFrozen(store.lookup(token))).toBe(true)
    now = 10_999
    expect(store.lookup(token)?.userId).toBe('u1')
    now = 11_000
    expect(store.lookup(token)).toBeUndefined()
    now = 5_000
    expect(store.lookup(token)?.userId).toBe('u1')
    store.revoke(token)
    expect(store.lookup(token)).toBeUndefined()
    expect(store.lookup('')).toBeUndefined()
    expect(store.lookup('unknown')).toBeUndefined()
  })

  it('keeps a copy of the scopes', () => {
    const scopes = ['groups']
    const store = new TokenStore()
    const token = store.issue({ clientId: 'c', scopes, expiresIn: 10 })
    scopes.push('admin')
    expect(store.lookup(token)?.scopes).toEqual(['groups'])
  })

  it.each([
    [{ clientId: '', scopes: [], expiresIn: 1 }, /clientId/],
    [{ clientId: 'c', scopes: 'groups', expiresIn: 1 }, /scopes/],
    [{ clientId: 'c', scopes: [], expiresIn: 0 }, /expiresIn/],
    [{ userId: '', clientId: 'c', scopes: [], expiresIn: 1 }, /userId/],
  ])('refuses %j', (request, message) => {
    expect(() => new TokenStore().issue(request as never)).toThrow(message)
  })
})
