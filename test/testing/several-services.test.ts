/**
 * One emulator, several group services (`startEmulator({ services })`): a Feide/Dataporten
 * dialect under /feide and an OpenConext one under /surf on one loopback server, each with
 * its own data, tokens, faults, request log, console and OAuth server. A token one service
 * issued is refused (401) by the other.
 */
import { chromium } from 'playwright-core'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { runCli } from '../../cli/index.js'
import { InvalidArgumentError } from '../../src/index.js'
import {
  ORG_ID,
  PROJECT_BOARD_GROUP_ID,
  READING_CLUB_GROUP_ID,
  startEmulator,
  type Emulator,
  type EmulatorService,
} from '../../testing/index.js'
import { CHROMIUM_ARGS, findChromium, needChromium } from '../support/chromium.js'

const CHROMIUM = findChromium()

let emulator: Emulator
let feide: EmulatorService
let surf: EmulatorService
let origin = ''

beforeAll(async () => {
  emulator = await startEmulator({ services: { feide: { dialect: 'dataporten' }, surf: { dialect: 'openconext' } } })
  feide = emulator.service('feide')
  surf = emulator.service('surf')
  origin = new URL(emulator.baseUrl).origin
})

afterAll(async () => {
  await emulator?.close()
})

beforeEach(() => {
  feide.faults.clear()
  surf.faults.clear()
  feide.resetLog()
  surf.resetLog()
})

async function groupsOf(service: EmulatorService, token: string): Promise<{ status: number; ids: string[] }> {
  const res = await fetch(`${service.baseUrl}/me/groups`, { headers: { authorization: `Bearer ${token}` } })
  const text = await res.text()
  const body = res.status === 200 ? (JSON.parse(text) as unknown) : undefined
  return { status: res.status, ids: Array.isArray(body) ? body.map((group) => (group as { id: string }).id) : [] }
}

describe('an emulator of several services', () => {
  it('serves each under its own path, and its own members are its first service', () => {
    expect(emulator.serviceNames).toEqual(['feide', 'surf'])
    expect(feide.baseUrl).toBe(`${origin}/feide/groups`)
    expect(feide.authUrl).toBe(`${origin}/feide`)
    expect(surf.baseUrl).toBe(`${origin}/surf`)
    expect(surf.authUrl).toBe(`${origin}/surf`)
    expect([feide.dialect, surf.dialect]).toEqual(['dataporten', 'openconext'])
    expect(emulator.baseUrl).toBe(feide.baseUrl)
    expect(emulator.tokens).toBe(feide.tokens)
    expect(emulator.service('surf')).toBe(surf)
    expect(emulator.consoleUrl).toBe(`${origin}/_emulator/`)
    expect(() => emulator.service('elsewhere')).toThrow(InvalidArgumentError)
    expect(() => emulator.service('elsewhere')).toThrow('(services: feide, surf)')
  })

  it("answers in each dialect, from each service's data", async () => {
    const atFeide = await groupsOf(feide, feide.issueToken('alice'))
    expect(atFeide.status).toBe(200)
    expect(atFeide.ids).toContain(ORG_ID)
    const atSurf = await groupsOf(surf, surf.issueToken('alice'))
    expect(atSurf.status).toBe(200)
    expect(atSurf.ids).toContain(PROJECT_BOARD_GROUP_ID)
    expect(atSurf.ids).not.toContain(ORG_ID)
    // OpenConext's route for one group, at the root of its service.
    const one = await fetch(`${surf.baseUrl}/me/groups/${encodeURIComponent(PROJECT_BOARD_GROUP_ID)}`, {
      headers: { authorization: `Bearer ${surf.issueToken('alice')}` },
    })
    expect(one.status).toBe(200)
    expect(await one.json()).toMatchObject({ id: PROJECT_BOARD_GROUP_ID, membership: 'admin' })
    // Each service logs its own requests, their paths within the service.
    expect(feide.count('/groups/me/groups')).toBe(1)
    expect(surf.count('/me/groups')).toBe(1)
    expect(surf.requests.map((request) => request.user)).toEqual(['alice', 'alice'])
  })

  it('refuses a token of one service at the other (401), both ways', async () => {
    expect((await groupsOf(surf, feide.issueToken('alice'))).status).toBe(401)
    expect((await groupsOf(feide, surf.issueToken('alice'))).status).toBe(401)
    const userinfo = await fetch(`${surf.authUrl}/userinfo`, { headers: { authorization: `Bearer ${feide.issueToken('alice')}` } })
    expect(userinfo.status).toBe(401)
    await userinfo.body?.cancel()
  })

  it('runs an OAuth server per service: its issuer, its sign-in and its tokens', async () => {
    for (const service of [feide, surf]) {
      const discovery = (await (await fetch(`${service.authUrl}/.well-known/openid-configuration`)).json()) as Record<string, string>
      expect(discovery['issuer']).toBe(service.authUrl)
      expect(discovery['token_endpoint']).toBe(`${service.authUrl}/oauth/token`)
    }
    // A code flow at SURFconext's server: its consent page posts to its own path.
    const redirect = 'http://127.0.0.1/callback'
    const authorize = new URL(`${surf.authUrl}/oauth/authorization`)
    authorize.search = new URLSearchParams({
      client_id: 'demo-client',
      redirect_uri: redirect,
      response_type: 'code',
      scope: 'openid groups',
    }).toString()
    const page = await (await fetch(authorize)).text()
    const action = /<form method="post" action="([^"]+)">/.exec(page)?.[1]
    expect(action).toBe('/surf/oauth/authorization')
    const requestId = /name="request_id" value="([^"]+)"/.exec(page)?.[1] ?? ''
    const decided = await fetch(`${origin}${action}`, {
      method: 'POST',
      redirect: 'manual',
      body: new URLSearchParams({ request_id: requestId, user: 'alice', decision: 'approve' }),
    })
    expect(decided.status).toBe(302)
    const code = new URL(decided.headers.get('location') ?? '').searchParams.get('code') ?? ''
    const exchanged = await fetch(`${surf.authUrl}/oauth/token`, {
      method: 'POST',
      headers: { authorization: `Basic ${Buffer.from('demo-client:demo-secret').toString('base64')}` },
      body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: redirect }),
    })
    expect(exchanged.status).toBe(200)
    const { access_token: token, id_token: idToken } = (await exchanged.json()) as { access_token: string; id_token: string }
    const claims = JSON.parse(Buffer.from(idToken.split('.')[1] ?? '', 'base64url').toString()) as { iss: string }
    expect(claims.iss).toBe(surf.authUrl)
    expect((await groupsOf(surf, token)).status).toBe(200)
    expect((await groupsOf(feide, token)).status).toBe(401)
  })

  it("injects a fault into one service only; the other's answers go on", async () => {
    surf.faults.add({ kind: 'status', status: 503 })
    expect((await groupsOf(surf, surf.issueToken('alice'))).status).toBe(503)
    expect((await groupsOf(feide, feide.issueToken('alice'))).status).toBe(200)
    surf.faults.clear()
    feide.faults.add({ kind: 'status', status: 500 }, { user: 'alice' })
    expect((await groupsOf(feide, feide.issueToken('alice'))).status).toBe(500)
    expect((await groupsOf(surf, surf.issueToken('alice'))).status).toBe(200)
  })

  it('answers 404 outside its services', async () => {
    for (const path of ['/me/groups', '/surfx/me/groups', '/groups/me/groups', '/']) {
      const res = await fetch(`${origin}${path}`, { headers: { authorization: `Bearer ${surf.issueToken('alice')}` } })
      expect(res.status, path).toBe(404)
      await res.body?.cancel()
    }
  })
})

