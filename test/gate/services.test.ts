/**
 * One gate over the emulator's two group services (Feide and SURFconext), each behind a
 * proxy that records every token it receives: one rule admits a Feide admin of one group
 * and a SURFconext admin of another and refuses everyone else; bearer tokens go to the
 * service their host is routed to, or their JWT issuer names, never to both; a browser
 * chooses its provider on a page without script (Chromium), and its session keeps the
 * choice; one service down leaves the other's users served. docs/images/gate-signin-choice.png
 * is made here.
 */
import { chromium, type Browser } from 'playwright-core'
import { request } from 'undici'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { checkGateConfig, createPolicyRunner, startGateServer, type GateConfig, type GateServer } from '../../gate/internal.js'
import { PAGE_CSP } from '../../gate/pages/page-html.js'
import {
  defaultData,
  openConextData,
  ORG_ID,
  PROJECT_BOARD_GROUP_ID,
  startEmulator,
  type Emulator,
  type EmulatorService,
} from '../../testing/index.js'
import { CHROMIUM_ARGS, findChromium, needChromium } from '../support/chromium.js'
import { startRecordingProxy } from '../support/recording-proxy.js'
import { COOKIE_SECRETS, GATE_CLIENT } from './support/gate-harness.js'

const CHROMIUM = findChromium()
const IMAGES = new URL('../../docs/images/', import.meta.url)
const SURF_ROLES = ['member', 'manager', 'admin', 'owner']
const cleanups: Array<() => Promise<void>> = []
let emulator: Emulator
let feide: EmulatorService
let surf: EmulatorService
let proxies: Record<'feide' | 'surf', { url: string; received: string[] }>
let gate: GateServer
let base = ''
let browser: Browser | undefined
/** The decision log's lines. */
const logged: string[] = []

/** The gate's configuration over the two recording proxies. */
function servicesConfig(overrides: Partial<GateConfig> = {}): GateConfig {
  return {
    listen: '127.0.0.1:0',
    services: {
      feide: {
        label: 'Feide',
        service: { baseUrl: `${proxies.feide.url}/groups`, allowInsecureHttp: true, timeout: '2s', retries: 0, circuitBreaker: false },
        oauth: {
          issuer: feide.authUrl,
          clientId: GATE_CLIENT.clientId,
          clientSecret: GATE_CLIENT.clientSecret,
          scopes: ['openid', 'groups'],
        },
        hosts: ['no.app.test'],
        issuers: ['https://auth.dataporten.no'],
      },
      surf: {
        label: 'SURFconext',
        service: {
          baseUrl: proxies.surf.url,
          allowInsecureHttp: true,
          timeout: '2s',
          retries: 0,
          circuitBreaker: false,
          roles: SURF_ROLES,
        },
        oauth: {
          issuer: surf.authUrl,
          clientId: GATE_CLIENT.clientId,
          clientSecret: GATE_CLIENT.clientSecret,
          scopes: ['openid', 'groups'],
        },
        hosts: ['nl.app.test'],
        issuers: ['https://connect.surfconext.nl'],
      },
    },
    groupPrefixes: { 'fc:': 'feide', 'urn:collab:': 'surf' },
    cookie: { secrets: COOKIE_SECRETS },
    rules: [
      { id: 'board', path: '/board/**', require: { anyOf: [ORG_ID, PROJECT_BOARD_GROUP_ID], role: 'admin' } },
      { id: 'signed-in', path: '/**', allow: 'signed-in' },
    ],
    ...overrides,
  }
}

beforeAll(async () => {
  // One emulator of two services, each with its own tokens and OAuth server, the gate's client registered at both.
  emulator = await startEmulator({
    services: {
      feide: { dialect: 'dataporten', data: { ...defaultData, clients: [...defaultData.clients, GATE_CLIENT] } },
      surf: { dialect: 'openconext', data: { ...openConextData, clients: [...openConextData.clients, GATE_CLIENT] } },
    },
  })
  feide = emulator.service('feide')
  surf = emulator.service('surf')
  cleanups.push(() => emulator.close())
  const received = { feide: [] as string[], surf: [] as string[] }
  proxies = {
    feide: { url: (await startRecordingProxy(feide, { received: received.feide }, cleanups)).url, received: received.feide },
    surf: { url: (await startRecordingProxy(surf, { received: received.surf }, cleanups)).url, received: received.surf },
  }
  gate = await startGateServer(servicesConfig({ log: { decisions: 'stdout' } }), {
    logger: { warn: () => {} },
    output: { stdout: { write: (text: string) => logged.push(text) }, stderr: { write: () => true } },
  })
  base = gate.url
  if (CHROMIUM.found)
    browser = await chromium.launch({ executablePath: CHROMIUM.executablePath, args: [...CHROMIUM_ARGS], timeout: 30_000 })
}, 60_000)

