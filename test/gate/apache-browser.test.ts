/**
 * A browser signs in through Apache httpd (examples/gate/apache.conf, mod_authnz_fcgi) in
 * headless Chromium, driven by playwright-core, against the emulator's OAuth server: the
 * gate sends it to sign in, the callback (through Apache to the gate) sets the session
 * cookie, the app behind Apache and the CGI script inside it see who it is; a student gets
 * 403 at /admin (no sign-in loop).
 *
 * Needs Apache (see support/apache.ts) and Chromium (test/support/chromium.ts): without
 * one, skipped with the reason; in CI (CI=true for Chromium, VOOT_GUARD_PROXIES=required
 * for Apache) a failure.
 */
import { existsSync } from 'node:fs'
import { chromium, type Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Emulator } from '../../testing/index.js'
import type { GateServer } from '../../gate/index.js'
import { CHROMIUM_ARGS, findChromium, needChromium } from '../support/chromium.js'
import { APACHE, startApache } from './support/apache.js'
import { appSawOnPage, signInAt } from './support/browser-sign-in.js'
import { gatePort, startGateEmulator, startTestGate, testGateConfig } from './support/gate-harness.js'
import { needBinary, startEchoApp, type RunningProxy } from './support/proxies.js'

const CHROMIUM = findChromium()

let emulator: Emulator
let gate: GateServer
let app: Awaited<ReturnType<typeof startEchoApp>>
let apache: RunningProxy | undefined
let browser: Browser | undefined

beforeAll(async () => {
  emulator = await startGateEmulator()
  gate = await startTestGate(testGateConfig(emulator, { fastcgi: { listen: '127.0.0.1:0' } }))
  app = await startEchoApp()
  if (existsSync(APACHE)) {
    const fastcgiPort = Number(gate.fastcgi!.address.split(':').pop())
    apache = await startApache({ gatePort: gatePort(gate), fastcgiPort, appPort: app.port })
  }
  if (CHROMIUM.found && apache !== undefined) {
    browser = await chromium.launch({ executablePath: CHROMIUM.executablePath, args: [...CHROMIUM_ARGS], timeout: 30_000 })
  }
}, 60_000)

afterAll(async () => {
  await browser?.close()
  await apache?.stop()
  await gate?.close()
  await app?.close()
  await emulator?.close()
})

const signIn = (page: Parameters<typeof signInAt>[0], path: string, name: string) =>
  signInAt(page, apache!.url, path, { name, authUrl: emulator.authUrl })

describe('a browser through Apache httpd and the gate', () => {
  it('signs alice in; the proxied app and the CGI script see her; bob gets 403 at /admin', async (ctx) => {
    needBinary(ctx, APACHE)
    needChromium(ctx, CHROMIUM)
    const context = await browser!.newContext()
    const page = await context.newPage()
    try {
      await signIn(page, '/wiki/page?x=1', 'Alice Hansen')
      const saw = await appSawOnPage(page)
      expect(saw.url).toBe('/wiki/page?x=1')
      expect(saw.headers['x-voot-user']).toBe('alice')
      const session = (await context.cookies(apache!.url)).find((cookie) => cookie.name === 'voot-gate')
      expect(session).toMatchObject({ httpOnly: true, sameSite: 'Lax', secure: false, path: '/' })
      const cgi = await page.goto(`${apache!.url}/cgi-bin/app.sh`)
      expect(cgi?.status()).toBe(200)
      expect(await page.locator('body').innerText()).toContain('user=alice')
    } finally {
      await context.close()
    }

    const bobContext = await browser!.newContext()
    const bobPage = await bobContext.newPage()
    try {
      await signIn(bobPage, '/wiki', 'Bob Nilsen')
      const denied = await bobPage.goto(`${apache!.url}/admin/reports`)
      expect(denied?.status()).toBe(403)
      expect(bobPage.url()).toBe(`${apache!.url}/admin/reports`)
    } finally {
      await bobContext.close()
    }
  }, 90_000)
})