describe('the console of several services', () => {
  it('shows a section per service at /_emulator/, each linking to its own console', async () => {
    const page = await (await fetch(`${origin}/_emulator/`)).text()
    expect(page).toContain('<h2 id="service-feide">feide (dataporten)</h2>')
    expect(page).toContain('<h2 id="service-surf">surf (openconext)</h2>')
    expect(page).toContain(`<a href="${origin}/surf/_emulator/">`)
    const listed = (await (await fetch(`${origin}/_emulator/api/services`)).json()) as { services: { name: string; baseUrl: string }[] }
    expect(listed.services.map((service) => [service.name, service.baseUrl])).toEqual([
      ['feide', feide.baseUrl],
      ['surf', surf.baseUrl],
    ])
    const own = await (await fetch(`${origin}/surf/_emulator/`)).text()
    expect(own).toContain('action="/surf/_emulator/members"')
    expect(own).toContain(PROJECT_BOARD_GROUP_ID)
  })

  it('takes a browser by keyboard from the index to a service console, whose forms change that service alone (Chromium)', async (ctx) => {
    needChromium(ctx, CHROMIUM)
    if (!CHROMIUM.found) return
    const browser = await chromium.launch({ executablePath: CHROMIUM.executablePath, args: [...CHROMIUM_ARGS], timeout: 30_000 })
    try {
      const page = await browser.newPage()
      await page.goto(emulator.consoleUrl ?? '')
      await expect.poll(() => page.getByRole('heading', { level: 2 }).allInnerTexts()).toEqual(['feide (dataporten)', 'surf (openconext)'])
      const link = page.getByRole('link', { name: 'The console of surf' })
      await link.focus()
      await page.keyboard.press('Enter')
      await page.waitForURL(`${origin}/surf/_emulator/`)
      await page.getByRole('button', { name: `Remove carol in ${READING_CLUB_GROUP_ID}`, exact: true }).click()
      await expect.poll(() => page.getByRole('status').innerText({ timeout: 5_000 })).toBe(`Removed: carol in ${READING_CLUB_GROUP_ID}.`)
      expect(surf.data.users.find((user) => user.id === 'carol')?.memberships.map((entry) => entry.groupId)).not.toContain(
        READING_CLUB_GROUP_ID,
      )
      expect(feide.data.users.find((user) => user.id === 'carol')?.memberships.length).toBeGreaterThan(0)
    } finally {
      await browser.close()
    }
  }, 60_000)

  it('names the service on its consent page and its console, so that a person with both open knows which (Chromium)', async (ctx) => {
    needChromium(ctx, CHROMIUM)
    if (!CHROMIUM.found) return
    const browser = await chromium.launch({ executablePath: CHROMIUM.executablePath, args: [...CHROMIUM_ARGS], timeout: 30_000 })
    try {
      const page = await browser.newPage()
      for (const [service, named] of [
        [feide, 'Feide (feide)'],
        [surf, 'SURFconext (surf)'],
      ] as const) {
        const authorize = new URL(`${service.authUrl}/oauth/authorization`)
        authorize.search = new URLSearchParams({
          client_id: 'demo-client',
          redirect_uri: 'http://127.0.0.1/callback',
          response_type: 'code',
          scope: 'openid groups',
        }).toString()
        await page.goto(authorize.href)
        expect(await page.getByRole('heading', { level: 1 }).innerText()).toBe(`Sign in to Demo client with ${named}`)
        expect(await page.title()).toBe(`Sign in with ${named} · voot-guard emulator`)
        await page.goto(`${origin}${new URL(service.authUrl).pathname}/_emulator/`)
        expect(await page.getByRole('heading', { level: 1 }).innerText()).toBe(`voot-guard emulator console: ${named}`)
        expect(await page.title()).toBe(`voot-guard emulator console: ${named}`)
      }
    } finally {
      await browser.close()
    }
  }, 60_000)

  it('changes one service from a shell with --service, and asks for it without', async () => {
    let stdout = ''
    let stderr = ''
    const io = { stdout: { write: (text: string) => (stdout += text) }, stderr: { write: (text: string) => (stderr += text) }, env: {} }
    const remove = ['emulator', 'members', 'remove', '--user', 'alice', '--group', PROJECT_BOARD_GROUP_ID, '--url', origin]
    expect(await runCli(remove, io)).toBe(2)
    expect(stderr).toContain('This emulator serves several group services (feide, surf): name one, as in --service feide')
    expect(await runCli([...remove, '--service', 'surf'], io)).toBe(0)
    expect(stdout).toContain(`Removed: alice in ${PROJECT_BOARD_GROUP_ID}.`)
    expect((await groupsOf(surf, surf.issueToken('alice'))).ids).not.toContain(PROJECT_BOARD_GROUP_ID)
    expect(await runCli(['emulator', 'fault', '500', '--service', 'feide', '--url', origin], io)).toBe(0)
    expect((await groupsOf(feide, feide.issueToken('alice'))).status).toBe(500)
    expect((await groupsOf(surf, surf.issueToken('alice'))).status).toBe(200)
    expect(await runCli(['emulator', 'fault', 'clear', '--service', 'Feide!', '--url', origin], io)).toBe(2)
    expect(stderr).toContain('--service: a service name')
  })
})