afterAll(async () => {
  await browser?.close()
  await gate?.close()
  for (const cleanup of cleanups.reverse()) await cleanup()
})

beforeEach(() => {
  proxies.feide.received.length = 0
  proxies.surf.received.length = 0
  feide.faults.clear()
  surf.faults.clear()
})

/** Asks the gate as Caddy's forward_auth would, for `path` on `host`. */
async function check(host: string, path: string, credentials: { token?: string; cookie?: string } = {}): Promise<number> {
  const headers: Record<string, string> = {
    'x-forwarded-method': 'GET',
    'x-forwarded-proto': 'http',
    'x-forwarded-host': host,
    'x-forwarded-uri': path,
    accept: 'application/json',
  }
  if (credentials.token !== undefined) headers.authorization = `Bearer ${credentials.token}`
  if (credentials.cookie !== undefined) headers.cookie = credentials.cookie
  const answer = await request(`${base}/_gate/forward-auth`, { headers })
  await answer.body.dump()
  return answer.statusCode
}

/** An unsigned JWT with `iss` (the gate reads it only to choose; the service judges the token). */
function jwtFrom(iss: string): string {
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url')
  return `${part({ alg: 'RS256', typ: 'at+jwt' })}.${part({ iss, sub: 'someone', exp: Math.floor(Date.now() / 1000) + 600 })}.c2lnbmF0dXJl`
}

