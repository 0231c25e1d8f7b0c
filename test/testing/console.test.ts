/**
 * The emulator's console (issue 39): its JSON endpoints and their refusals, the page in
 * headless Chromium changing a membership and a fault while a real Express app behind the
 * guard follows within its ttl, `voot-guard emulator members|fault` against a running
 * emulator, and `--data FILE` read again when it changes. docs/images/emulator-console.png
 * is made here.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import express from 'express'
import { chromium, type Browser } from 'playwright-core'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { createGuard } from '../../adapters/express/index.js'
import { runCli, type CliIo } from '../../cli/index.js'
import { CONSOLE_CSP } from '../../testing/console/console-page.js'
import { defaultData, ORG_ID, startEmulator, type Emulator } from '../../testing/index.js'
import { CHROMIUM_ARGS, findChromium, needChromium } from '../support/chromium.js'

const CHROMIUM = findChromium()
const IMAGES = new URL('../../docs/images/', import.meta.url)
/** The guarded app's cache ttl: a change in the console shows within it. */
const TTL = 1000

let emulator: Emulator
let browser: Browser | undefined
let app: { url: string; close: () => Promise<void> }

async function api(
  path: string,
  body: unknown,
  headers: Record<string, string> = { 'content-type': 'application/json' },
): Promise<{ status: number; json: Record<string, unknown> }> {
  const response = await fetch(`${emulator.authUrl}/_emulator/api/${path}`, { method: 'POST', headers, body: JSON.stringify(body) })
  return { status: response.status, json: (await response.json()) as Record<string, unknown> }
}

beforeAll(async () => {
  emulator = await startEmulator()
  const guard = createGuard({ baseUrl: emulator.baseUrl, cache: { ttl: TTL, negativeTtl: TTL } })
  const server = express()
    .get('/admin', guard.requireGroup(ORG_ID, 'admin'), (_req, res) => {
      res.send('admin page')
    })
    .listen(0, '127.0.0.1')
  await new Promise((resolve) => server.once('listening', resolve))
  app = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  }
  if (CHROMIUM.found)
    browser = await chromium.launch({ executablePath: CHROMIUM.executablePath, args: [...CHROMIUM_ARGS], timeout: 30_000 })
}, 60_000)

afterAll(async () => {
  await browser?.close()
  await app?.close()
  await emulator?.close()
})

beforeEach(() => {
  emulator.replaceData(defaultData)
  emulator.faults.clear()
  emulator.rateLimit = undefined
})

const adminAs = (token: string) => fetch(`${app.url}/admin`, { headers: { authorization: `Bearer ${token}` } })

