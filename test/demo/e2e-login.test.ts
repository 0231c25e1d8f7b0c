/**
 * End to end, in headless Chromium (driven by playwright-core): the login example
 * (examples/express-login) signs people in through the emulator's authorization page, shows
 * their groups, lets an employee into the admin page, shows a non-employee a 403 page, and
 * signs out.
 *
 * Finds Chromium as test/support/chromium.ts says (`CHROMIUM_PATH`, the usual locations,
 * Playwright's own browser). Without one it is skipped with a reason that says how to install
 * one, except in CI (`CI=true`), where it FAILS: CI's `.ci/run` installs Debian's chromium.
 */
import { chromium, type Browser, type Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it, type TestContext } from 'vitest'
import { start, type RunningApp } from '../../examples/express-login/app.js'
import { startEmulator, type Emulator } from '../../testing/index.js'
import { CHROMIUM_ARGS, findChromium, isCI } from '../support/chromium.js'

const CHROMIUM = findChromium()
const SKIP_REASON = CHROMIUM.found ? '' : `browser test skipped: ${CHROMIUM.advice}`

let emulator: Emulator | undefined
let app: RunningApp | undefined
let browser: Browser | undefined

beforeAll(async () => {
  if (!CHROMIUM.found) {
    if (!isCI()) console.warn(SKIP_REASON)
    return
  }
  emulator = await startEmulator()
  app = await start({ port: 0, authUrl: emulator.authUrl, baseUrl: emulator.baseUrl })
  browser = await chromium.launch({ executablePath: CHROMIUM.executablePath, args: [...CHROMIUM_ARGS], timeout: 30_000 })
}, 60_000)

afterAll(async () => {
  await browser?.close()
  await app?.close()
  await emulator?.close()
})

/** Outside CI, skips the test when there is no browser; in CI, fails it. */
function needChromium(ctx: TestContext): void {
  if (CHROMIUM.found) return
  if (isCI()) throw new Error(`CI=true, and ${CHROMIUM.advice}`)
  ctx.skip(SKIP_REASON)
}

function nav(page: Page) {
  return page.getByRole('navigation', { name: 'Main' })
}

async function signIn(page: Page, name: string): Promise<void> {
  await page.goto(app!.url)
  await nav(page).getByRole('link', { name: 'Sign in' }).click()
  // The emulator's consent page.
  await expect.poll(() => page.url()).toContain(`${emulator!.authUrl}/oauth/authorization`)
  await page.getByLabel(name).check()
  await page.getByRole('button', { name: 'Approve' }).click()
  await page.waitForURL(`${app!.url}/`)
  expect(await page.locator('main').innerText()).toContain(`Signed in as ${name}`)
}

async function signOut(page: Page): Promise<void> {
  await nav(page).getByRole('button', { name: 'Sign out' }).click()
  await page.waitForURL(`${app!.url}/`)
  await expect.poll(() => nav(page).getByRole('link', { name: 'Sign in' }).count()).toBe(1)
}

describe('login example in a real browser', () => {
  it('signs alice in, shows her groups and the admin page, signs her out; bob gets a 403 page', async (ctx) => {
    needChromium(ctx)
    const context = await browser!.newContext()
    const page = await context.newPage()
    try {
      await signIn(page, 'Alice Hansen')

      await nav(page).getByRole('link', { name: 'My groups' }).click()
      await page.waitForURL(`${app!.url}/groups`)
      const table = page.getByRole('table', { name: 'Your active memberships' })
      expect(await table.innerText()).toContain('fc:org:example.org')
      expect(await table.innerText()).toMatch(/fc:org:example\.org\s+admin/)

      const admin = await page.goto(`${app!.url}/admin`)
      expect(admin?.status()).toBe(200)
      expect(await page.getByRole('heading', { level: 1 }).innerText()).toBe('Admin area')

      await signOut(page)
      // Signed out: the guarded pages send the browser to sign in again.
      await page.goto(`${app!.url}/admin`)
      expect(page.url()).toContain(`${emulator!.authUrl}/oauth/authorization`)

      await signIn(page, 'Bob Nilsen')
      const denied = await page.goto(`${app!.url}/admin`)
      expect(denied?.status()).toBe(403)
      expect(await page.getByRole('heading', { level: 1 }).innerText()).toBe('Access denied')
      expect(await page.locator('main').innerText()).not.toContain('fc:org:example.org:unit')

      await nav(page).getByRole('link', { name: 'My groups' }).click()
      expect(await page.getByRole('table').innerText()).toMatch(/fc:org:example\.org\s+member/)
      await signOut(page)
    } finally {
      await context.close()
    }
  }, 60_000)

  it('shows a friendly page when the person declines', async (ctx) => {
    needChromium(ctx)
    const context = await browser!.newContext()
    const page = await context.newPage()
    try {
      await page.goto(app!.url)
      await nav(page).getByRole('link', { name: 'Sign in' }).click()
      await page.getByRole('button', { name: 'Decline' }).click()
      await page.waitForURL(new RegExp(`^${app!.url}/callback`))
      expect(await page.getByRole('heading', { level: 1 }).innerText()).toBe('Sign-in failed')
      expect(await page.locator('main').innerText()).toContain('You declined')
    } finally {
      await context.close()
    }
  }, 60_000)
})