describe('one gate, two group services', () => {
  it('one rule admits a Feide admin of one group and a SURFconext admin of another, and refuses everyone else', async () => {
    expect(await check('no.app.test', '/board/', { token: feide.issueToken('alice') })).toBe(200)
    expect(await check('nl.app.test', '/board/', { token: surf.issueToken('alice') })).toBe(200)
    expect(await check('no.app.test', '/board/', { token: feide.issueToken('erin') })).toBe(403) // no groups at Feide
    expect(await check('nl.app.test', '/board/', { token: surf.issueToken('carol') })).toBe(403) // a manager, not an admin
    expect(await check('nl.app.test', '/board/', { token: surf.issueToken('bob') })).toBe(403) // a prospect
    expect(await check('no.app.test', '/board/')).toBe(401)
    // A host no service is routed to, with a token that names no issuer: sent nowhere.
    const before = proxies.feide.received.length + proxies.surf.received.length
    expect(await check('other.app.test', '/board/', { token: feide.issueToken('alice') })).toBe(401)
    expect(proxies.feide.received.length + proxies.surf.received.length).toBe(before)
  })

  it('sends each token to its own service only: calls counted per service and token', async () => {
    const tokens = {
      feide: [feide.issueToken('alice'), feide.issueToken('erin'), feide.issueToken('bob')],
      surf: [surf.issueToken('alice'), surf.issueToken('carol'), surf.issueToken('frank')],
    }
    for (let round = 0; round < 2; round++) {
      for (const token of tokens.feide) await check('no.app.test', '/board/', { token })
      for (const token of tokens.surf) await check('nl.app.test', '/board/', { token })
    }
    for (const service of ['feide', 'surf'] as const) {
      const other = service === 'feide' ? 'surf' : 'feide'
      for (const token of tokens[service]) {
        const calls = proxies[service].received.filter((seen) => seen === token).length
        // me/groups, perhaps me/groups/{id}; the second round from the cache.
        expect(calls).toBeGreaterThanOrEqual(1)
        expect(calls).toBeLessThanOrEqual(2)
        expect(proxies[other].received).not.toContain(token)
      }
      expect(proxies[service].received.every((seen) => tokens[service].includes(seen))).toBe(true)
    }
  })

  it('routes a JWT by its issuer, and refuses one whose issuer and host name two services, without a call', async () => {
    // No host route: the issuer chooses SURFconext, which judges the token (unknown there: 401).
    const surfish = jwtFrom('https://connect.surfconext.nl')
    expect(await check('other.app.test', '/board/', { token: surfish })).toBe(401)
    expect(proxies.surf.received).toContain(surfish)
    expect(proxies.feide.received).not.toContain(surfish)
    // The host says Feide, the issuer SURFconext: neither gets it.
    const before = { feide: proxies.feide.received.length, surf: proxies.surf.received.length }
    expect(await check('no.app.test', '/board/', { token: surfish })).toBe(401)
    expect(proxies.feide.received.length).toBe(before.feide)
    expect(proxies.surf.received.length).toBe(before.surf)
  })

  it("with one service down, the other's users are served and the down service's users get 503", async () => {
    surf.faults.add({ kind: 'status', status: 503 })
    const feideAlice = feide.issueToken('alice')
    const surfAlice = surf.issueToken('alice')
    expect(await check('nl.app.test', '/board/', { token: surfAlice })).toBe(503)
    expect(await check('no.app.test', '/board/', { token: feideAlice })).toBe(200)
    expect(await check('no.app.test', '/board/', { token: feide.issueToken('erin') })).toBe(403)
    const ready = await request(`${base}/_gate/readyz`)
    const body = (await ready.body.json()) as { groupService: Record<string, { status: string }> }
    expect(Object.keys(body.groupService)).toEqual(['feide', 'surf'])
  })

  it('tells the app which service the user came with (X-Voot-Service): a Feide alice is not a SURFconext alice', async () => {
    const heard = async (host: string, token: string) => {
      const answer = await request(`${base}/_gate/forward-auth`, {
        headers: {
          'x-forwarded-method': 'GET',
          'x-forwarded-proto': 'http',
          'x-forwarded-host': host,
          'x-forwarded-uri': '/board/',
          authorization: `Bearer ${token}`,
        },
      })
      await answer.body.dump()
      return [answer.statusCode, answer.headers['x-voot-user'], answer.headers['x-voot-service']]
    }
    expect(await heard('no.app.test', feide.issueToken('alice'))).toEqual([200, 'alice', 'feide'])
    expect(await heard('nl.app.test', surf.issueToken('alice'))).toEqual([200, 'alice', 'surf'])
  })

  it('answers a good token sent to a host no service is routed to with its own code, not invalid_token, without a call', async () => {
    logged.length = 0
    const before = proxies.feide.received.length + proxies.surf.received.length
    const answer = await request(`${base}/_gate/forward-auth`, {
      headers: {
        'x-forwarded-method': 'GET',
        'x-forwarded-proto': 'http',
        'x-forwarded-host': 'other.app.test',
        'x-forwarded-uri': '/board/',
        accept: 'application/json',
        authorization: `Bearer ${feide.issueToken('alice')}`,
      },
    })
    expect(answer.statusCode).toBe(401)
    // No `error` in the challenge: the token was not judged, and a client must not throw it away.
    expect(answer.headers['www-authenticate']).toBe('Bearer realm="voot-gate"')
    expect(await answer.body.json()).toEqual({
      error: 'no_service',
      error_description:
        'This host is routed to no group service of the gate, and the token names none: it was sent to none and not judged',
    })
    expect(proxies.feide.received.length + proxies.surf.received.length).toBe(before)
    const [line] = logged.map((text) => JSON.parse(text) as { outcome: string; reason: string; service: string | null })
    expect(line).toMatchObject({ outcome: 'signin', reason: 'no_service', service: null })
  })

  it('writes the service each token went to in the decision log', async () => {
    logged.length = 0
    await check('no.app.test', '/board/', { token: feide.issueToken('erin') })
    await check('nl.app.test', '/board/', { token: surf.issueToken('alice') })
    await check('other.app.test', '/board/', { token: surf.issueToken('alice') })
    const lines = logged.map((text) => JSON.parse(text) as { host: string; outcome: string; service: string | null })
    expect(lines.map(({ host, outcome, service }) => [host, outcome, service])).toEqual([
      ['no.app.test', 'deny', 'feide'],
      ['nl.app.test', 'allow', 'surf'],
      ['other.app.test', 'signin', null],
    ])
  })

  it('is ready when both services answer like group services (OpenConext at its root too)', async () => {
    const ready = await request(`${base}/_gate/readyz`)
    const body = (await ready.body.json()) as { status: string; groupService: Record<string, { status: string }> }
    expect([ready.statusCode, body.status]).toEqual([200, 'ready'])
  })

  it('reports each service in the metrics by name', async () => {
    const answer = await request(`${base}/_gate/metrics`)
    const text = await answer.body.text()
    expect(text).toMatch(/^voot_gate_up\{service="feide"\} 1$/m)
    expect(text).toMatch(/^voot_gate_circuit_state\{service="surf"\} 0$/m)
    expect(text).not.toMatch(/^voot_gate_up \d$/m)
  })
})

