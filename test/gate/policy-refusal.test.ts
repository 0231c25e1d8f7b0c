/**
 * A configuration whose own policy tests fail is not valid anywhere (issue 48, item 1): a
 * start (`startGateServer`, `voot-guard gate`), `GateServer.reload` and SIGHUP refuse it as
 * they refuse one with problems, naming each failing test, and the running configuration
 * keeps serving. The story: under Apache, `/admin/**` changed to `role: member`, the test
 * "bob is denied on /admin/" fails, and bob must still get 403 after the SIGHUP, under load.
 * `--allow-failing-tests` (the command line only) is the loud emergency exit.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ORG_ID, type Emulator } from '../../testing/index.js'
import { checkGateConfig, GateConfigError, startGateServer, type GateConfig } from '../../gate/index.js'
import { runCli } from '../../cli/index.js'
import { APACHE, apacheLog, startApache } from './support/apache.js'
import { startGateEmulator } from './support/gate-harness.js'
import { freePort, needBinary, startEchoApp, type RunningProxy } from './support/proxies.js'
import { send } from './support/raw-request.js'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
let emulator: Emulator
let dir: string
const children: ChildProcess[] = []

beforeAll(async () => {
  emulator = await startGateEmulator()
  dir = await mkdtemp(join(tmpdir(), 'voot-gate-refusal-'))
}, 30_000)

afterAll(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  await emulator?.close()
  await rm(dir, { recursive: true, force: true })
})

async function until(condition: () => boolean, what: string, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

/** The admin's configuration: `/admin/**` needs `adminRole`; the tests say bob is refused there, alice let in. */
const configObject = (adminRole: string): GateConfig => ({
  listen: '127.0.0.1:0',
  service: { baseUrl: emulator.baseUrl, allowInsecureHttp: true },
  rules: [
    { id: 'admins', path: '/admin/**', require: { group: ORG_ID, role: adminRole } },
    { id: 'signed-in', allow: 'signed-in' },
  ],
  fixtures: { alice: { [ORG_ID]: 'admin' }, bob: { [ORG_ID]: 'member' } },
  tests: [
    { name: 'alice is let in on /admin/', request: 'GET https://app.example.org/admin/', as: 'alice', expect: 'allow' },
    { name: 'bob is denied on /admin/', request: 'GET https://app.example.org/admin/', as: 'bob', expect: 'deny' },
  ],
})

const ask = (url: string, token: string) =>
  send(url, '/_gate/auth-request', {
    headers: { 'x-original-url': 'https://app.example.org/admin/', 'x-original-method': 'GET', authorization: `Bearer ${token}` },
  })

describe('checkGateConfig', () => {
  it('answers as a start would: a failing policy test is a problem at its tests[i], passing ones none', async () => {
    const problems = await checkGateConfig(configObject('member'))
    expect(problems.map(({ key, message }) => `${key}: ${message}`)).toEqual([
      'tests[1]: the policy test "bob is denied on /admin/" fails: expected deny, got allow (200, rule admins): the requirement is met',
    ])
    expect(await checkGateConfig(configObject('admin'))).toEqual([])
  })
})

describe('startGateServer and reload()', () => {
  it('refuse a configuration whose policy test fails, naming it; the running one keeps serving', async () => {
    const quiet = { logger: { warn: () => {} } }
    const refused = await startGateServer(configObject('member'), quiet).then(
      () => undefined,
      (error: unknown) => error,
    )
    expect(refused).toBeInstanceOf(GateConfigError)
    expect((refused as GateConfigError).problems.map(({ key, message }) => `${key}: ${message}`)).toEqual([
      'tests[1]: the policy test "bob is denied on /admin/" fails: expected deny, got allow (200, rule admins): the requirement is met',
    ])

    const running = await startGateServer(configObject('admin'), quiet)
    try {
      const bob = emulator.issueToken('bob')
      expect((await ask(running.url, bob)).status).toBe(403)
      await expect(running.reload(configObject('member'))).rejects.toThrow(GateConfigError)
      expect(running.gate.settings.rules[0]?.require).toEqual({ group: ORG_ID, role: 'admin' })
      expect((await ask(running.url, bob)).status).toBe(403)
      // A configuration whose tests pass is taken as ever.
      const { tests: _tests, ...relaxed } = configObject('member')
      await running.reload(relaxed)
      expect((await ask(running.url, bob)).status).toBe(200)
    } finally {
      await running.close()
    }
  })

  it('with allowFailingTests, serve it and warn of each failing test, at the start and on reload', async () => {
    const warnings: string[] = []
    const options = { logger: { warn: (message: string) => warnings.push(message) }, allowFailingTests: true }
    const running = await startGateServer(configObject('member'), options)
    try {
      expect(warnings).toEqual([
        'gate: WARNING: served although a policy test fails (allowFailingTests): tests[1]: the policy test "bob is denied on /admin/" fails: expected deny, got allow (200, rule admins): the requirement is met',
      ])
      expect((await ask(running.url, emulator.issueToken('bob'))).status).toBe(200)
      await running.reload(configObject('member'))
      expect(warnings).toHaveLength(2)
    } finally {
      await running.close()
    }
  })
})

