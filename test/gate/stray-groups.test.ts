/**
 * Issue 52, item 5, in the gate: `--check` refuses SURFconext's address with Feide's
 * `/groups` (config-problems.test.ts), and a gate started on an OpenConext service (the
 * emulator's `openconext` dialect on 127.0.0.1) under a stray `/groups` says so at its start
 * and is not ready, instead of answering 503 to its first user in silence.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runCli } from '../../cli/index.js'
import { startEmulator, type Emulator } from '../../testing/index.js'

let dir: string
let emulator: Emulator

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'voot-gate-stray-'))
  emulator = await startEmulator({ dialect: 'openconext', host: '127.0.0.1', port: 0 })
})
afterAll(async () => {
  await emulator.close()
  await rm(dir, { recursive: true, force: true })
})

async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

/** Starts the gate on `baseUrl`, waits for its word on readiness and its readyz, then stops it. */
async function startOn(baseUrl: string): Promise<{ code: number; stdout: string; stderr: string; readyz: number }> {
  const port = await freePort()
  const file = join(dir, 'gate.yaml')
  await writeFile(
    file,
    `listen: 127.0.0.1:${port}
service:
  baseUrl: ${baseUrl}
  roles: [prospect, member, manager, admin, owner]
rules:
  - allow: signed-in
`,
  )
  let stdout = ''
  let stderr = ''
  const controller = new AbortController()
  const done = runCli(['gate', '--config', file], {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
    env: {},
    signal: controller.signal,
  })
  let readyz = 0
  try {
    const deadline = Date.now() + 5_000
    while (!/is ready|not ready yet/.test(stdout + stderr) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20))
    readyz = (await fetch(`http://127.0.0.1:${port}/_gate/readyz`)).status
  } finally {
    controller.abort()
  }
  return { code: await done, stdout, stderr, readyz }
}

describe('a gate on an OpenConext service', () => {
  it('under a stray /groups: says so at the start, naming the root to use, and is not ready', async () => {
    const started = await startOn(`${emulator.baseUrl}/groups`)
    expect(started.stderr).toContain(
      `voot-guard gate: not ready yet: The group service at baseUrl does not answer like one: ${emulator.baseUrl}/groups has a stray /groups.`,
    )
    expect(started.stderr).toContain(`set baseUrl to ${emulator.baseUrl} (`)
    expect(started.stdout).not.toContain('is ready')
    expect(started.readyz).toBe(503)
  })

  it('at its root: ready', async () => {
    const started = await startOn(emulator.baseUrl)
    expect(started.stdout).toContain('voot-guard gate is ready: the group service answers')
    expect(started.stderr).not.toContain('not ready')
    expect(started.readyz).toBe(200)
  })
})
