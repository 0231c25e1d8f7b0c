/**
 * The `npm start` demo, started in-process: every curl line it prints gets the status it
 * says, and it stops cleanly.
 */
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { request } from 'undici'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runCli } from '../../cli/index.js'
import { startDemo, type Demo, type DemoCurlLine } from '../../demo/start.js'
import { curlAvailable, parseCurl } from './printed-lines.js'
import { InvalidOptionError } from '../../src/errors.js'

const run = promisify(execFile)

let demo: Demo
let printed = ''

beforeAll(async () => {
  demo = await startDemo({ port: 0, emulatorPort: 0, print: (guide) => (printed += guide) })
})
afterAll(async () => {
  await demo.close()
})

async function replay(
  line: Pick<DemoCurlLine, 'url' | 'headers'>,
): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  const response = await request(line.url, { headers: { ...line.headers } })
  return { status: response.statusCode, headers: response.headers, body: await response.body.text() }
}

describe('startDemo', () => {
  it('prints a guide with the routes, a token per demo user and the curl lines', () => {
    expect(printed).toBe(demo.guide)
    expect(printed).toContain(demo.appUrl)
    expect(printed).toContain(demo.emulator.baseUrl)
    for (const route of ['GET /api/me', 'GET /api/staff', 'GET /api/inf1000']) expect(printed).toContain(route)
    for (const user of ['alice', 'bob', 'carol', 'dave', 'erin']) {
      const token = demo.tokens[user]
      expect(token).toMatch(/^[\w-]{43}$/)
      expect(printed).toMatch(new RegExp(`^  ${user}\\s+${token}\\s`, 'm'))
    }
    expect(printed).toMatch(new RegExp(`${demo.faultToken}\\s+alice's, but the emulator answers 500 for it`))
    for (const line of demo.curlLines) expect(printed).toContain(`  # ${line.description}\n  ${line.command}\n`)
    expect(printed).toMatch(/Stop with Ctrl-C/)
  })

  it('shows an allow, a 403, a 401 and a 503', () => {
    const statuses = demo.curlLines.map((line) => line.expectedStatus)
    expect(statuses).toEqual(expect.arrayContaining([200, 403, 401, 503]))
    const failing = demo.curlLines.find((line) => line.expectedStatus === 503)
    expect(failing?.headers.authorization).toBe(`Bearer ${demo.faultToken}`)
    expect(failing?.description).toMatch(/told the emulator to answer 500/)
    expect(demo.curlLines.find((line) => line.expectedStatus === 200)?.headers.authorization).toBe(`Bearer ${demo.tokens.alice}`)
    expect(demo.curlLines.find((line) => line.expectedStatus === 401)?.headers).toEqual({})
  })

  it('answers each request of the guide with the status it promises', async () => {
    for (const line of demo.curlLines) {
      const { status, headers, body } = await replay(line)
      expect(status, line.description).toBe(line.expectedStatus)
      for (const token of Object.values(demo.tokens)) expect(body).not.toContain(token)
      if (status === 401) expect(headers['www-authenticate']).toBe('Bearer realm="voot-guard-example"')
      if (status === 503) expect(headers['retry-after']).toMatch(/^\d+$/)
      if (status === 403) expect(JSON.parse(body)).toMatchObject({ error: 'forbidden' })
    }
    // The fault stays: a second try fails closed again (failures are never cached).
    const failing = demo.curlLines.find((line) => line.expectedStatus === 503)
    expect((await replay(failing!)).status).toBe(503)
  })

  it('prints commands that do what they say when pasted into a shell', async () => {
    const hasCurl = await curlAvailable()
    const { http_proxy: _a, https_proxy: _b, HTTP_PROXY: _c, HTTPS_PROXY: _d, all_proxy: _e, ALL_PROXY: _f, ...env } = process.env
    for (const line of demo.curlLines) {
      const parsed = parseCurl(line.command)
      expect(parsed).toEqual({ url: line.url, headers: line.headers })
      if (hasCurl) {
        // Run exactly the printed line; -i puts the status line first.
        const { stdout } = await run('sh', ['-c', line.command], { env })
        expect(stdout.split('\r\n')[0], line.command).toMatch(new RegExp(`^HTTP/[\\d.]+ ${line.expectedStatus}\\b`))
      } else {
        expect((await replay(parsed)).status).toBe(line.expectedStatus)
      }
    }
  })

  it('prints a CLI line, in the form a clone runs the CLI with, that reaches the same decision as the app', async () => {
    const line = /^ {2}VOOT_TOKEN=([\w-]+) npm run cli -- (check .*)$/m.exec(printed)
    expect(line?.[1]).toBe(demo.tokens.bob)
    let stdout = ''
    const code = await runCli((line?.[2] ?? '').split(' '), {
      stdout: { write: (text: string) => (stdout += text) },
      stderr: { write: () => true },
      env: { VOOT_TOKEN: line?.[1] },
    })
    expect(code).toBe(1)
    expect(stdout).toMatch(/^DENIED/)
  })

  it('closes the app and the emulator, once or twice', async () => {
    const other = await startDemo({ port: 0, emulatorPort: 0, print: () => {} })
    const staff = other.curlLines[0]
    expect(staff && (await replay(staff)).status).toBe(200)
    await Promise.all([other.close(), other.close()])
    await other.close()
    await expect(request(`${other.appUrl}/api/me`)).rejects.toThrow()
    await expect(request(`${other.emulator.baseUrl}/grouptypes`)).rejects.toThrow()
  })

  it('refuses invalid options before starting anything', async () => {
    await expect(startDemo({ port: -1 })).rejects.toThrow(InvalidOptionError)
    await expect(startDemo({ emulatorPort: 1.5 })).rejects.toThrow(/emulatorPort/)
    await expect(startDemo({ print: 'yes' as never })).rejects.toThrow(/options\.print/)
  })

  it('fails when a port given explicitly is taken', async () => {
    const port = Number(new URL(demo.appUrl).port)
    await expect(startDemo({ port, emulatorPort: 0, print: () => {} })).rejects.toMatchObject({ code: 'EADDRINUSE' })
  })
})
