/**
 * examples/service/check.ts run as a person runs it: its exit code is the answer (0
 * allowed, 1 denied, 2 error), and a missing token is a usage message, not a stack trace.
 */
import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { USAGE } from '../../examples/service/check.js'
import { startEmulator, type Emulator } from '../../testing/index.js'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
let emulator: Emulator

beforeAll(async () => {
  emulator = await startEmulator()
})
afterAll(async () => {
  await emulator.close()
})

async function runExample(env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  const { VOOT_BASE_URL: _a, VOOT_TOKEN: _b, ...inherited } = process.env
  return promisify(execFile)(process.execPath, ['--import', 'tsx', 'examples/service/check.ts'], {
    cwd: ROOT,
    env: { ...inherited, ...env },
  }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code: number; stdout: string; stderr: string }) => ({ code: error.code, stdout: error.stdout, stderr: error.stderr }),
  )
}

describe('examples/service/check.ts', () => {
  it('without a token: the usage and exit code 2, no stack trace', async () => {
    const result = await runExample({ VOOT_BASE_URL: emulator.baseUrl })
    expect(result).toEqual({ code: 2, stdout: '', stderr: `Missing VOOT_TOKEN.\n${USAGE}` })
  })

  it('without a base URL: the usage and exit code 2', async () => {
    const result = await runExample({ VOOT_TOKEN: emulator.issueToken('alice') })
    expect(result).toEqual({ code: 2, stdout: '', stderr: `Missing VOOT_BASE_URL.\n${USAGE}` })
  })

  it('allowed is 0, denied is 1, a failing group service 2', async () => {
    expect(await runExample({ VOOT_BASE_URL: emulator.baseUrl, VOOT_TOKEN: emulator.issueToken('alice') })).toMatchObject({
      code: 0,
      stdout: 'allowed\n',
    })
    expect(await runExample({ VOOT_BASE_URL: emulator.baseUrl, VOOT_TOKEN: emulator.issueToken('bob') })).toMatchObject({ code: 1 })
    const failing = emulator.issueToken('alice')
    emulator.faults.add({ kind: 'status', status: 500 }, { token: failing })
    const result = await runExample({ VOOT_BASE_URL: emulator.baseUrl, VOOT_TOKEN: failing })
    expect(result).toMatchObject({ code: 2, stderr: 'group service unavailable (ERR_UPSTREAM_STATUS)\n' })
  })
})
