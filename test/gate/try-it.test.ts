/**
 * docs/gate.md, "Try it on your machine", done as a new user does it: every command of the
 * section's `sh` blocks runs as written, in this checkout, in the order shown, with only its
 * ports (4000, 4181, 8000) replaced by free ones and the example files it names copied with
 * the same replacement. The emulator and the gate run as the `npm run cli` processes the page
 * starts; `--check` exits 0; each curl line answers with the status and headers of the
 * comment under it, after the `export VOOT_TOKEN=...` line the emulator printed, as the
 * page says to paste; Caddy runs the page's Caddyfile, and a browser (Chromium through
 * playwright-core) signs in through it at the emulator with its `demo-client`, as the page
 * describes. Last, the page's promise that `X-Voot-User` is empty for a bearer token
 * without `oauth`.
 *
 * A command the test does not know how to run fails it: a new command on the page needs a
 * way to be run here. Without curl, Caddy or Chromium the parts that need them are skipped
 * with the reason (in CI, Caddy and Chromium are required, as for the other proxy tests).
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { chromium, type Browser, type Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadGateConfig, startGateServer, type GateConfig, type GateServer } from '../../gate/index.js'
import { CHROMIUM_ARGS, findChromium, needChromium } from '../support/chromium.js'
import { CADDY, freePort, needBinary } from './support/proxies.js'
import { send } from './support/raw-request.js'

const run = promisify(execFile)
const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const CHROMIUM = findChromium()

/** One command of the page, and what the comment line under it expects (curl lines). */
interface PageCommand {
  readonly text: string
  readonly expect?: { readonly status: number; readonly headers: Readonly<Record<string, string>> }
}

/** The section's text, from its heading to the next one. */
function trySection(markdown: string): string {
  const start = markdown.indexOf('\n## Try it on your machine\n')
  if (start < 0) throw new Error('docs/gate.md has no "Try it on your machine" section')
  const end = markdown.indexOf('\n## ', start + 1)
  return markdown.slice(start, end < 0 ? undefined : end)
}

/** The commands of the section's `sh` blocks, each with the expectation of the comment under it. */
function pageCommands(section: string): PageCommand[] {
  const commands: PageCommand[] = []
  for (const block of section.matchAll(/```sh\n([\s\S]*?)```/g)) {
    const lines = (block[1] as string).split('\n').filter((line) => line.trim() !== '')
    lines.forEach((line, index) => {
      if (line.startsWith('#')) return
      const next = lines[index + 1]
      const expectation = next === undefined ? null : /^# (\d{3})(?:, (.*))?$/.exec(next)
      if (expectation === null) {
        commands.push({ text: line })
        return
      }
      // "# 200, X-Voot-User: alice, X-Voot-Rule: staff": a status, then header: value pairs.
      const headers = Object.fromEntries(
        (expectation[2] ?? '')
          .split(', ')
          .filter((pair) => pair !== '')
          .map((pair) => {
            const colon = pair.indexOf(': ')
            return [pair.slice(0, colon).toLowerCase(), pair.slice(colon + 2)]
          }),
      )
      commands.push({ text: line, expect: { status: Number(expectation[1]), headers } })
    })
  }
  return commands
}

type Kind = 'emulator' | 'check' | 'gate' | 'curl' | 'caddy'

/** How the test runs a command of the page; `undefined` for one it does not know. */
function kindOf(command: string): Kind | undefined {
  if (/^npm run cli -- emulator( |$)/.test(command)) return 'emulator'
  if (/^npm run cli -- gate .*--check$/.test(command)) return 'check'
  if (/^npm run cli -- gate( |$)/.test(command)) return 'gate'
  if (/^curl /.test(command)) return 'curl'
  if (/^caddy run /.test(command)) return 'caddy'
  return undefined
}

let dir: string
let ports: { readonly emulator: number; readonly gate: number; readonly app: number }
let section: string
let commands: PageCommand[]
const processes: ChildProcess[] = []
let emulatorOutput = ''
let browser: Browser | undefined

/** The page's ports replaced by the test's, and its example files by their copies with those ports. */
function local(text: string): string {
  return text
    .replace(/(?<!\d)4000(?!\d)/g, String(ports.emulator))
    .replace(/(?<!\d)4181(?!\d)/g, String(ports.gate))
    .replace(/(?<!\d)8000(?!\d)/g, String(ports.app))
    .replace(/examples\/gate\/([\w.-]+)/g, (_, file: string) => join(dir, file))
}

/** The environment of the page's commands: the test's own, without a token, Caddy's state in `dir`. */
function pageEnv(): NodeJS.ProcessEnv {
  const { VOOT_TOKEN: _token, ...env } = process.env
  return { ...env, XDG_CONFIG_HOME: join(dir, 'config'), XDG_DATA_HOME: join(dir, 'data') }
}

