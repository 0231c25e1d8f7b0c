/**
 * NestJS 11 (CommonJS): a small app in test/fixtures/nest11, with its own Nest 11 packages,
 * loads voot-guard/nestjs from the built package in its own node_modules (where a user's
 * app has it) and answers on the Express and Fastify platforms. The repo's own tests run
 * Nest 12; this one proves the same build works with the previous major.
 */
import { spawn, execFileSync, execFile, type ChildProcess } from 'node:child_process'
import { promisify } from 'node:util'
import { cp, mkdir, rm, access } from 'node:fs/promises'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { request } from 'undici'
import { startEmulator, type Emulator } from '../../testing/index.js'

const root = fileURLToPath(new URL('../..', import.meta.url))
const fixture = fileURLToPath(new URL('../fixtures/nest11/', import.meta.url))
const installed = `${fixture}node_modules/voot-guard/`

let emulator: Emulator
let child: ChildProcess
let started: { versions: { core: string; adapterCommon: string }; express: string; fastify: string }

/** The package as npm installs it: package.json and the tsc build, in the fixture's node_modules. */
async function installBuiltPackage(): Promise<void> {
  try {
    await access(`${fixture}node_modules/@nestjs/core`)
  } catch {
    // .ci/run installs the fixture's locked dependencies; a fresh checkout gets them here.
    execFileSync('npm', ['ci', '--prefix', fixture, '--no-audit', '--no-fund'], { stdio: 'ignore' })
  }
  await rm(installed, { recursive: true, force: true })
  await mkdir(installed, { recursive: true })
  await cp(`${root}package.json`, `${installed}package.json`)
  execFileSync(
    process.execPath,
    [`${root}node_modules/typescript/bin/tsc`, '-p', `${root}tsconfig.build.json`, '--outDir', `${installed}dist`],
    {
      cwd: root,
      stdio: 'inherit',
    },
  )
}

beforeAll(async () => {
  emulator = await startEmulator()
  await installBuiltPackage()
  child = spawn(process.execPath, ['app.cjs', emulator.baseUrl], { cwd: fixture, stdio: ['ignore', 'pipe', 'inherit'] })
  const [line] = await Promise.race([
    createInterface({ input: child.stdout! })
      [Symbol.asyncIterator]()
      .next()
      .then((next) => [next.value as string]),
    new Promise<never>((_, reject) => child.once('exit', (code) => reject(new Error(`the Nest 11 app exited with ${code}`)))),
  ])
  started = JSON.parse(line!) as typeof started
}, 180_000)

afterAll(async () => {
  child?.kill()
  await emulator?.close()
})

it('runs on the app’s own Nest 11 packages', () => {
  expect(started.versions.core).toMatch(/^11\./)
  expect(started.versions.adapterCommon).toMatch(/^11\./)
})

it('says to import VootGuardModule when VootGuard is used without it (issue #52 item 4)', async () => {
  const { stdout } = await promisify(execFile)(process.execPath, ['no-module.cjs'], { cwd: fixture })
  const failures = JSON.parse(stdout) as { express: string | null; fastify: string | null }
  for (const message of [failures.express, failures.fastify]) {
    expect(message).toMatch(
      /^VootGuard needs VootGuardModule: import it once, in the root module: @Module\(\{ imports: \[VootGuardModule\.forRoot\(/,
    )
  }
})

describe.each(['express', 'fastify'] as const)('Nest 11 on %s', (platform) => {
  async function get(path: string, token?: string) {
    const response = await request(`${started[platform]}${path}`, {
      headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
    })
    const text = await response.body.text()
    return { status: response.statusCode, headers: response.headers, json: JSON.parse(text) as unknown }
  }

  it('allows a member, hands Voot() the context, and answers refusals with the contract', async () => {
    expect(await get('/staff', emulator.issueToken('alice'))).toMatchObject({ status: 200, json: { reason: 'member' } })
    const missing = await get('/staff')
    expect(missing).toMatchObject({ status: 401, json: { error: 'unauthorized' } })
    expect(missing.headers['www-authenticate']).toBe('Bearer realm="nest11"')
    expect(missing.headers['content-type']).toBe('application/json; charset=utf-8')
    expect(await get('/staff', emulator.issueToken('bob'))).toMatchObject({ status: 403, json: { error: 'forbidden' } })
    const token = emulator.issueToken('alice')
    emulator.faults.add({ kind: 'status', status: 500 }, { token })
    const failed = await get('/staff', token)
    expect(failed).toMatchObject({ status: 503, json: { error: 'temporarily_unavailable' } })
    expect(failed.headers['retry-after']).toBe('5')
    emulator.faults.clear()
    expect(await get('/health')).toMatchObject({ status: 200, json: { ok: true } })
  })

  it('lets a request without credentials through Authenticated({ optional: true }), and no other', async () => {
    expect(await get('/welcome')).toMatchObject({ status: 200, json: { reason: null } })
    expect(await get('/welcome', emulator.issueToken('erin'))).toMatchObject({ status: 200, json: { reason: 'authenticated' } })
    expect(await get('/welcome', 'not-a-known-token')).toMatchObject({ status: 401, json: { error: 'invalid_token' } })
  })
})