describe('--allow-failing-tests', () => {
  it('goes with running the gate only: beside --check, --test or --explain it is a wrong command line', async () => {
    for (const mode of [['--check'], ['--test'], ['--explain', 'GET https://app.example.org/', '--as', 'anonymous']]) {
      let stderr = ''
      const io = { stdout: { write: () => {} }, stderr: { write: (text: string) => (stderr += text) }, env: {} }
      const code = await runCli(['gate', '--config', join(dir, 'none.yaml'), ...mode, '--allow-failing-tests'], io)
      expect(code, stderr).toBe(2)
      expect(stderr).toContain('--allow-failing-tests goes with running the gate')
    }
  })
})

/** The file: a gate with its FastCGI authorizer for Apache, on known ports. */
const configFile = (port: number, fastcgiPort: number, adminRole: string) => `listen: 127.0.0.1:${port}
fastcgi: { listen: "127.0.0.1:${fastcgiPort}" }
service:
  baseUrl: ${emulator.baseUrl}
  allowInsecureHttp: true
rules:
  - id: admins
    path: /admin/**
    require: { group: "${ORG_ID}", role: ${adminRole} }
  - id: signed-in
    allow: signed-in
fixtures:
  alice: { "${ORG_ID}": admin }
  bob: { "${ORG_ID}": member }
tests:
  - { name: alice is let in on /admin/, request: "GET https://app.example.org/admin/", as: alice, expect: allow }
  - { name: bob is denied on /admin/, request: "GET https://app.example.org/admin/", as: bob, expect: deny }
`

interface GateProcess {
  readonly child: ChildProcess
  readonly output: { stdout: string; stderr: string }
  readonly exited: Promise<number | null>
}

function runGate(file: string, ...extra: string[]): GateProcess {
  const { VOOT_TOKEN: _t, ...env } = process.env
  const child = spawn(process.execPath, ['--import', 'tsx', 'bin/voot-guard.ts', 'gate', '--config', file, ...extra], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  children.push(child)
  const output = { stdout: '', stderr: '' }
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (output.stdout += chunk))
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (output.stderr += chunk))
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  return { child, output, exited }
}