describe('a refusal because the groups are on another service (other_service)', () => {
  it('says in the 403, on the forbidden page and in whoami where the groups are and which service the user came with', async () => {
    const words = await startGateServer(
      servicesConfig({
        rules: [
          { id: 'surf-board', path: '/surf/**', require: { group: PROJECT_BOARD_GROUP_ID, role: 'admin' } },
          { id: 'signed-in', path: '/**', allow: 'signed-in' },
        ],
      }),
      { logger: { warn: () => {} } },
    )
    try {
      const token = feide.issueToken('alice')
      const forwarded = {
        'x-forwarded-method': 'GET',
        'x-forwarded-proto': 'http',
        'x-forwarded-host': 'no.app.test',
        'x-forwarded-uri': '/surf/minutes',
      }
      const said = `This resource requires the role admin or higher in the group ${PROJECT_BOARD_GROUP_ID}, on SURFconext; the access token is Feide's`
      const refused = await request(`${words.url}/_gate/forward-auth`, {
        headers: { ...forwarded, accept: 'application/json', authorization: `Bearer ${token}` },
      })
      expect(refused.statusCode).toBe(403)
      expect(await refused.body.json()).toEqual({ error: 'forbidden', error_description: said })
      // Known without asking either service.
      expect([...proxies.feide.received, ...proxies.surf.received]).not.toContain(token)

      const page = await request(`${words.url}/_gate/forbidden`, {
        headers: { ...forwarded, accept: 'text/html', authorization: `Bearer ${token}` },
      })
      expect(page.statusCode).toBe(403)
      expect(await page.body.text()).toContain(`<p>${said.replace("'", '&#39;')}.</p>`)

      const whoami = await request(`${words.url}/_gate/whoami`, {
        headers: {
          'x-forwarded-proto': 'http',
          'x-forwarded-host': 'no.app.test',
          accept: 'application/json',
          authorization: `Bearer ${token}`,
        },
      })
      const body = (await whoami.body.json()) as {
        service: string
        rules: { id: string; outcome: string; reason?: string; detail?: string }[]
      }
      expect(body.service).toBe('feide')
      expect(body.rules.find((rule) => rule.id === 'surf-board')).toMatchObject({
        outcome: 'fail',
        reason: 'other_service',
        detail: 'its groups are on SURFconext; you came with Feide',
      })
      const html = await request(`${words.url}/_gate/whoami`, {
        headers: { 'x-forwarded-proto': 'http', 'x-forwarded-host': 'no.app.test', accept: 'text/html', authorization: `Bearer ${token}` },
      })
      expect(await html.body.text()).toContain('you do not pass (its groups are on SURFconext; you came with Feide).')
    } finally {
      await words.close()
    }
  })
})

describe('a browser chooses where to sign in', () => {
  it('is offered each provider on a page without script, chooses by keyboard, and its session keeps the choice', async (ctx) => {
    needChromium(ctx, CHROMIUM)
    const page = await browser!.newPage()
    try {
      const response = await page.goto(`${base}/_gate/signin?rd=%2F_gate%2Fwhoami`)
      expect(response?.status()).toBe(200)
      expect(response?.headers()['content-security-policy']).toBe(PAGE_CSP)
      expect(await page.content()).not.toContain('<script')
      await expect.poll(() => page.getByRole('heading', { level: 1 }).innerText()).toBe('Choose where to sign in')
      const choices = page.getByRole('list', { name: 'Where to sign in' }).getByRole('link')
      expect(await choices.allInnerTexts()).toEqual(['Sign in with Feide', 'Sign in with SURFconext'])
      await page.screenshot({ path: new URL('gate-signin-choice.png', IMAGES).pathname })
      // By keyboard: the second link, then Enter.
      await page.keyboard.press('Tab')
      expect(await page.locator(':focus').innerText()).toBe('Sign in with Feide')
      await page.keyboard.press('Tab')
      expect(await page.locator(':focus').innerText()).toBe('Sign in with SURFconext')
      await page.keyboard.press('Enter')
      await expect.poll(() => page.url()).toContain(`${surf.authUrl}/oauth/authorization`)
      await page.getByLabel('Alice Hansen').check()
      await page.getByRole('button', { name: 'Approve' }).click()
      await page.waitForURL(`${base}/_gate/whoami`)
      await expect.poll(() => page.locator('main p').first().innerText()).toBe('You are signed in as alice with SURFconext.')
      // The session's token goes to SURFconext, whatever host the request names.
      const cookies = await page.context().cookies(base)
      const cookie = cookies.map(({ name, value }) => `${name}=${value}`).join('; ')
      proxies.feide.received.length = 0
      expect(await check('127.0.0.1', '/board/', { cookie })).toBe(200)
      expect(proxies.feide.received).toEqual([])
      expect(proxies.surf.received.length).toBeGreaterThan(0)
    } finally {
      await page.close()
    }
  })

  it('refuses a provider the gate does not have', async () => {
    const answer = await request(`${base}/_gate/signin?service=google&rd=%2F`)
    expect(answer.statusCode).toBe(400)
    expect(((await answer.body.json()) as { error_description: string }).error_description).toBe('No such provider to sign in with')
  })
})

