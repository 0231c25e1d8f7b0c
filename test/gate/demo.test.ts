/**
 * The gate demo (demo/gate.ts, `npm start -- --gate`): every curl line it prints answers
 * as printed, run as the shell command itself when curl is installed, else replayed from
 * its data.
 */
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { chromium } from 'playwright-core'
import { DEMO_GATE_TTL_MS, startDemoGate, type DemoGate } from '../../demo/gate.js'
import { ORG_ID } from '../../testing/index.js'
import { CHROMIUM_ARGS, findChromium, needChromium } from '../support/chromium.js'
import { send } from './support/raw-request.js'

const run = promisify(execFile)
const CHROMIUM = findChromium()
let demo: DemoGate
let haveCurl = false

beforeAll(async () => {
  demo = await startDemoGate({ port: 0 })
  haveCurl = await run('curl', ['--version']).then(
    () => true,
    () => false,
  )
}, 30_000)

afterAll(async () => {
  await demo?.close()
})

describe('the gate demo', () => {
  it('prints every line with its description', () => {
    expect(demo.guide).toContain(demo.gateUrl)
    for (const line of demo.curlLines) expect(demo.guide).toContain(`  # ${line.description}\n  ${line.command}\n`)
    expect(new Set(demo.curlLines.map((line) => line.expectedStatus))).toEqual(new Set([200, 302, 401, 403, 503]))
  })

  it('answers every line as printed', async () => {
    for (const line of demo.curlLines) {
      let status: number
      let user: string | undefined
      if (haveCurl) {
        const { stdout } = await run('sh', ['-c', `${line.command} -s -o /dev/null -D -`])
        status = Number(/^HTTP\/1\.1 (\d{3})/.exec(stdout)?.[1])
        user = /^x-voot-user: ?(.*?)\r?$/im.exec(stdout)?.[1]
      } else {
        const url = new URL(line.url)
        const answer = await send(url.origin, `${url.pathname}${url.search}`, { method: line.method, headers: { ...line.headers } })
        status = answer.status
        user = answer.headers['x-voot-user'] as string | undefined
      }
      expect(status, line.description).toBe(line.expectedStatus)
      if (line.expectedUser !== undefined) expect(user, line.description).toBe(line.expectedUser)
    }
  })
})

describe('the story the gate demo prints', () => {
  it('signs alice in, whoami says she passes staff; removed in the console, she does not within the ttl', async (ctx) => {
    needChromium(ctx, CHROMIUM)
    if (!CHROMIUM.found) return
    const browser = await chromium.launch({ executablePath: CHROMIUM.executablePath, args: [...CHROMIUM_ARGS], timeout: 30_000 })
    try {
      const page = await browser.newPage()
      // Step 1, as printed.
      const signIn = /1\. Sign in as Alice Hansen at (\S+) :/.exec(demo.guide)?.[1]
      expect(signIn).toBe(`${demo.gateUrl}/_gate/signin?rd=/_gate/whoami`)
      await page.goto(signIn!)
      await page.getByLabel('Alice Hansen').check()
      await page.getByRole('button', { name: 'Approve' }).click()
      await page.waitForURL(`${demo.gateUrl}/_gate/whoami`)
      const staff = (text: string) => text.split('\n').find((line) => line.startsWith('staff:')) ?? ''
      expect(staff(await page.locator('main').innerText())).toContain('you pass.')
      // Step 2: the console (its address as printed) removes the membership.
      expect(demo.guide).toContain(`console       ${demo.emulator.consoleUrl}`)
      const console_ = await browser.newPage()
      await console_.goto(demo.emulator.consoleUrl!)
      await console_.getByRole('button', { name: `Remove alice in ${ORG_ID}`, exact: true }).click()
      await expect.poll(() => console_.getByRole('status').innerText()).toBe(`Removed: alice in ${ORG_ID}.`)
      const removed = Date.now()
      await expect
        .poll(async () => staff(await page.reload().then(() => page.locator('main').innerText())), {
          timeout: DEMO_GATE_TTL_MS * 3,
          interval: 250,
        })
        .toContain('you do not pass')
      expect(Date.now() - removed).toBeLessThan(DEMO_GATE_TTL_MS + 2000)
    } finally {
      await browser.close()
    }
  })
})