describe('voot-guard gate (a process) behind Apache', () => {
  let apache: RunningProxy | undefined
  let app: Awaited<ReturnType<typeof startEchoApp>> | undefined
  afterAll(async () => {
    await apache?.stop()
    await app?.close()
  })

  it('does not start on a configuration whose policy test fails, listing it', async () => {
    const file = join(dir, 'refused.yaml')
    await writeFile(file, configFile(await freePort(), await freePort(), 'member'))
    const gate = runGate(file)
    expect(await gate.exited).toBe(1)
    expect(gate.output.stderr).toContain(
      `${file}:17:5: tests[1]: the policy test "bob is denied on /admin/" fails: expected deny, got allow (200, rule admins): the requirement is met`,
    )
    expect(gate.output.stderr).toContain(`voot-guard gate: 1 problem in ${file}`)
    expect(gate.output.stdout).not.toContain('listening')
  }, 30_000)

  it('keeps the old configuration on a SIGHUP whose tests fail: bob still gets 403 through Apache, under load', async (ctx) => {
    needBinary(ctx, APACHE)
    const port = await freePort()
    const fastcgiPort = await freePort()
    const file = join(dir, 'gate.yaml')
    await writeFile(file, configFile(port, fastcgiPort, 'admin'))
    const gate = runGate(file)
    const { output } = gate
    await until(() => output.stdout.includes('is ready'), `the gate to be ready (stdout: ${output.stdout}, stderr: ${output.stderr})`)
    app = await startEchoApp()
    apache = await startApache({ gatePort: port, fastcgiPort, appPort: app.port })
    const url = apache.url
    const bob = { authorization: `Bearer ${emulator.issueToken('bob')}` }
    const alice = { authorization: `Bearer ${emulator.issueToken('alice')}` }
    const first = await send(url, '/admin/', { headers: bob })
    if (first.status !== 403) expect(`${first.status}\n${await apacheLog(apache)}`).toBe('403')

    // bob, alice and new tokens of bob's (the group service asked while the SIGHUP lands) through Apache, all along.
    const fault = emulator.faults.add({ kind: 'latency', ms: 30 })
    const answers: { who: string; status: number }[] = []
    let refused = false
    const load = (async () => {
      while (!refused || answers.length < 300) {
        const batch = await Promise.all(
          Array.from({ length: 6 }, (_, i) => {
            const [who, headers] =
              i % 3 === 0
                ? ['alice', alice]
                : i % 3 === 1
                  ? ['bob', bob]
                  : ['bob', { authorization: `Bearer ${emulator.issueToken('bob')}` }]
            return send(url, '/admin/', { headers }).then(
              (answer) => ({ who, status: answer.status }),
              () => ({ who, status: 0 }),
            )
          }),
        )
        answers.push(...batch)
        if (answers.length > 20_000) break
      }
    })()
    await until(() => answers.length >= 60, 'load before the SIGHUP')
    await writeFile(file, configFile(port, fastcgiPort, 'member'))
    gate.child.kill('SIGHUP')
    await until(() => output.stderr.includes('reload refused'), `the refusal (stdout: ${output.stdout}, stderr: ${output.stderr})`)
    const atRefusal = answers.length
    refused = true
    await load
    emulator.faults.remove(fault)

    expect(output.stderr).toContain(
      `${file}:17:5: tests[1]: the policy test "bob is denied on /admin/" fails: expected deny, got allow (200, rule admins): the requirement is met`,
    )
    expect(output.stderr).toContain(`voot-guard gate: reload refused: 1 problem in ${file}; the running configuration is kept`)
    expect(output.stdout).not.toContain('reloaded')
    expect(answers.length).toBeGreaterThan(atRefusal)
    expect(answers.filter(({ who, status }) => status !== (who === 'alice' ? 200 : 403))).toEqual([])
    expect((await send(url, '/admin/', { headers: { authorization: `Bearer ${emulator.issueToken('bob')}` } })).status).toBe(403)

    gate.child.kill('SIGTERM')
    expect(await gate.exited).toBe(0)
  }, 90_000)

  it('with --allow-failing-tests, serves it and says so, at the start and on each SIGHUP', async () => {
    const port = await freePort()
    const file = join(dir, 'emergency.yaml')
    await writeFile(file, configFile(port, await freePort(), 'member'))
    const gate = runGate(file, '--allow-failing-tests')
    const { output } = gate
    await until(() => output.stdout.includes('is ready'), `the gate to be ready (stdout: ${output.stdout}, stderr: ${output.stderr})`)
    expect(output.stderr).toContain('voot-guard gate: WARNING: --allow-failing-tests')
    expect(output.stderr).toContain(
      'gate: WARNING: served although a policy test fails (allowFailingTests): tests[1]: the policy test "bob is denied on /admin/" fails',
    )
    expect((await ask(`http://127.0.0.1:${port}`, emulator.issueToken('bob'))).status).toBe(200)
    const before = output.stderr.length
    gate.child.kill('SIGHUP')
    await until(() => output.stdout.includes('reloaded'), `the reload (stderr: ${output.stderr})`)
    expect(output.stderr.slice(before)).toContain('voot-guard gate: WARNING: --allow-failing-tests is in force for this reload')
    expect(output.stderr.slice(before)).toContain('served although a policy test fails')
    gate.child.kill('SIGTERM')
    expect(await gate.exited).toBe(0)
  }, 30_000)
})
