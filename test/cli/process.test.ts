/**
 * The voot-guard executable as a real process (bin/voot-guard.ts run from source through
 * tsx): exit codes reach the shell, and `voot-guard emulator` stops cleanly on a signal.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { fileURLToPath } from 'node:url'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { ORG_ID, startEmulator, type Emulator } from '../../testing/index.js'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const children: ChildProcess[] = []

interface Started {
  child: ChildProcess
  output: { stdout: string; stderr: string }
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
}

function start(args: string[], env: Record<string, string> = {}): Started {
  const { VOOT_TOKEN: _token, VOOT_BASE_URL: _baseUrl, ...inherited } = process.env
  const child = spawn(process.execPath, ['--import', 'tsx', 'bin/voot-guard.ts', ...args], {
    cwd: ROOT,
    env: { ...inherited, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  children.push(child)
  const output = { stdout: '', stderr: '' }
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (output.stdout += chunk))
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (output.stderr += chunk))
  const exited = once(child, 'exit').then(([code, signal]) => ({ code: code as number | null, signal: signal as NodeJS.Signals | null }))
  return { child, output, exited }
}

async function until(condition: () => boolean, what: string, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

/** Resolves with the exit, or rejects when it takes longer than `ms`: a generous deadline. */
function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no exit within ${ms} ms`)), ms)
  })
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer))
}

afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
})

describe('voot-guard emulator', () => {
  it.each(['SIGINT', 'SIGTERM'] as const)('serves until %s, then closes and exits 0', async (signal) => {
    const { child, output, exited } = start(['emulator', '--port', '0', '--json'])
    await until(() => output.stdout.includes('\n'), 'the JSON line')
    const started = JSON.parse(output.stdout) as { baseUrl: string; tokens: Record<string, string> }
    const res = await fetch(`${started.baseUrl}/me/groups`, { headers: { authorization: `Bearer ${started.tokens.alice}` } })
    expect(res.status).toBe(200)
    expect((await res.json()) as { id: string }[]).toContainEqual(expect.objectContaining({ id: ORG_ID }))

    child.kill(signal)
    expect(await within(exited, 5_000)).toEqual({ code: 0, signal: null })
    expect(output.stderr).toBe('')
    await expect(fetch(`${started.baseUrl}/grouptypes`)).rejects.toThrow()
  })
})

describe('voot-guard check', () => {
  let emulator: Emulator
  beforeAll(async () => {
    emulator = await startEmulator()
  })
  afterAll(async () => {
    await emulator.close()
  })

  it('exits 0 when allowed, 1 when denied, 2 on --token; never prints the token', async () => {
    const alice = emulator.issueToken('alice')
    const bob = emulator.issueToken('bob')
    const args = ['check', '--base-url', emulator.baseUrl, '--group', ORG_ID, '--role', 'admin']
    const runs = [start(args, { VOOT_TOKEN: alice }), start(args, { VOOT_TOKEN: bob }), start([...args, '--token', bob])]
    const exits = await Promise.all(runs.map((each) => within(each.exited, 15_000)))
    expect(exits.map((each) => each.code)).toEqual([0, 1, 2])
    expect(runs[0]?.output.stdout).toMatch(/^ALLOWED/)
    expect(runs[1]?.output.stdout).toMatch(/^DENIED/)
    expect(runs[2]?.output.stderr).toMatch(/--token is not accepted/)
    for (const { output } of runs) {
      expect(output.stdout + output.stderr).not.toContain(alice)
      expect(output.stdout + output.stderr).not.toContain(bob)
    }
  })
})
