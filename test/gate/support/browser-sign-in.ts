/**
 * A browser through a proxy in front of the gate, for the gate's Chromium tests: signing in
 * at the emulator's consent page, and reading what the echo app behind the proxy saw.
 */
import type { Page } from 'playwright-core'
import { expect } from 'vitest'

/** Goes to `base + path`, is sent to the emulator (`authUrl`) to sign in as `name`, and comes back to it. */
export async function signInAt(page: Page, base: string, path: string, who: { name: string; authUrl: string }): Promise<void> {
  await page.goto(`${base}${path}`)
  // The gate sent the browser to the emulator's consent page.
  await expect.poll(() => page.url()).toContain(`${who.authUrl}/oauth/authorization`)
  await page.getByLabel(who.name).check()
  await page.getByRole('button', { name: 'Approve' }).click()
  await page.waitForURL(`${base}${path}`)
}

/** What the echo app behind the proxy answered on the page. */
export async function appSawOnPage(page: Page): Promise<{ url: string; headers: Record<string, string> }> {
  return JSON.parse(await page.locator('body').innerText()) as { url: string; headers: Record<string, string> }
}
