/**
 * createServiceResolvers on its own: which service a requirement's groups belong to (named,
 * or by prefix; unmapped and ambiguous ids refused at declaration), the projection of a
 * requirement onto the token's service (other services' parts are denials, not calls), the
 * choice of a service by a JWT's `iss`, and the options' errors.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  allOf,
  anyOf,
  authenticated,
  createMembershipResolver,
  createServiceResolvers,
  group,
  groupOfType,
  InvalidArgumentError,
  InvalidOptionError,
  type ResolverEvent,
  type ServiceResolvers,
} from '../../src/index.js'
import { issuerOf } from '../../src/services/token-issuer.js'
import { ORG_ID, PROJECT_BOARD_GROUP_ID, startEmulator, type Emulator, type EmulatorService } from '../../testing/index.js'

let emulator: Emulator
let feide: EmulatorService
let surf: EmulatorService
let services: ServiceResolvers

function jwt(claims: object): string {
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url')
  return `${part({ alg: 'RS256' })}.${part(claims)}.c2lnbmF0dXJl`
}

beforeAll(async () => {
  // One emulator, two services: each its own path, data and tokens.
  emulator = await startEmulator({ services: { feide: { dialect: 'dataporten' }, surf: { dialect: 'openconext' } } })
  feide = emulator.service('feide')
  surf = emulator.service('surf')
  services = createServiceResolvers({
    services: { feide: { baseUrl: feide.baseUrl }, surf: { baseUrl: surf.baseUrl } },
    groupPrefixes: { 'fc:': 'feide', 'urn:collab:': 'surf' },
    issuers: { 'https://auth.dataporten.no': 'feide', 'https://connect.surfconext.nl': 'surf' },
  })
})
afterAll(async () => {
  await services.close()
  await emulator.close()
})

describe('which service a group belongs to', () => {
  it('follows a named service, else the group prefixes', () => {
    const named = group('x:unprefixed', undefined, { service: 'surf' })
    expect(services.project(named, 'surf')).toBe(named)
    expect(services.project(named, 'feide')).toBeUndefined()
    const byPrefix = group(ORG_ID, 'admin')
    expect(services.project(byPrefix, 'feide')).toBe(byPrefix)
    expect(services.project(byPrefix, 'surf')).toBeUndefined()
    expect(services.project(groupOfType('fc:fs:emne'), 'surf')).toBeUndefined()
  })

  it('refuses an unmapped id, an ambiguous id and an unknown service at declaration', () => {
    // No prefix shares a character with it: every service is named, not simply the first.
    expect(() => services.prepare(group('x:unprefixed'))).toThrow(
      /no groupPrefixes entry assigns it a service; name its service, one of 'feide', 'surf'/,
    )
    // The service whose prefix is nearest ("urn:" of "urn:collab:") is the one advised.
    expect(() => services.prepare(group('urn:mace:example.nl:staff'))).toThrow(/name its service, such as \{ service: 'surf' \}/)
    expect(() => services.prepare(group('fc:x', undefined, { service: 'nowhere' }))).toThrow(/no group service is called "nowhere"/)
    const overlapping = createServiceResolvers({
      services: { feide: { baseUrl: feide.baseUrl }, local: { baseUrl: surf.baseUrl } },
      groupPrefixes: { 'fc:': 'feide', 'fc:org:example.org': 'local' },
    })
    expect(() => overlapping.prepare(group(ORG_ID))).toThrow(/is ambiguous: groupPrefixes assign it to feide and local/)
    // Naming the service settles it.
    expect(() => overlapping.prepare(group(ORG_ID, undefined, { service: 'local' }))).not.toThrow()
    expect(() => group(ORG_ID, undefined, { service: 'no spaces' })).toThrow(InvalidArgumentError)
  })

  it("checks each service's part against that service's roles", () => {
    const strict = createServiceResolvers({
      services: { feide: { baseUrl: feide.baseUrl }, surf: { baseUrl: surf.baseUrl, roles: ['member', 'admin'] } },
      groupPrefixes: { 'fc:': 'feide', 'urn:collab:': 'surf' },
    })
    expect(() => strict.prepare(anyOf(group(ORG_ID, 'owner'), group(PROJECT_BOARD_GROUP_ID, 'admin')))).not.toThrow()
    expect(() => strict.prepare(anyOf(group(ORG_ID, 'admin'), group(PROJECT_BOARD_GROUP_ID, 'owner')))).toThrow(/owner/)
  })
})

describe('a requirement seen from one service', () => {
  it('keeps the alternatives on the service, and an allOf across services cannot be met', () => {
    const feideAdmin = group(ORG_ID, 'admin')
    const surfAdmin = group(PROJECT_BOARD_GROUP_ID, 'admin')
    expect(services.project(anyOf(feideAdmin, surfAdmin), 'feide')).toBe(feideAdmin)
    expect(services.project(anyOf(feideAdmin, surfAdmin), 'surf')).toBe(surfAdmin)
    expect(services.project(allOf(feideAdmin, surfAdmin), 'feide')).toBeUndefined()
    const both = anyOf(feideAdmin, group('fc:adhoc:x'), surfAdmin)
    expect(services.project(both, 'feide')).toMatchObject({ kind: 'anyOf', requirements: [feideAdmin, group('fc:adhoc:x')] })
    const any = authenticated()
    expect(services.project(any, 'surf')).toBe(any)
  })

  it("denies a requirement with no part on the token's service as other_service, without a call", async () => {
    feide.resetLog()
    surf.resetLog()
    const token = feide.issueToken('alice')
    const decision = await services.check(token, group(PROJECT_BOARD_GROUP_ID, 'admin'), { service: 'feide' })
    expect(decision).toMatchObject({ allowed: false, reason: 'other_service' })
    expect(feide.count()).toBe(0)
    expect(surf.count()).toBe(0)
    // An employee of either university: allowed on each service by its own part.
    const either = anyOf(group(ORG_ID, 'admin'), group(PROJECT_BOARD_GROUP_ID, 'admin'))
    expect(await services.check(token, either, { service: 'feide' })).toMatchObject({ allowed: true, groupId: ORG_ID })
    expect(await services.check(surf.issueToken('alice'), either, { service: 'surf' })).toMatchObject({
      allowed: true,
      groupId: PROJECT_BOARD_GROUP_ID,
    })
    expect(surf.count()).toBeGreaterThan(0)
  })
})

describe('the service of a token', () => {
  it("follows a JWT's iss when the config maps it, and nothing else", () => {
    expect(services.serviceOfToken(jwt({ iss: 'https://auth.dataporten.no', sub: 'x' }))).toBe('feide')
    expect(services.serviceOfToken(jwt({ iss: 'https://connect.surfconext.nl' }))).toBe('surf')
    expect(services.serviceOfToken(jwt({ iss: 'https://elsewhere.example' }))).toBeUndefined()
    expect(services.serviceOfToken(feide.issueToken('alice'))).toBeUndefined() // opaque
  })

  it('reads iss from a JWT payload only, and never throws', () => {
    expect(issuerOf(jwt({ iss: 'https://a.example' }))).toBe('https://a.example')
    expect(issuerOf(jwt({ iss: 42 }))).toBeUndefined()
    expect(issuerOf('a.b')).toBeUndefined()
    expect(issuerOf('a.!!!.c')).toBeUndefined()
    expect(issuerOf(`a.${Buffer.from('[1]').toString('base64url')}.c`)).toBeUndefined()
    expect(issuerOf(`a.${Buffer.from('{').toString('base64url')}.c`)).toBeUndefined()
    expect(issuerOf(`a.${'A'.repeat(20_000)}.c`)).toBeUndefined()
  })
})

describe('options', () => {
  it('names the option that is wrong', () => {
    expect(() => createServiceResolvers({ services: {} })).toThrow(InvalidOptionError)
    expect(() => createServiceResolvers({ services: { feide: { baseUrl: feide.baseUrl, timeout: -1 } } })).toThrow(
      /options\.services\.feide\.timeout/,
    )
    expect(() => createServiceResolvers({ services: { feide: { baseUrl: feide.baseUrl } }, groupPrefixes: { 'fc:': 'surf' } })).toThrow(
      /options\.groupPrefixes\.fc:: must name one of the services \(feide\)/,
    )
    expect(() => createServiceResolvers({ services: { 'bad name': { baseUrl: feide.baseUrl } } })).toThrow(/options\.services\.bad name/)
    expect(() => createServiceResolvers({ services: { feide: { baseUrl: feide.baseUrl } }, issuer: {} } as never)).toThrow(/issuer/)
    expect(() => createServiceResolvers({ services: { feide: { baseUrl: feide.baseUrl } }, sharedCache: {} } as never)).toThrow(
      /options\.sharedCache: must be a shared cache tier/,
    )
    expect(() => createServiceResolvers({ services: { feide: { baseUrl: feide.baseUrl, sharedCache: {} as never } } })).toThrow(
      /options\.services\.feide\.sharedCache: must be a shared cache tier/,
    )
  })
})

describe("a service's events", () => {
  it('name the service, so that one onEvent can serve several', async () => {
    const events: ResolverEvent[] = []
    const onEvent = (event: ResolverEvent): void => {
      events.push(event)
    }
    const labelled = createServiceResolvers({
      services: { feide: { baseUrl: feide.baseUrl, onEvent }, surf: { baseUrl: surf.baseUrl, onEvent } },
      groupPrefixes: { 'fc:': 'feide', 'urn:collab:': 'surf' },
    })
    const plain = createMembershipResolver({ baseUrl: feide.baseUrl, onEvent })
    try {
      const board = anyOf(group(ORG_ID, 'admin'), group(PROJECT_BOARD_GROUP_ID, 'admin'))
      await labelled.check(feide.issueToken('alice'), board, { service: 'feide' })
      await labelled.check(surf.issueToken('alice'), board, { service: 'surf' })
      await plain.check(feide.issueToken('alice'), group(ORG_ID))
      const misses = events.filter((event) => event.type === 'cache_miss')
      expect(misses.map((event) => event.service)).toEqual(['feide', 'surf', undefined])
      expect(events.filter((event) => event.type === 'upstream_response').map((event) => event.service)).toEqual([
        'feide',
        'surf',
        undefined,
      ])
      // A resolver of no service: its events as ever, without the key.
      expect(events.filter((event) => !('service' in event)).length).toBeGreaterThan(0)
    } finally {
      await labelled.close()
      await plain.close()
    }
  })
})
