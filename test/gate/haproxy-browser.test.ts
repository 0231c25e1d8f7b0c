/**
 * A browser signs in through HAProxy (examples/gate/haproxy.cfg and voot-gate.lua) in
 * headless Chromium, driven by playwright-core, against the emulator's OAuth server: the
 * Lua action sends it to sign in, the callback (proxied to the gate on the app's host) sets
 * the session cookie, the app behind HAProxy sees who it is; an employee reaches /admin, a
 * student gets 403 (no sign-in loop); sign-out clears the session.
 *
 * Needs HAProxy (see support/haproxy.ts) and Chromium (test/support/chromium.ts): without
 * one, skipped with the reason; in CI (CI=true for Chromium, VOOT_GUARD_PROXIES=required
 * for HAProxy) a failure.
 */
import { existsSync } from 'node:fs'
import { chromium, type Browser, type Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it, type TestContext } from 'vitest'
import type { Emulator } from '../../testing/index.js'
import type { GateServer } from '../../gate/index.js'
import { CHROMIUM_ARGS, findChromium, isCI } from '../support/chromium.js'
import { gatePort, startGateEmulator, startTestGate, testGateConfig } from './support/gate-harness.js'
import { HAPROXY, startHaproxy } from './support/haproxy.js'
import { needBinary, startEchoApp, type RunningProxy } from './support/proxies.js'

const CHROMIUM = findChromium()

let emulator: Emulator
let gate: GateServer
let app: Awaited<ReturnType<typeof startEchoApp>>
let haproxy: RunningProxy | undefined
let browser: Browser | undefined

beforeAll(async () => {
  emulator = await startGateEmulator()
  gate = await startTestGate(testGateConfig(emulator))
  app = await startEchoApp()
  if (existsSync(HAPROXY)) haproxy = await startHaproxy({ gatePort: gatePort(gate), appPort: app.port })
  if (CHROMIUM.found && haproxy !== undefined) {
    browser = await chromium.launch({ executablePath: CHROMIUM.executablePath, args: [...CHROMIUM_ARGS], timeout: 30_000 })
  }
}, 60_000)

afterAll(async () => {
  await browser?.close()
  await haproxy?.stop()
  await gate?.close()
  await app?.close()
  await emulator?.close()
})

function needChromium(ctx: TestContext): void {
  if (CHROMIUM.found) return
  const reason = `browser test skipped: ${CHROMIUM.advice}`
  if (isCI()) throw new Error(`CI=true, and ${CHROMIUM.advice}`)
  console.warn(reason)
  ctx.skip(reason)
}

/** What the echo app behind HAProxy answered on the page. */
async function appSawOnPage(page: Page): Promise<{ url: string; headers: Record<string, string> }> {
  return JSON.parse(await page.locator('body').innerText()) as { url: string; headers: Record<string, string> }
}

async function signInAt(page: Page, path: string, name: string): Promise<void> {
  await page.goto(`${haproxy!.url}${path}`)
  // The gate sent the browser to the emulator's consent page.
  await expect.poll(() => page.url()).toContain(`${emulator.authUrl}/oauth/authorization`)
  await page.getByLabel(name).check()
  await page.getByRole('button', { name: 'Approve' }).click()
  await page.waitForURL(`${haproxy!.url}${path}`)
}

describe('a browser through HAProxy, its Lua action and the gate', () => {
  it('signs alice in, lets her into /admin; bob gets 403 there; sign-out ends the session', async (ctx) => {
    needBinary(ctx, HAPROXY)
    needChromium(ctx)
    const context = await browser!.newContext()
    const page = await context.newPage()
    try {
      await signInAt(page, '/wiki/page?x=1', 'Alice Hansen')
      const saw = await appSawOnPage(page)
      expect(saw.url).toBe('/wiki/page?x=1')
      expect(saw.headers['x-voot-user']).toBe('alice')
      expect(saw.headers['x-voot-rule']).toBe('signed-in')
      // The session cookie: sealed, HttpOnly, SameSite=Lax; no Secure on plain http on loopback.
      const cookies = await context.cookies(haproxy!.url)
      const session = cookies.find((cookie) => cookie.name === 'voot-gate')
      expect(session).toMatchObject({ httpOnly: true, sameSite: 'Lax', secure: false, path: '/' })
      expect(session!.value).not.toContain('alice')
      expect(cookies.find((cookie) => cookie.name === 'voot-gate-signin')).toBeUndefined()

      const admin = await page.goto(`${haproxy!.url}/admin/reports`)
      expect(admin?.status()).toBe(200)
      expect((await appSawOnPage(page)).headers['x-voot-rule']).toBe('admin')

      // Sign-out is a same-origin POST.
      const status = await page.evaluate(async () => (await fetch('/_gate/signout', { method: 'POST', redirect: 'manual' })).type)
      expect(status).toBe('opaqueredirect')
      expect((await context.cookies(haproxy!.url)).find((cookie) => cookie.name === 'voot-gate')).toBeUndefined()
      await page.goto(`${haproxy!.url}/wiki/page`)
      await expect.poll(() => page.url()).toContain(`${emulator.authUrl}/oauth/authorization`)
    } finally {
      await context.close()
    }

    const bobContext = await browser!.newContext()
    const bobPage = await bobContext.newPage()
    try {
      await signInAt(bobPage, '/wiki', 'Bob Nilsen')
      expect((await appSawOnPage(bobPage)).headers['x-voot-user']).toBe('bob')
      const denied = await bobPage.goto(`${haproxy!.url}/admin/reports`)
      expect(denied?.status()).toBe(403)
      expect(bobPage.url()).toBe(`${haproxy!.url}/admin/reports`)
    } finally {
      await bobContext.close()
    }
  }, 90_000)
})
