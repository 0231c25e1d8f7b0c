/**
 * `voot-guard gate` as a real process (bin/voot-guard.ts through tsx): it reads its YAML
 * with `${NAME}` from the environment, serves, and on SIGTERM lets an answer under way
 * finish before it exits 0.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Emulator } from '../../testing/index.js'
import { startGateEmulator } from './support/gate-harness.js'
import { freePort } from './support/proxies.js'
import { send } from './support/raw-request.js'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
let emulator: Emulator
let dir: string
let child: ChildProcess | undefined

beforeAll(async () => {
  emulator = await startGateEmulator()
  dir = await mkdtemp(join(tmpdir(), 'voot-gate-process-'))
}, 30_000)

afterAll(async () => {
  if (child !== undefined && child.exitCode === null) child.kill('SIGKILL')
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

describe('voot-guard gate (a process)', () => {
  it('serves, and on SIGTERM finishes the answer under way, then exits 0', async () => {
    const port = await freePort()
    const file = join(dir, 'gate.yaml')
    await writeFile(
      file,
      `listen: 127.0.0.1:${port}
service:
  baseUrl: \${GROUPS_URL}
rules:
  - path: /admin/**
    require: { group: "fc:org:example.org", role: admin }
`,
    )
    const { VOOT_TOKEN: _t, ...env } = process.env
    child = spawn(process.execPath, ['--import', 'tsx', 'bin/voot-guard.ts', 'gate', '--config', file], {
      cwd: ROOT,
      env: { ...env, GROUPS_URL: emulator.baseUrl },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
    const exited = once(child, 'exit')
    await until(() => stdout.includes('is ready'), `the gate to be ready (stdout: ${stdout}, stderr: ${stderr})`)
    expect(stdout).toContain(`listening on http://127.0.0.1:${port}`)

    const url = `http://127.0.0.1:${port}`
    const headers = { 'x-original-url': 'https://app.example.org/admin/x', 'x-original-method': 'GET' }
    const token = emulator.issueToken('alice')
    // The group service takes 800 ms for this token: SIGTERM arrives while the gate waits.
    emulator.faults.add({ kind: 'latency', ms: 800 }, { token })
    emulator.resetLog()
    const slow = send(url, '/_gate/auth-request', { headers: { ...headers, authorization: `Bearer ${token}` } })
    await until(() => emulator.count() > 0, 'the upstream call')
    child.kill('SIGTERM')
    const answer = await slow
    expect(answer.status).toBe(200)
    expect(answer.headers['x-voot-user']).toBe('')
    const [code] = await exited
    expect(code).toBe(0)
    expect(stdout).toContain('voot-guard gate stopped.')
    // Stopped: nobody listens any more.
    await expect(send(url, '/_gate/healthz')).rejects.toThrow()
  }, 40_000)
})