/** Starts a long-running command of the page in its own process group; resolves once `ready` says so. */
async function startServer(command: string, ready: (output: string) => boolean | Promise<boolean>): Promise<() => string> {
  const child = spawn('sh', ['-c', local(command)], { cwd: ROOT, env: pageEnv(), detached: true, stdio: ['ignore', 'pipe', 'pipe'] })
  processes.push(child)
  let output = ''
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (output += chunk))
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (output += chunk))
  const deadline = Date.now() + 30_000
  while (!(await ready(output))) {
    if (child.exitCode !== null) throw new Error(`"${command}" exited with ${child.exitCode}:\n${output}`)
    if (Date.now() > deadline) throw new Error(`"${command}" did not get ready:\n${output}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  return () => output
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return
  const exited = new Promise((resolve) => child.once('exit', resolve))
  // The whole group: sh, npm and the node process under them.
  process.kill(-child.pid, 'SIGTERM')
  const timer = setTimeout(() => {
    try {
      process.kill(-child.pid!, 'SIGKILL')
    } catch {
      // Already gone.
    }
  }, 5_000)
  await exited
  clearTimeout(timer)
}

async function listening(port: number): Promise<boolean> {
  return send(`http://127.0.0.1:${port}`, '/').then(
    () => true,
    () => false,
  )
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'voot-gate-try-it-'))
  ports = { emulator: await freePort(), gate: await freePort(), app: await freePort() }
  section = trySection(await readFile(join(ROOT, 'docs/gate.md'), 'utf8'))
  commands = pageCommands(section)
  for (const [, file] of section.matchAll(/examples\/gate\/([\w.-]+)/g)) {
    await writeFile(join(dir, file as string), local(await readFile(join(ROOT, 'examples/gate', file as string), 'utf8')))
  }
}, 30_000)

afterAll(async () => {
  await browser?.close()
  for (const child of processes.reverse()) await stop(child)
  if (dir !== undefined) await rm(dir, { recursive: true, force: true })
}, 30_000)