describe('the console page in Chromium', () => {
  it('removes alice from a group and the guarded route follows within the ttl; a fault switched on gives 503 with Retry-After', async (ctx) => {
    needChromium(ctx, CHROMIUM)
    const token = emulator.issueToken('alice')
    expect((await adminAs(token)).status).toBe(200)
    const context = await browser!.newContext()
    const page = await context.newPage()
    const refused: string[] = []
    page.on('console', (message) => {
      if (/Content Security Policy|Refused to/i.test(message.text())) refused.push(message.text())
    })
    try {
      const answer = await page.goto(emulator.consoleUrl!)
      expect(answer?.status()).toBe(200)
      expect(answer?.headers()['content-security-policy']).toBe(CONSOLE_CSP)
      expect(await page.getByRole('heading', { level: 1 }).innerText()).toBe('voot-guard emulator console: Feide')
      // The copy buttons are shown by the page's one script (allowed by its hash).
      await expect.poll(() => page.getByRole('button', { name: "Copy alice's token", exact: true }).isVisible()).toBe(true)
      await page.screenshot({ path: new URL('emulator-console.png', IMAGES).pathname, fullPage: true })

      // By keyboard: focus the Remove button of alice's membership of the organisation and press Enter.
      await page.getByRole('button', { name: `Remove alice in ${ORG_ID}`, exact: true }).focus()
      await page.keyboard.press('Enter')
      await expect.poll(() => page.getByRole('status').innerText()).toBe(`Removed: alice in ${ORG_ID}.`)
      const removedAt = Date.now()
      await expect.poll(async () => (await adminAs(token)).status, { timeout: TTL * 5, interval: 100 }).toBe(403)
      expect(Date.now() - removedAt).toBeLessThan(TTL * 3)

      // A 500 for everyone: a token the guard has not seen gets 503 with Retry-After.
      await page.getByLabel('Fault', { exact: true }).selectOption('500')
      await page.getByLabel('For', { exact: true }).selectOption('')
      await page.getByRole('button', { name: 'Switch on', exact: true }).click()
      await expect.poll(() => page.getByRole('status').innerText()).toBe('Switched on: 500 for everyone.')
      const failing = await adminAs(emulator.issueToken('bob'))
      expect(failing.status).toBe(503)
      expect(failing.headers.get('retry-after')).toMatch(/^\d+$/)
      // The calls the service received are listed, the newest first, with the token's user.
      await page.reload()
      const calls = await page.locator('#calls + table').innerText()
      expect(calls).toContain('GET /groups/me/groups')
      expect(calls).toContain('bob')
      expect(calls).toContain('500')
      expect(refused).toEqual([])
    } finally {
      await context.close()
    }
  })

  it('edits a role and the dates in place', async (ctx) => {
    needChromium(ctx, CHROMIUM)
    const context = await browser!.newContext()
    const page = await context.newPage()
    try {
      await page.goto(emulator.consoleUrl!)
      await page.getByLabel(`Role of bob in ${ORG_ID}`, { exact: true }).selectOption('admin')
      await page.getByLabel(`Not after (bob in ${ORG_ID})`, { exact: true }).fill('2099-01-01T00:00:00Z')
      await page.getByRole('button', { name: `Save bob in ${ORG_ID}`, exact: true }).click()
      await expect.poll(() => page.getByRole('status').innerText()).toBe(`Saved: bob in ${ORG_ID}.`)
      const bob = emulator.data.users.find((user) => user.id === 'bob')!
      expect(bob.memberships.find((entry) => entry.groupId === ORG_ID)?.membership).toMatchObject({
        basic: 'admin',
        notAfter: '2099-01-01T00:00:00Z',
      })
      // A date that is no date is refused, said on the page, and nothing changes.
      await page.getByLabel(`Not after (bob in ${ORG_ID})`, { exact: true }).fill('next week')
      await page.getByRole('button', { name: `Save bob in ${ORG_ID}`, exact: true }).click()
      await expect.poll(() => page.getByRole('alert').innerText()).toContain('notAfter: must be an ISO timestamp')
      expect(bob.memberships.find((entry) => entry.groupId === ORG_ID)?.membership).toMatchObject({ notAfter: '2099-01-01T00:00:00Z' })
    } finally {
      await context.close()
    }
  })
})

