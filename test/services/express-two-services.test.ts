/**
 * One Express route over two group services (one emulator serving a Feide service and a
 * SURFconext one, each under its own path with its own tokens):
 * anyOf(a Feide admin of one group, a SURFconext admin of another). Each service is reached
 * through a recording proxy, so the test sees every token that arrives at each service and
 * can show that no token ever goes to a service other than its own.
 */
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import express from 'express'
import { request } from 'undici'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { createGuard } from '../../adapters/express/index.js'
import { anyOf, createServiceResolvers, group, type ServiceResolvers } from '../../src/index.js'
import { ORG_ID, PROJECT_BOARD_GROUP_ID, startEmulator, type Emulator, type EmulatorService } from '../../testing/index.js'
import { startRecordingProxy } from '../support/recording-proxy.js'

const cleanups: Array<() => Promise<void>> = []
let emulator: Emulator
let feide: EmulatorService
let surf: EmulatorService
let services: ServiceResolvers
let app: Server
let appUrl = ''
/** Every bearer token each service received, in order. */
const received: Record<'feide' | 'surf', string[]> = { feide: [], surf: [] }

/** The service a request's token is for: here, by the host the request was sent to. */
function serviceOfHost(hostname: string): string | undefined {
  if (hostname.startsWith('feide.')) return 'feide'
  if (hostname.startsWith('surf.')) return 'surf'
  return undefined
}

beforeAll(async () => {
  emulator = await startEmulator({ services: { feide: { dialect: 'dataporten' }, surf: { dialect: 'openconext' } } })
  feide = emulator.service('feide')
  surf = emulator.service('surf')
  cleanups.push(() => emulator.close())
  const feideProxy = await startRecordingProxy(feide, { received: received.feide }, cleanups)
  const surfProxy = await startRecordingProxy(surf, { received: received.surf }, cleanups)
  services = createServiceResolvers({
    services: {
      feide: { baseUrl: `${feideProxy.url}/groups`, timeout: 2000, circuitBreaker: false },
      surf: { baseUrl: surfProxy.url, roles: ['member', 'manager', 'admin', 'owner'], timeout: 2000, circuitBreaker: false },
    },
    groupPrefixes: { 'fc:': 'feide', 'urn:collab:': 'surf' },
    issuers: { 'https://auth.dataporten.no': 'feide' },
  })
  const guard = createGuard({
    services,
    realm: 'two',
    getToken: (req) => {
      const header = req.get('authorization')
      if (header === undefined) return undefined
      return { token: header.replace(/^Bearer /, ''), service: serviceOfHost(req.hostname) }
    },
  })
  const application = express()
  application.get('/board', guard.require(anyOf(group(ORG_ID, 'admin'), group(PROJECT_BOARD_GROUP_ID, 'admin'))), (req, res) => {
    res.json({ ok: true })
  })
  app = await new Promise<Server>((resolve) => {
    const server = application.listen(0, '127.0.0.1', () => resolve(server))
  })
  appUrl = `http://127.0.0.1:${(app.address() as AddressInfo).port}`
  cleanups.push(() => new Promise<void>((resolve) => app.close(() => resolve())))
})

afterAll(async () => {
  await services.close()
  for (const cleanup of cleanups.reverse()) await cleanup()
})

beforeEach(async () => {
  received.feide.length = 0
  received.surf.length = 0
  await services.invalidate()
})

async function visit(service: 'feide' | 'surf' | 'none', token: string | undefined): Promise<number> {
  const host = service === 'none' ? 'app.test' : `${service}.app.test`
  const headers: Record<string, string> = { host }
  if (token !== undefined) headers.authorization = `Bearer ${token}`
  const answer = await request(`${appUrl}/board`, { headers })
  await answer.body.dump()
  return answer.statusCode
}