describe('docs/gate.md, "Try it on your machine"', () => {
  it('shows only commands this test runs: the emulator, --check, the gate, curl lines with their answers, Caddy', () => {
    expect(commands.filter((command) => kindOf(command.text) === undefined).map((command) => command.text)).toEqual([])
    const kinds = commands.map((command) => kindOf(command.text))
    expect(new Set(kinds)).toEqual(new Set(['emulator', 'check', 'gate', 'curl', 'caddy']))
    // In the order a reader runs them: the emulator first, the gate before anything asks it.
    expect(kinds[0]).toBe('emulator')
    expect(kinds.indexOf('gate')).toBeLessThan(Math.min(kinds.indexOf('curl'), kinds.indexOf('caddy')))
    for (const command of commands.filter((each) => kindOf(each.text) === 'curl')) expect(command.expect, command.text).toBeDefined()
  })

  it('runs the emulator, checks the configuration, and runs the gate on it, as written', async () => {
    for (const command of commands) {
      const kind = kindOf(command.text)
      if (kind === 'emulator') {
        const output = await startServer(command.text, (text) => text.includes('Stop with Ctrl-C.'))
        emulatorOutput = output()
        expect(emulatorOutput).toContain(`base URL  http://127.0.0.1:${ports.emulator}/groups`)
      } else if (kind === 'check') {
        const { stdout } = await run('sh', ['-c', local(command.text)], { cwd: ROOT, env: pageEnv(), timeout: 30_000 })
        expect(stdout).toContain('the configuration is valid')
      } else if (kind === 'gate') {
        const output = await startServer(command.text, (text) => text.includes('voot-guard gate is ready'))
        expect(output()).toContain(`listening on http://127.0.0.1:${ports.gate}`)
      }
    }
  }, 90_000)

  it('answers each curl line as the comment under it says, after the export line the emulator printed', async (ctx) => {
    const haveCurl = await run('curl', ['--version']).then(
      () => true,
      () => false,
    )
    if (!haveCurl) {
      console.warn('curl is not installed: the curl lines of docs/gate.md were not run')
      ctx.skip('curl is not installed')
    }
    // The line the page says to paste: alice's token.
    const exportLine = /^\s*(export VOOT_TOKEN=\S+)\s*$/m.exec(emulatorOutput)?.[1]
    expect(exportLine, emulatorOutput).toBeDefined()
    for (const command of commands.filter((each) => kindOf(each.text) === 'curl')) {
      const { stdout } = await run('sh', ['-c', `${exportLine!}\n${local(command.text)}`], { cwd: ROOT, env: pageEnv(), timeout: 10_000 })
      const [statusLine = '', ...headerLines] = stdout.split('\r\n\r\n')[0]!.split('\r\n')
      expect(Number(/^HTTP\/1\.1 (\d{3})/.exec(statusLine)?.[1]), command.text).toBe(command.expect!.status)
      const headers = Object.fromEntries(
        headerLines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]),
      )
      for (const [name, value] of Object.entries(command.expect!.headers)) expect(headers[name], `${command.text}: ${name}`).toBe(value)
    }
  }, 30_000)

  it('signs a browser in through Caddy at the emulator, as the page describes', async (ctx) => {
    needBinary(ctx, CADDY)
    needChromium(ctx, CHROMIUM)
    const caddy = commands.find((command) => kindOf(command.text) === 'caddy')!
    // Caddy logs JSON on stderr; its port answering is the sign it serves.
    await startServer(caddy.text, () => listening(ports.app))
    browser = await chromium.launch({ executablePath: (CHROMIUM as { executablePath: string }).executablePath, args: [...CHROMIUM_ARGS] })
    const app = `http://127.0.0.1:${ports.app}`
    const signIn = async (page: Page, path: string, name: string): Promise<void> => {
      const consent = await page.goto(`${app}${path}`)
      // The gate sent the browser to the emulator's consent page (not its error page for a
      // redirect URI it does not know), for the page's demo-client.
      expect(page.url()).toContain(`http://127.0.0.1:${ports.emulator}/oauth/authorization`)
      expect(consent?.status(), await page.locator('body').innerText()).toBe(200)
      expect(new URL(page.url()).searchParams.get('client_id')).toBe('demo-client')
      expect(new URL(page.url()).searchParams.get('redirect_uri')).toBe(`${app}/_gate/callback`)
      await page.getByLabel(name).check()
      await page.getByRole('button', { name: 'Approve' }).click()
      await page.waitForURL(`${app}${path}`)
    }

    const alice = await browser.newContext()
    try {
      const page = await alice.newPage()
      await signIn(page, '/', 'Alice Hansen')
      const greeting = await page.locator('body').innerText()
      expect(greeting).toBe('Hello, alice (rule signed-in)')
      expect(section.replace(/\s+/g, ' ')).toContain(`\`${greeting}\``)
      const admin = await page.goto(`${app}/admin/reports`)
      expect(admin?.status()).toBe(200)
      expect(await page.locator('body').innerText()).toBe('Hello, alice (rule staff)')
      expect(section.replace(/\s+/g, ' ')).toContain('`Hello, alice (rule staff)`')
    } finally {
      await alice.close()
    }

    const bob = await browser.newContext()
    try {
      const page = await bob.newPage()
      await signIn(page, '/', 'Bob Nilsen')
      expect(await page.locator('body').innerText()).toBe('Hello, bob (rule signed-in)')
      const admin = await page.goto(`${app}/admin/reports`)
      expect(admin?.status()).toBe(403)
      // The gate's forbidden page, as the page says, not the check's raw JSON.
      const heading = await page.getByRole('heading', { level: 1 }).innerText()
      expect(heading).toBe('You do not have access to this page')
      expect(section.replace(/\s+/g, ' ')).toContain(`\`${heading}\``)
      expect(await page.locator('main').innerText()).toContain(
        'This resource requires the role admin or higher in the group fc:org:example.org.',
      )
      const whoamiLink = /<(http:\/\/127\.0\.0\.1:8000\/_gate\/whoami)>/.exec(section)?.[1]
      expect(whoamiLink).toBeDefined()
      const whoami = await page.goto(local(whoamiLink!))
      expect(whoami?.status()).toBe(200)
      expect(await page.locator('main').innerText()).toContain('You are signed in as bob.')
    } finally {
      await bob.close()
    }
  }, 90_000)

  it('leaves X-Voot-User empty for a bearer token when the config has no oauth, as the page says', async () => {
    expect(section).toContain('**Without `oauth`, `X-Voot-User` is empty for a bearer token**')
    const loaded = await loadGateConfig(join(dir, 'emulator.yaml'), {})
    expect(loaded.problems).toEqual([])
    const { oauth: _oauth, cookie: _cookie, ...bearerOnly } = loaded.config as GateConfig
    let gate: GateServer | undefined
    try {
      gate = await startGateServer({ ...bearerOnly, listen: '127.0.0.1:0' }, { logger: { warn: () => {} } })
      const token = /^\s*export VOOT_TOKEN=(\S+)\s*$/m.exec(emulatorOutput)?.[1]
      expect(token).toBeDefined()
      const answer = await send(gate.url, '/_gate/auth-request', {
        headers: {
          'x-original-url': `http://127.0.0.1:${ports.app}/admin/reports`,
          'x-original-method': 'GET',
          authorization: `Bearer ${token!}`,
        },
      })
      expect(answer.status).toBe(200)
      expect(answer.headers['x-voot-rule']).toBe('staff')
      // Sent, so that a proxy copying it replaces a client's own, and empty.
      expect(answer.headers['x-voot-user']).toBe('')
    } finally {
      await gate?.close()
    }
  }, 30_000)
})
