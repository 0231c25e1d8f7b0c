/**
 * The gate in operation (DESIGN section 6): the decision log writes one JSON line per check
 * (denials always, allowed as configured, never a token or an unnamed group, the user as its
 * `sub` or a keyed hash, `X-Request-Id` carried), and SIGHUP reloads the configuration in a
 * real process: new rules for new requests, requests under way answered under one
 * configuration or the other, a broken file refused with every problem and the old kept.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ORG_ID, type Emulator } from '../../testing/index.js'
import type { GateServer } from '../../gate/index.js'
import { startGateEmulator, startTestGate, testGateConfig } from './support/gate-harness.js'
import { freePort } from './support/proxies.js'
import { send } from './support/raw-request.js'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
let emulator: Emulator
let dir: string

beforeAll(async () => {
  emulator = await startGateEmulator()
  dir = await mkdtemp(join(tmpdir(), 'voot-gate-operations-'))
}, 30_000)

afterAll(async () => {
  await emulator?.close()
  await rm(dir, { recursive: true, force: true })
})

const ask = (url: string, target: string, headers: Record<string, string> = {}) =>
  send(url, '/_gate/auth-request', {
    headers: { 'x-original-url': `https://app.example.org${target}`, 'x-original-method': 'GET', ...headers },
  })

async function lines(file: string): Promise<Record<string, unknown>[]> {
  const text = await readFile(file, 'utf8').catch(() => '')
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>)
}

async function until(condition: () => boolean | Promise<boolean>, what: string, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

describe('the decision log', () => {
  let gate: GateServer | undefined
  afterAll(async () => {
    await gate?.close()
  })

  it('writes a line per check: a denial with its reason, no token, the request id', async () => {
    const file = join(dir, 'decisions.log')
    gate = await startTestGate(testGateConfig(emulator, { log: { decisions: file } }))
    const alice = emulator.issueToken('alice')
    const bob = emulator.issueToken('bob')
    expect((await ask(gate.url, '/admin/x', { authorization: `Bearer ${alice}`, 'x-request-id': 'req-1' })).status).toBe(200)
    expect((await ask(gate.url, '/admin/x?secret=1', { authorization: `Bearer ${bob}`, 'x-request-id': 'req-2' })).status).toBe(403)
    expect((await ask(gate.url, '/admin/x', { authorization: `Bearer ${bob}`, 'x-request-id': 'req-3' })).status).toBe(403)
    expect((await ask(gate.url, '/public/a')).status).toBe(200)
    expect((await ask(gate.url, '/public/../admin')).status).toBe(403)
    expect((await ask(gate.url, '/admin/x', { authorization: 'Bearer not-a-token-the-service-knows' })).status).toBe(401)
    await until(async () => (await lines(file)).length >= 6, 'six lines')
    const written = await lines(file)
    const text = await readFile(file, 'utf8')
    for (const secret of [alice, bob, 'not-a-token-the-service-knows', 'secret=1', 'fc:org:example.org:unit'])
      expect(text).not.toContain(secret)
    expect(written[0]).toMatchObject({
      protocol: 'auth-request',
      host: 'app.example.org',
      method: 'GET',
      path: '/admin/x',
      rule: 'admin',
      outcome: 'allow',
      status: 200,
      reason: 'allowed',
      user: 'alice',
      tier: 'upstream',
      requestId: 'req-1',
    })
    expect(typeof written[0]?.['ms']).toBe('number')
    expect(new Date(written[0]?.['time'] as string).getTime()).toBeGreaterThan(Date.now() - 60_000)
    expect(written[1]).toMatchObject({
      path: '/admin/x',
      rule: 'admin',
      outcome: 'deny',
      status: 403,
      reason: 'role_too_low',
      requestId: 'req-2',
    })
    // The same token again: decided from the in-process cache.
    expect(written[2]).toMatchObject({ outcome: 'deny', tier: 'l1', requestId: 'req-3' })
    expect(written[3]).toMatchObject({ path: '/public/a', rule: 'public', outcome: 'allow', reason: 'anyone', tier: null, requestId: null })
    expect(written[4]).toMatchObject({ rule: null, outcome: 'deny', reason: 'ambiguous_path' })
    expect(written[5]).toMatchObject({ rule: 'admin', outcome: 'signin', status: 401, reason: 'ERR_TOKEN_INVALID' })
    await gate.close()
    gate = undefined
  })

  it('writes denials only with allowed: none, and a keyed hash of the user with user: hash', async () => {
    const file = join(dir, 'hashed.log')
    gate = await startTestGate(testGateConfig(emulator, { log: { decisions: file, allowed: 'none', user: 'hash' } }))
    const carol = emulator.issueToken('carol')
    expect((await ask(gate.url, '/public/a')).status).toBe(200)
    expect((await ask(gate.url, '/admin/x', { authorization: `Bearer ${emulator.issueToken('alice')}` })).status).toBe(200)
    expect((await ask(gate.url, '/admin/x', { authorization: `Bearer ${carol}` })).status).toBe(403)
    await until(async () => (await lines(file)).length >= 1, 'a line')
    await gate.close()
    gate = undefined
    const written = await lines(file)
    expect(written.map((line) => line['outcome'])).toEqual(['deny'])
    // A denial has no user from userinfo here (the core refused first): only allowed checks ask it.
    expect(written[0]?.['user']).toBe('')
  })

  it('refuses a bad log setting at its key', async () => {
    const { createGate, GateConfigError } = await import('../../gate/index.js')
    const config = testGateConfig(emulator, { log: { decisions: 'stdout', allowed: 2 as unknown as number, user: 'hashed' as 'hash' } })
    expect(() => createGate(config)).toThrow(GateConfigError)
    try {
      createGate(config)
    } catch (error) {
      expect((error as InstanceType<typeof GateConfigError>).problems.map((problem) => problem.key)).toEqual(['log.allowed', 'log.user'])
    }
  })
})

describe('the metrics across a reload', () => {
  it('keep counting where they were: checks and sign-ins are not set back to zero', async () => {
    const running = await startTestGate(testGateConfig(emulator))
    try {
      const bob = { authorization: `Bearer ${emulator.issueToken('bob')}` }
      expect((await ask(running.url, '/admin/x', bob)).status).toBe(403)
      const origin = { 'x-forwarded-host': 'app.example.org', 'x-forwarded-proto': 'https' }
      expect((await send(running.url, '/_gate/signin?rd=%2F', { headers: origin })).status).toBe(302)
      const series = async () =>
        (await send(running.url, '/_gate/metrics')).body.split('\n').filter((line) => /^voot_gate_(checks|signins)_total\{/.test(line))
      const before = await series()
      expect(before).toEqual([
        'voot_gate_checks_total{endpoint="auth-request",status="403"} 1',
        'voot_gate_signins_total{outcome="started"} 1',
      ])
      await running.reload(testGateConfig(emulator))
      expect(await series()).toEqual(before)
      expect((await ask(running.url, '/admin/x', bob)).status).toBe(403)
      expect(await series()).toEqual([
        'voot_gate_checks_total{endpoint="auth-request",status="403"} 2',
        'voot_gate_signins_total{outcome="started"} 1',
      ])
    } finally {
      await running.close()
    }
  })
})

describe('voot-guard gate on SIGHUP', () => {
  let child: ChildProcess | undefined
  afterAll(() => {
    if (child !== undefined && child.exitCode === null) child.kill('SIGKILL')
  })

  const config = (port: number, adminRole: string, extra = '') => `listen: 127.0.0.1:${port}
service:
  baseUrl: ${emulator.baseUrl}
  allowInsecureHttp: true
log:
  decisions: stdout
  allowed: none
rules:
  - id: admin-${adminRole}
    path: /admin/**
    require: { group: "${ORG_ID}", role: ${adminRole} }
  - allow: signed-in
${extra}`

  it('serves new requests under the new file, answers every request under way, and keeps the old on a broken one', async () => {
    const port = await freePort()
    const file = join(dir, 'reload.yaml')
    await writeFile(file, config(port, 'admin'))
    const { VOOT_TOKEN: _t, ...env } = process.env
    child = spawn(process.execPath, ['--import', 'tsx', 'bin/voot-guard.ts', 'gate', '--config', file], {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
    const exited = once(child, 'exit')
    await until(() => stdout.includes('is ready'), `the gate to be ready (stdout: ${stdout}, stderr: ${stderr})`)
    const url = `http://127.0.0.1:${port}`
    const bob = { authorization: `Bearer ${emulator.issueToken('bob')}` }
    // bob is a member of the org, not an admin: refused under the first file, let in under the second.
    expect((await ask(url, '/admin/x', bob)).status).toBe(403)

    // Load while the file changes: every answer is one configuration's or the other's. Half
    // of it with new tokens, which the group service answers slowly: the old gate has
    // lookups under way when it is replaced, and must finish them before it is released.
    await writeFile(file, config(port, 'member'))
    const fault = emulator.faults.add({ kind: 'latency', ms: 60 })
    const fresh = () => ({ authorization: `Bearer ${emulator.issueToken('bob')}` })
    const statuses: number[] = []
    let reloaded = false
    const load = (async () => {
      while (!reloaded || statuses.length < 400) {
        const batch = await Promise.all(
          Array.from({ length: 8 }, (_, i) =>
            ask(url, '/admin/x', i % 2 === 0 ? bob : fresh()).then(
              (answer) => answer.status,
              () => 0,
            ),
          ),
        )
        statuses.push(...batch)
        if (statuses.length > 20_000) break
      }
    })()
    await until(() => statuses.length >= 100, 'load before the reload')
    child.kill('SIGHUP')
    await until(() => stdout.includes(`reloaded ${file}`), `the reload (stderr: ${stderr})`)
    reloaded = true
    await load
    emulator.faults.remove(fault)
    expect(statuses.filter((status) => status !== 403 && status !== 200)).toEqual([])
    expect(statuses).toContain(403)
    expect(statuses.at(-1)).toBe(200)
    expect(statuses.lastIndexOf(403)).toBeLessThan(statuses.indexOf(200) + 8 * 2)

    // A broken file: every problem said, the running configuration kept.
    await writeFile(file, config(port, 'admn', '  - methods: [GETT]\n    allow: anyone\n'))
    child.kill('SIGHUP')
    await until(() => stderr.includes('reload refused'), 'the refusal')
    expect(stderr).toContain(`${file}:11:45: rules[0].require.role: Unknown role "admn"`)
    expect(stderr).toContain(`${file}:13:15: rules[2].methods[0]: "GETT" is not an HTTP method`)
    expect(stderr).toContain(`voot-guard gate: reload refused: 2 problems in ${file}; the running configuration is kept`)
    expect((await ask(url, '/admin/x', bob)).status).toBe(200)
    // The decision log (allowed: none) wrote the 403s, to stdout.
    expect(stdout).toMatch(/"outcome":"deny","status":403,"reason":"role_too_low"/)

    child.kill('SIGTERM')
    const [code] = await exited
    expect(code).toBe(0)
  }, 60_000)
})