describe('a configuration of several services', () => {
  it('reports every problem in one run', async () => {
    const problems = await checkGateConfig({
      service: { baseUrl: 'https://groups-api.dataporten.no/groups' },
      oauth: { issuer: 'https://auth.dataporten.no', clientId: 'x' },
      services: {
        feide: { service: { baseUrl: 'https://groups-api.dataporten.no/groups', timout: '2s' }, hosts: ['no.example.org'] },
        surf: { service: { baseUrl: 'https://voot.surfconext.nl', roles: SURF_ROLES }, hosts: ['no.example.org'] },
      },
      groupPrefixes: { 'fc:': 'feide', 'urn:collab:': 'surff' },
      rules: [
        { path: '/a/**', require: { group: 'fc:org:example.org', role: 'admin', service: 'surff' } },
        { path: '/b/**', require: { group: 'urn:mace:example.org:staff' } },
        { path: '/c/**', require: { group: 'fc:org:example.org', role: 'admn' } },
        { allow: 'signed-in' },
      ],
    })
    const said = problems.map((problem) => `${problem.path.join('.')}: ${problem.message}`)
    expect(said).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^service: give either "service" or "services"/),
        expect.stringMatching(/^oauth: with "services", each service has its own "oauth"/),
        expect.stringMatching(/^services\.feide\.service\.timout: unknown key/),
        expect.stringMatching(/^services\.surf\.hosts\.0: is routed to "feide" already/),
        expect.stringMatching(/^groupPrefixes\.urn:collab:: must name one of the services/),
        expect.stringMatching(/^rules\.0\.require\.service: must name one of the services/),
        expect.stringMatching(/^rules\.1\.require\.group: /),
        expect.stringMatching(/^rules\.2\.require\.role: /),
      ]),
    )
    expect(problems.find((problem) => problem.path.join('.') === 'rules.2.require.role')?.suggestion).toBe('admin')
  })

  it('runs policy tests that name the service a user signed in with', async () => {
    const runner = createPolicyRunner({
      ...servicesConfig(),
      fixtures: { alice: { [ORG_ID]: 'admin', [PROJECT_BOARD_GROUP_ID]: 'member' }, bob: { [PROJECT_BOARD_GROUP_ID]: 'admin' } },
      tests: [
        { request: 'GET https://app.test/board/', as: 'alice', service: 'feide', expect: 'allow' },
        { request: 'GET https://app.test/board/', as: 'alice', service: 'surf', expect: 'deny' },
        { request: 'GET https://app.test/board/', as: 'bob', service: 'surf', expect: 'allow' },
        { request: 'GET https://app.test/board/', as: 'bob', service: 'feide', expect: 'deny' },
        // A bearer token, routed by its host.
        { request: 'GET https://nl.app.test/board/', as: 'bob', expect: 'allow' },
        { request: 'GET https://no.app.test/board/', as: 'bob', expect: 'deny' },
        { request: 'GET https://app.test/board/', as: 'bob', expect: 'signin' },
      ],
    })
    try {
      const results = await runner.runTests()
      expect(results.map((result) => [result.test.title, result.verdict.outcome])).toEqual(
        results.map((result) => [result.test.title, result.test.expect]),
      )
      expect(results.every((result) => result.ok)).toBe(true)
      expect(results[1]?.verdict.reason).toMatch(/admin/)
    } finally {
      await runner.close()
    }
  })

  it('refuses a policy test that names a service the gate does not have', async () => {
    const problems = await checkGateConfig({
      ...servicesConfig(),
      fixtures: { alice: {} },
      tests: [{ request: 'GET https://app.test/board/', as: 'alice', service: 'fiede', expect: 'deny' }],
    })
    expect(problems.map((problem) => [problem.path.join('.'), problem.suggestion])).toEqual([['tests.0.service', 'feide']])
  })
})
