/**
 * A browser signs in through nginx (examples/gate/nginx.conf) and through HAProxy
 * (examples/gate/haproxy.cfg and voot-gate.lua) in headless Chromium, driven by
 * playwright-core, against the emulator's OAuth server: the gate sends it to sign in, the
 * callback sets the session cookie, the app behind the proxy sees who it is; an employee
 * reaches /admin, a student gets 403 (no sign-in loop); sign-out clears the session.
 *
 * Needs the proxy (see support/proxies.ts, support/haproxy.ts) and Chromium
 * (test/support/chromium.ts): without one, skipped with the reason; in CI (CI=true for
 * Chromium, VOOT_GUARD_PROXIES=required for the proxies) a failure.
 */
import { existsSync } from 'node:fs'
import { chromium, type Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Emulator } from '../../testing/index.js'
import type { GateServer } from '../../gate/index.js'
import { CHROMIUM_ARGS, findChromium, needChromium } from '../support/chromium.js'
import { appSawOnPage, signInAt } from './support/browser-sign-in.js'
import { gatePort, startGateEmulator, startTestGate, testGateConfig } from './support/gate-harness.js'
import { HAPROXY, startHaproxy } from './support/haproxy.js'
import { needBinary, NGINX, startEchoApp, startNginx, type RunningProxy } from './support/proxies.js'

const CHROMIUM = findChromium()

let emulator: Emulator
let gate: GateServer
let app: Awaited<ReturnType<typeof startEchoApp>>
const proxies: Record<'nginx' | 'HAProxy', RunningProxy | undefined> = { nginx: undefined, HAProxy: undefined }
let browser: Browser | undefined

beforeAll(async () => {
  emulator = await startGateEmulator()
  gate = await startTestGate(testGateConfig(emulator))
  app = await startEchoApp()
  const addresses = { gatePort: gatePort(gate), appPort: app.port }
  if (existsSync(NGINX)) proxies.nginx = await startNginx(addresses)
  if (existsSync(HAPROXY)) proxies.HAProxy = await startHaproxy(addresses)
  if (CHROMIUM.found) {
    browser = await chromium.launch({ executablePath: CHROMIUM.executablePath, args: [...CHROMIUM_ARGS], timeout: 30_000 })
  }
}, 60_000)

afterAll(async () => {
  await browser?.close()
  await proxies.nginx?.stop()
  await proxies.HAProxy?.stop()
  await gate?.close()
  await app?.close()
  await emulator?.close()
})

describe.each([
  { name: 'nginx', binary: NGINX },
  { name: 'HAProxy', binary: HAPROXY },
] as const)('a browser through $name and the gate', ({ name, binary }) => {
  const base = () => (proxies[name] as RunningProxy).url
  const signIn = (page: Parameters<typeof signInAt>[0], path: string, who: string) =>
    signInAt(page, base(), path, { name: who, authUrl: emulator.authUrl })

  it('signs alice in, lets her into /admin; bob gets 403 there; sign-out ends the session', async (ctx) => {
    needBinary(ctx, binary)
    needChromium(ctx, CHROMIUM)
    const context = await browser!.newContext()
    const page = await context.newPage()
    try {
      await signIn(page, '/wiki/page?x=1', 'Alice Hansen')
      const saw = await appSawOnPage(page)
      expect(saw.url).toBe('/wiki/page?x=1')
      expect(saw.headers['x-voot-user']).toBe('alice')
      expect(saw.headers['x-voot-rule']).toBe('signed-in')
      // The session cookie: sealed, HttpOnly, SameSite=Lax; no Secure on plain http on loopback.
      const cookies = await context.cookies(base())
      const session = cookies.find((cookie) => cookie.name === 'voot-gate')
      expect(session).toMatchObject({ httpOnly: true, sameSite: 'Lax', secure: false, path: '/' })
      expect(session!.value).not.toContain('alice')
      expect(cookies.find((cookie) => cookie.name === 'voot-gate-signin')).toBeUndefined()

      const admin = await page.goto(`${base()}/admin/reports`)
      expect(admin?.status()).toBe(200)
      expect((await appSawOnPage(page)).headers['x-voot-rule']).toBe('admin')

      // Sign-out is a same-origin POST.
      const status = await page.evaluate(async () => (await fetch('/_gate/signout', { method: 'POST', redirect: 'manual' })).type)
      expect(status).toBe('opaqueredirect')
      expect((await context.cookies(base())).find((cookie) => cookie.name === 'voot-gate')).toBeUndefined()
      await page.goto(`${base()}/wiki/page`)
      await expect.poll(() => page.url()).toContain(`${emulator.authUrl}/oauth/authorization`)
    } finally {
      await context.close()
    }

    const bobContext = await browser!.newContext()
    const bobPage = await bobContext.newPage()
    try {
      await signIn(bobPage, '/wiki', 'Bob Nilsen')
      expect((await appSawOnPage(bobPage)).headers['x-voot-user']).toBe('bob')
      const denied = await bobPage.goto(`${base()}/admin/reports`)
      expect(denied?.status()).toBe(403)
      expect(bobPage.url()).toBe(`${base()}/admin/reports`)
    } finally {
      await bobContext.close()
    }
  }, 90_000)
})

describe('a browser through nginx and the gate', () => {
  it('shows a failed sign-in as 400 when the person declines, and sets no session', async (ctx) => {
    needBinary(ctx, NGINX)
    needChromium(ctx, CHROMIUM)
    const context = await browser!.newContext()
    const page = await context.newPage()
    try {
      await page.goto(`${proxies.nginx!.url}/wiki`)
      await expect.poll(() => page.url()).toContain(`${emulator.authUrl}/oauth/authorization`)
      const answer = page.waitForResponse((response) => response.url().includes('/_gate/callback'))
      await page.getByRole('button', { name: 'Decline' }).click()
      expect((await answer).status()).toBe(400)
      expect((await context.cookies(proxies.nginx!.url)).find((cookie) => cookie.name === 'voot-gate')).toBeUndefined()
    } finally {
      await context.close()
    }
  }, 60_000)
})