describe('the services option', () => {
  it('refuses what it cannot serve, naming the option', async () => {
    const refused = async (options: unknown, message: string): Promise<void> => {
      await expect(startEmulator(options as never)).rejects.toThrow(message)
    }
    await refused({ services: {} }, 'options.services: must name 1 to 16 services')
    await refused({ services: [] }, 'options.services: must be an object')
    await refused({ services: { Feide: {} } }, 'options.services.Feide: a service name is lower-case letters')
    await refused({ services: { _emulator: {} } }, 'options.services._emulator: a service name')
    await refused(
      { services: { surf: { dialec: 'openconext' } } },
      'options.services.surf.dialec: is not an option (did you mean dialect?)',
    )
    await refused({ services: { surf: { dialect: 'surfconext' } } }, 'options.services.surf.dialect: must be one of')
    await refused({ services: { surf: { latency: -1 } } }, 'options.services.surf.latency: must be a non-negative number')
    await refused(
      { services: { surf: { rateLimit: { limit: 0, windowMs: 10 } } } },
      'options.services.surf.rateLimit.limit: must be a positive integer',
    )
    await refused({ services: { surf: { data: { groups: 1 } } } }, 'options.services.surf.data: ')
    await refused({ services: { surf: null } }, 'options.services.surf: must be an object')
    await refused({ dialect: 'openconext', services: { surf: {} } }, 'options.dialect: give it per service')
  })

  it('leaves an emulator of one service as it was: no services, none by name', async () => {
    const one = await startEmulator()
    try {
      expect(one.serviceNames).toEqual([])
      expect(() => one.service('feide')).toThrow('this emulator serves one, without `services`')
      expect(one.baseUrl).toBe(`${new URL(one.baseUrl).origin}/groups`)
    } finally {
      await one.close()
    }
  })
})
