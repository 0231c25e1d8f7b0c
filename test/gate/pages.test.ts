/**
 * Pages for people (DESIGN section 6), through real nginx, Caddy, HAProxy and Apache httpd in headless Chromium:
 * a browser refused on /admin sees the forbidden page naming what it needs (an API client
 * keeps the JSON 403); whoami lists the rules of the host in words; the pages carry a strict
 * Content-Security-Policy, no script, `no-store`, and work by keyboard; a signed-out browser
 * never sees a protected page again from its cache (the snippets send `no-store`).
 * docs/images/gate-forbidden.png and gate-whoami.png are made here.
 */
import { existsSync } from 'node:fs'
import { chromium, type Browser, type Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Emulator } from '../../testing/index.js'
import type { GateServer } from '../../gate/index.js'
import { PAGE_CSP } from '../../gate/pages/page-html.js'
import { CHROMIUM_ARGS, findChromium, needChromium } from '../support/chromium.js'
import { signInAt } from './support/browser-sign-in.js'
import { gatePort, startGateEmulator, startTestGate, testGateConfig } from './support/gate-harness.js'
import { APACHE, startApache } from './support/apache.js'
import { HAPROXY, startHaproxy } from './support/haproxy.js'
import { CADDY, needBinary, NGINX, startCaddy, startEchoApp, startNginx, type RunningProxy } from './support/proxies.js'
import { send } from './support/raw-request.js'

const CHROMIUM = findChromium()
const IMAGES = new URL('../../docs/images/', import.meta.url)

let emulator: Emulator
let gate: GateServer
let app: Awaited<ReturnType<typeof startEchoApp>>
const proxies: Record<'nginx' | 'caddy' | 'haproxy' | 'apache', RunningProxy | undefined> = {
  nginx: undefined,
  caddy: undefined,
  haproxy: undefined,
  apache: undefined,
}
let browser: Browser | undefined

beforeAll(async () => {
  emulator = await startGateEmulator()
  // With the FastCGI authorizer's listener, for Apache httpd.
  gate = await startTestGate(testGateConfig(emulator, { fastcgi: { listen: '127.0.0.1:0' } }))
  app = await startEchoApp()
  const addresses = { gatePort: gatePort(gate), appPort: app.port }
  if (existsSync(NGINX)) proxies.nginx = await startNginx(addresses)
  if (existsSync(CADDY)) proxies.caddy = await startCaddy(addresses)
  if (existsSync(HAPROXY)) proxies.haproxy = await startHaproxy(addresses)
  if (existsSync(APACHE)) proxies.apache = await startApache({ ...addresses, fastcgiPort: Number(gate.fastcgi!.address.split(':').pop()) })
  if (CHROMIUM.found)
    browser = await chromium.launch({ executablePath: CHROMIUM.executablePath, args: [...CHROMIUM_ARGS], timeout: 30_000 })
}, 60_000)

afterAll(async () => {
  await browser?.close()
  await proxies.nginx?.stop()
  await proxies.caddy?.stop()
  await proxies.haproxy?.stop()
  await proxies.apache?.stop()
  await gate?.close()
  await app?.close()
  await emulator?.close()
})

const signIn = (page: Page, base: string, path: string, name: string) => signInAt(page, base, path, { name, authUrl: emulator.authUrl })

const bearer = (user: string) => ({ authorization: `Bearer ${emulator.issueToken(user)}` })

const BINARIES = { nginx: NGINX, caddy: CADDY, haproxy: HAPROXY, apache: APACHE } as const