describe('the console JSON endpoints', () => {
  it('gives the state, and changes memberships with clear refusals', async () => {
    const state = (await (await fetch(`${emulator.authUrl}/_emulator/api/state`)).json()) as {
      users: { id: string; token: string }[]
      roles: string[]
    }
    expect(state.roles).toEqual(['member', 'admin', 'owner'])
    expect(state.users.map((user) => user.id)).toContain('alice')
    expect(emulator.tokens.lookup(state.users[0]!.token)?.userId).toBe(state.users[0]!.id)
    expect(await api('members', { action: 'add', user: 'erin', group: ORG_ID, role: 'owner' })).toMatchObject({
      status: 200,
      json: { message: `Added: erin in ${ORG_ID}.` },
    })
    expect(await api('members', { action: 'add', user: 'erin', group: ORG_ID })).toMatchObject({
      status: 400,
      json: { message: `erin is already a member of ${ORG_ID} (set changes it)` },
    })
    expect(await api('members', { action: 'set', user: 'erin', group: ORG_ID, role: 'superuser' })).toMatchObject({
      status: 400,
      json: { message: 'role: must be one of member, admin, owner' },
    })
    expect(await api('members', { action: 'remove', user: 'nobody', group: ORG_ID })).toMatchObject({ status: 400 })
    expect(await api('members', { action: 'set', user: 'erin', group: ORG_ID, active: false })).toMatchObject({ status: 200 })
    const erin = emulator.data.users.find((user) => user.id === 'erin')!
    expect(erin.memberships.find((entry) => entry.groupId === ORG_ID)?.membership).toEqual({ basic: 'owner', active: false })
    // Not JSON: refused (a form from another site cannot post JSON).
    expect((await api('members', { action: 'remove', user: 'erin', group: ORG_ID }, { 'content-type': 'text/plain' })).status).toBe(400)
  })

  it('switches faults for one user or everyone, and the rate limit', async () => {
    const set = await api('faults', { action: 'set', fault: '429', user: 'bob' })
    expect(set.status).toBe(200)
    const bob = await fetch(`${emulator.baseUrl}/me/groups`, { headers: { authorization: `Bearer ${emulator.issueToken('bob')}` } })
    expect(bob.status).toBe(429)
    expect(bob.headers.get('retry-after')).toBe('5')
    const alice = await fetch(`${emulator.baseUrl}/me/groups`, { headers: { authorization: `Bearer ${emulator.issueToken('alice')}` } })
    expect(alice.status).toBe(200)
    expect(await api('faults', { action: 'set', fault: 'flaky' })).toMatchObject({
      status: 400,
      json: { message: 'fault: must be one of slow, 500, 429, down' },
    })
    expect(await api('faults', { action: 'clear' })).toMatchObject({ status: 200, json: { state: { faults: [] } } })
    expect(await api('rate-limit', { limit: 1, windowMs: 60_000 })).toMatchObject({
      status: 200,
      json: { state: { rateLimit: { limit: 1, windowMs: 60_000 } } },
    })
    const token = emulator.issueToken('alice')
    expect((await fetch(`${emulator.baseUrl}/me/groups`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200)
    expect((await fetch(`${emulator.baseUrl}/me/groups`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(429)
    expect(await api('rate-limit', { limit: null })).toMatchObject({ status: 200, json: { state: { rateLimit: null } } })
  })

  it('takes forms from its own page only', async () => {
    const form = (origin: string) =>
      fetch(`${emulator.authUrl}/_emulator/members`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', origin },
        body: new URLSearchParams({ action: 'remove', user: 'alice', group: ORG_ID }).toString(),
      })
    expect((await form('https://evil.example')).status).toBe(403)
    expect(emulator.data.users.find((user) => user.id === 'alice')?.memberships.some((entry) => entry.groupId === ORG_ID)).toBe(true)
    expect((await form(emulator.authUrl)).status).toBe(200)
    expect(emulator.data.users.find((user) => user.id === 'alice')?.memberships.some((entry) => entry.groupId === ORG_ID)).toBe(false)
  })

  it('is not served with console: false', async () => {
    const quiet = await startEmulator({ console: false })
    try {
      expect(quiet.consoleUrl).toBeUndefined()
      expect((await fetch(`${quiet.authUrl}/_emulator/`)).status).toBe(404)
    } finally {
      await quiet.close()
    }
  })
})

async function cli(
  argv: string[],
  signal?: AbortSignal,
  onOutput?: (text: string) => void,
): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = ''
  let stderr = ''
  const io: CliIo = {
    stdout: { write: (text: string) => ((stdout += text), onOutput?.(text)) },
    stderr: { write: (text: string) => ((stderr += text), onOutput?.(text)) },
    env: {},
    ...(signal === undefined ? {} : { signal }),
  }
  const code = await runCli(argv, io)
  return { code, stdout, stderr }
}

describe('voot-guard emulator members | fault', () => {
  it('removes a membership from a shell, and the guarded route follows', async () => {
    const token = emulator.issueToken('alice')
    expect((await adminAs(token)).status).toBe(200)
    const removed = await cli(['emulator', 'members', 'remove', '--url', emulator.authUrl, '--user', 'alice', '--group', ORG_ID])
    expect(removed).toMatchObject({ code: 0, stdout: `Removed: alice in ${ORG_ID}.\n` })
    await expect.poll(async () => (await adminAs(token)).status, { timeout: TTL * 5, interval: 100 }).toBe(403)
    const again = await cli(['emulator', 'members', 'remove', '--url', emulator.authUrl, '--user', 'alice', '--group', ORG_ID])
    expect(again).toMatchObject({ code: 2, stderr: `voot-guard emulator: alice is not a member of ${ORG_ID}\n` })
    expect(
      await cli(['emulator', 'members', 'add', '--url', emulator.authUrl, '--user', 'alice', '--group', ORG_ID, '--role', 'admin']),
    ).toMatchObject({ code: 0 })
  })

  it('switches a fault on and off', async () => {
    expect(await cli(['emulator', 'fault', 'down', '--url', emulator.authUrl])).toMatchObject({
      code: 0,
      stdout: 'Switched on: down for everyone.\n',
    })
    const down = await adminAs(emulator.issueToken('carol'))
    expect(down.status).toBe(503)
    expect(await cli(['emulator', 'fault', 'clear', '--url', emulator.authUrl])).toMatchObject({ code: 0, stdout: 'Switched off.\n' })
    expect(emulator.faults.list()).toEqual([])
    const nobody = await cli(['emulator', 'fault', '500', '--url', 'http://127.0.0.1:9'])
    expect(nobody.code).toBe(2)
    expect(nobody.stderr).toContain('No emulator answers at http://127.0.0.1:9/_emulator/api/faults')
  })
})

describe('voot-guard emulator --data FILE', () => {
  it('reads the file again when it changes; a bad file keeps the data in force and says where', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'voot-emulator-data-'))
    const file = join(dir, 'groups.json')
    const data = JSON.parse(JSON.stringify(defaultData)) as typeof defaultData
    await writeFile(file, JSON.stringify(data, null, 2))
    const stop = new AbortController()
    let output = ''
    let started: (line: string) => void = () => {}
    const ready = new Promise<string>((resolve) => (started = resolve))
    const running = cli(['emulator', '--data', file, '--port', '0', '--json'], stop.signal, (text) => {
      output += text
      if (text.startsWith('{')) started(text)
    })
    try {
      const { baseUrl } = JSON.parse(await ready) as { baseUrl: string }
      const groupsOf = async (user: string): Promise<string[]> => {
        const { authUrl } = JSON.parse(output.split('\n')[0]!) as { authUrl: string }
        const state = (await (await fetch(`${authUrl}/_emulator/api/state`)).json()) as {
          users: { id: string; memberships: { group: string }[] }[]
        }
        return state.users.find((each) => each.id === user)?.memberships.map((m) => m.group) ?? []
      }
      expect(baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/groups$/)
      expect(await groupsOf('bob')).toContain(ORG_ID)
      data.users.find((user) => user.id === 'bob')!.memberships = []
      await writeFile(file, JSON.stringify(data, null, 2))
      await expect.poll(() => groupsOf('bob'), { timeout: 5000 }).toEqual([])
      // A broken file: refused with its line, and bob stays as he was.
      const broken = JSON.stringify(data, null, 2).replace(
        '"users": [',
        '"users": [\n    { "id": "x", "name": "X", "memberships": [{ "groupId": "fc:nope", "membership": "member" }] },',
      )
      await writeFile(file, broken)
      await expect.poll(() => output, { timeout: 5000 }).toContain('the data file changed but was not taken')
      expect(output).toMatch(
        new RegExp(
          `${file.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}:\\d+: users\\[0\\]\\.memberships\\[0\\]\\.groupId: unknown group "fc:nope"`,
        ),
      )
      expect(await groupsOf('bob')).toEqual([])
    } finally {
      stop.abort()
      expect((await running).code).toBe(0)
      await rm(dir, { recursive: true, force: true })
    }
  })
})