describe('one Express route, two group services', () => {
  it('admits a Feide admin of one group and a SURFconext admin of another, and refuses everyone else', async () => {
    expect(await visit('feide', feide.issueToken('alice'))).toBe(200) // admin (employee) of fc:org:example.org
    expect(await visit('surf', surf.issueToken('alice'))).toBe(200) // admin of the project board
    expect(await visit('feide', feide.issueToken('erin'))).toBe(403) // no groups at Feide
    expect(await visit('surf', surf.issueToken('carol'))).toBe(403) // a manager of the board, not an admin
    expect(await visit('surf', surf.issueToken('bob'))).toBe(403) // a prospect
    expect(await visit('feide', undefined)).toBe(401)
    // A token no host, issuer or source assigns to a service goes nowhere.
    expect(await visit('none', feide.issueToken('alice'))).toBe(401)
    // A token sent to the wrong host is judged by that host's service alone: refused there.
    expect(await visit('surf', feide.issueToken('alice'))).toBe(401)
  })

  it('sends each token to its own service only, and counts the calls per service and token', async () => {
    const tokens = {
      feide: [feide.issueToken('alice'), feide.issueToken('erin'), feide.issueToken('bob')],
      surf: [surf.issueToken('alice'), surf.issueToken('carol'), surf.issueToken('frank')],
    }
    for (const token of tokens.feide) await visit('feide', token)
    for (const token of tokens.surf) await visit('surf', token)
    // Warm: the second round is answered from each service's own cache.
    for (const token of tokens.feide) await visit('feide', token)
    for (const token of tokens.surf) await visit('surf', token)
    for (const service of ['feide', 'surf'] as const) {
      const other = service === 'feide' ? 'surf' : 'feide'
      for (const token of tokens[service]) {
        const calls = received[service].filter((seen) => seen === token).length
        expect(calls, `${service} calls for one of its tokens`).toBeGreaterThanOrEqual(1)
        expect(calls, `${service} calls for one of its tokens`).toBeLessThanOrEqual(2)
        expect(received[other], `a ${service} token at ${other}`).not.toContain(token)
      }
    }
    // Nothing else reached either service: every token that arrived was one of its own.
    expect(received.feide.every((seen) => tokens.feide.includes(seen))).toBe(true)
    expect(received.surf.every((seen) => tokens.surf.includes(seen))).toBe(true)
  })

  it("with one service down, the other's users are served and the down service's users get 503", async () => {
    const surfAdmin = surf.issueToken('alice')
    const feideAdmin = feide.issueToken('alice')
    const fault = surf.faults.add({ kind: 'status', status: 503 })
    try {
      expect(await visit('feide', feideAdmin)).toBe(200)
      expect(await visit('surf', surfAdmin)).toBe(503)
      expect(received.feide).toEqual([feideAdmin])
      expect(received.surf.every((seen) => seen === surfAdmin)).toBe(true)
      // Health per service: the failure is SURFconext's alone.
      expect(services.health().feide?.status).toBe('ok')
      expect(services.health().surf?.status).toBe('degraded')
    } finally {
      surf.faults.remove(fault)
    }
    expect(await visit('surf', surfAdmin)).toBe(200)
  })
})

describe('the guard over several services', () => {
  it('refuses a service option without services, services beside a baseUrl, and an unknown service', () => {
    expect(() => createGuard({ service: 'feide' })).toThrow(/options\.service: needs `services`/)
    expect(() => createGuard({ services, baseUrl: feide.baseUrl })).toThrow(/options\.services: give either/)
    expect(() => createGuard({ services, service: 'elsewhere' })).toThrow(/options\.service: must name one of the services \(feide, surf\)/)
    // A resolver option beside services would not be in force: refused, naming it.
    expect(() => createGuard({ services, timeout: 1000 })).toThrow(/options\.timeout: is a resolver option: with `services`/)
    expect(() => createGuard({ services, sharedCache: {} as never })).toThrow(/options\.sharedCache: is a resolver option/)
  })

  it("routes a header's token by the guard's service, and a getToken's unknown service is a 500", async () => {
    const surfOnly = createGuard({ services, service: 'surf' })
    const wrong = createGuard({ services, getToken: (req) => ({ token: req.get('x-token') ?? '', service: 'elsewhere' }) })
    const application = express()
    const board = anyOf(group(ORG_ID, 'admin'), group(PROJECT_BOARD_GROUP_ID, 'admin'))
    application.get('/surf', surfOnly.require(board), (req, res) => res.json({ groupId: req.voot?.decision.groupId }))
    application.get('/feide-only', surfOnly.requireGroup(ORG_ID), (req, res) => res.end())
    application.get('/wrong', wrong.require(board), (req, res) => res.end())
    const server = await new Promise<Server>((resolve) => {
      const listening = application.listen(0, '127.0.0.1', () => resolve(listening))
    })
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
      const surfAdmin = surf.issueToken('alice')
      const ok = await request(`${url}/surf`, { headers: { authorization: `Bearer ${surfAdmin}` } })
      expect(ok.statusCode).toBe(200)
      expect(await ok.body.json()).toEqual({ groupId: PROJECT_BOARD_GROUP_ID })
      // A requirement wholly on Feide, for a SURFconext token: a denial of its own, no call.
      received.surf.length = 0
      const other = await request(`${url}/feide-only`, { headers: { authorization: `Bearer ${surfAdmin}` } })
      expect(other.statusCode).toBe(403)
      expect(await other.body.json()).toMatchObject({ error: 'forbidden' })
      expect(received.surf).toEqual([])
      expect(received.feide).toEqual([])
      // A JWT whose iss the config maps to Feide goes to Feide, whatever the guard's service.
      const claims = Buffer.from(JSON.stringify({ iss: 'https://auth.dataporten.no' })).toString('base64url')
      const feideJwt = `eyJhbGciOiJSUzI1NiJ9.${claims}.c2ln`
      const issued = await request(`${url}/surf`, { headers: { authorization: `Bearer ${feideJwt}` } })
      expect(issued.statusCode).toBe(401) // the Feide emulator does not know it
      await issued.body.dump()
      expect(received.feide).toContain(feideJwt)
      expect(received.surf).toEqual([])
      const broken = await request(`${url}/wrong`, { headers: { 'x-token': surfAdmin } })
      expect(broken.statusCode).toBe(500)
      await broken.body.dump()
      expect(received.surf).toEqual([])
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  })
})