describe.each(['nginx', 'caddy', 'haproxy', 'apache'] as const)('pages through %s', (name) => {
  const binary = BINARIES[name]
  const base = () => (proxies[name] as RunningProxy).url

  it('gives an API client the JSON 403, naming what the request needs', async (ctx) => {
    needBinary(ctx, binary)
    const refused = await send(base(), '/admin/reports', { headers: { ...bearer('bob'), accept: 'application/json' } })
    expect(refused.status).toBe(403)
    expect(refused.headers['content-type']).toContain('application/json')
    expect(JSON.parse(refused.body)).toEqual({
      error: 'forbidden',
      error_description: 'This resource requires the role admin or higher in the group fc:org:example.org',
    })
    // The method of the refused request is the one judged: a POST by a member is no admin's either.
    const posted = await send(base(), '/admin/reports', { method: 'POST', headers: { ...bearer('bob'), accept: 'application/json' } })
    expect(posted.status).toBe(403)
    // Allowed requests are unchanged, and carry no-store (whatever the app said).
    const allowed = await send(base(), '/admin/reports', { headers: bearer('alice') })
    expect(allowed.status).toBe(200)
    expect(allowed.headers['cache-control']).toBe('no-store')
  })

  it('shows a refused browser the forbidden page; whoami lists the rules in words', async (ctx) => {
    needBinary(ctx, binary)
    needChromium(ctx, CHROMIUM)
    const context = await browser!.newContext()
    const page = await context.newPage()
    const scripts: string[] = []
    // What the Content-Security-Policy refused, had the page tried anything (a script, a style).
    page.on('console', (message) => {
      if (/Content Security Policy|Refused to/i.test(message.text())) scripts.push(message.text())
    })
    try {
      await signIn(page, base(), '/wiki/home', 'Bob Nilsen')
      const answer = await page.goto(`${base()}/admin/reports?x=1`)
      expect(answer?.status()).toBe(403)
      const headers = answer!.headers()
      expect(headers['content-security-policy']).toBe(PAGE_CSP)
      expect(headers['cache-control']).toBe('no-store')
      await expect.poll(() => page.getByRole('heading', { level: 1 }).innerText()).toBe('You do not have access to this page')
      const text = await page.locator('main').innerText()
      expect(text).toContain('You are signed in as bob.')
      expect(text).toContain('You asked for')
      expect(text).toContain('/admin/reports')
      expect(text).not.toContain('x=1')
      expect(text).toContain('This resource requires the role admin or higher in the group fc:org:example.org.')
      // Bob's own groups are his business: the page names only what the rule names.
      expect(text).not.toContain('fc:fs:fs:emne')
      expect(await page.locator('script').count()).toBe(0)
      // By keyboard: the sign-out button, then the whoami link.
      await page.keyboard.press('Tab')
      expect(await page.locator(':focus').innerText()).toBe('Sign out')
      await page.keyboard.press('Tab')
      expect(await page.locator(':focus').innerText()).toBe('Who am I here?')
      if (name === 'nginx') await page.screenshot({ path: new URL('gate-forbidden.png', IMAGES).pathname, fullPage: true })

      await page.keyboard.press('Enter')
      await page.waitForURL(`${base()}/_gate/whoami?path=%2Fadmin%2Freports`)
      const whoami = await page.locator('main').innerText()
      expect(whoami).toContain('You are signed in as bob.')
      expect(whoami).toContain('public: Any method on /public/** needs anyone, without signing in. you pass.')
      expect(whoami).toContain(
        'admin: Any method on /admin/** needs the role admin or higher in the group fc:org:example.org. you do not pass (role too low).',
      )
      expect(whoami).toContain('courses: GET, HEAD on /courses/** needs membership in a group of type fc:fs:emne. you pass.')
      expect(whoami).toContain('signed-in: Any method on /** needs any signed-in user. you pass.')
      if (name === 'nginx') await page.screenshot({ path: new URL('gate-whoami.png', IMAGES).pathname, fullPage: true })
      expect(scripts).toEqual([])
    } finally {
      await context.close()
    }
  })

  it('never shows a protected page from the cache after sign-out', async (ctx) => {
    needBinary(ctx, binary)
    needChromium(ctx, CHROMIUM)
    const context = await browser!.newContext()
    const page = await context.newPage()
    try {
      await signIn(page, base(), '/admin/reports', 'Alice Hansen')
      expect(await page.locator('body').innerText()).toContain('"x-voot-user":"alice"')
      await page.goto(`${base()}/_gate/whoami`)
      await page.getByRole('button', { name: 'Sign out' }).click()
      // Sign-out comes back to whoami, which says so.
      await page.waitForURL(`${base()}/_gate/whoami`)
      await expect.poll(() => page.locator('main').innerText()).toContain('You are not signed in.')
      // The admin page again: asked again, refused, sent to sign in; never the copy it had.
      await page.goto(`${base()}/admin/reports`)
      await expect.poll(() => page.url()).toContain(`${emulator.authUrl}/oauth/authorization`)
      expect(await page.content()).not.toContain('x-voot-user')
    } finally {
      await context.close()
    }
  })
})

describe('whoami as JSON', () => {
  it("names a bearer token's user as the app hears it: the userinfo sub, one answer for both", async () => {
    const headers = { 'x-forwarded-host': 'app.example.org', 'x-forwarded-proto': 'https', accept: 'application/json' }
    const alice = bearer('alice')
    const check = await send(gate.url, '/_gate/forward-auth', {
      headers: { ...headers, 'x-forwarded-method': 'GET', 'x-forwarded-uri': '/admin/x', ...alice },
    })
    expect(check.status).toBe(200)
    expect(check.headers['x-voot-user']).toBe('alice')
    const json = JSON.parse((await send(gate.url, '/_gate/whoami', { headers: { ...headers, ...alice } })).body) as {
      user: string
      credentials: string
    }
    expect(json).toMatchObject({ user: 'alice', credentials: 'bearer' })
    const html = await send(gate.url, '/_gate/whoami', { headers: { ...headers, accept: 'text/html', ...alice } })
    expect(html.body).toContain('You are using an access token (a bearer token) of <strong>alice</strong>.')
    expect(html.body).not.toContain('does not know its user')
  })

  it('says for a bearer token which rules of the host it passes, and "unknown" while the group service fails', async () => {
    const headers = { 'x-forwarded-host': 'app.example.org', 'x-forwarded-proto': 'https', accept: 'application/json' }
    const ok = await send(gate.url, '/_gate/whoami', { headers: { ...headers, ...bearer('alice') } })
    expect(ok.status).toBe(200)
    const body = JSON.parse(ok.body) as { credentials: string; rules: { id: string; outcome: string }[] }
    expect(body.credentials).toBe('bearer')
    expect(body.rules.map((rule) => [rule.id, rule.outcome])).toEqual([
      ['public', 'pass'],
      ['admin', 'pass'],
      ['courses', 'fail'],
      ['signed-in', 'pass'],
    ])
    const anonymous = JSON.parse((await send(gate.url, '/_gate/whoami', { headers })).body) as { rules: { outcome: string }[] }
    expect(anonymous.rules.map((rule) => rule.outcome)).toEqual(['pass', 'signin', 'signin', 'signin'])
    const fault = emulator.faults.add({ kind: 'status', status: 500 })
    try {
      const down = JSON.parse((await send(gate.url, '/_gate/whoami', { headers: { ...headers, ...bearer('carol') } })).body) as {
        rules: { outcome: string }[]
      }
      expect(down.rules.map((rule) => rule.outcome)).toEqual(['pass', 'unknown', 'unknown', 'unknown'])
    } finally {
      emulator.faults.remove(fault)
    }
  })
})
