/**
 * `strictHosts`: read from the config (a boolean; default on when a rule names a host),
 * and what it does to a check for a host nothing names.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Emulator } from '../../testing/index.js'
import type { GateServer } from '../../gate/index.js'
import { ProblemList } from '../../gate/config/problem.js'
import { readGateSettings } from '../../gate/config/read.js'
import { startGateEmulator, startTestGate, testGateConfig } from './support/gate-harness.js'
import { send } from './support/raw-request.js'

const service = { baseUrl: 'https://groups-api.example.org/groups' }

function read(config: Record<string, unknown>) {
  const problems = new ProblemList()
  return { settings: readGateSettings({ service, ...config }, problems), problems: problems.items }
}

describe('reading strictHosts', () => {
  it('defaults to on when a rule names a host, off when none does', () => {
    expect(read({ rules: [{ host: 'wiki.example.org', allow: 'anyone' }] }).settings?.strictHosts).toBe(true)
    expect(read({ rules: [{ host: '*.example.org', allow: 'anyone' }] }).settings?.strictHosts).toBe(true)
    expect(read({ rules: [{ allow: 'anyone' }] }).settings?.strictHosts).toBe(false)
  })

  it('takes true or false as given, and refuses anything else', () => {
    expect(read({ strictHosts: false, rules: [{ host: 'wiki.example.org', allow: 'anyone' }] }).settings?.strictHosts).toBe(false)
    expect(read({ strictHosts: true, rules: [{ allow: 'anyone' }] }).settings?.strictHosts).toBe(true)
    const wrong = read({ strictHosts: 'yes', rules: [{ allow: 'anyone' }] })
    // Settings come back with their problems, so that later checks can say theirs in the same run.
    expect(wrong.problems).toEqual([expect.objectContaining({ path: ['strictHosts'], message: 'must be true or false' })])
  })
})

describe('a check for a host nothing names', () => {
  let emulator: Emulator
  let strict: GateServer
  let loose: GateServer
  const rules = [
    { id: 'wiki', host: 'wiki.example.org', path: '/admin/**', allow: 'signed-in' as const },
    { id: 'health', path: '/healthz', allow: 'anyone' as const },
  ]

  beforeAll(async () => {
    emulator = await startGateEmulator()
    strict = await startTestGate(testGateConfig(emulator, { rules, redirectHosts: ['status.example.org'] }))
    loose = await startTestGate(testGateConfig(emulator, { rules, strictHosts: false }))
  }, 30_000)

  afterAll(async () => {
    await strict?.close()
    await loose?.close()
    await emulator?.close()
  })

  const ask = (gate: GateServer, host: string) =>
    send(gate.url, '/_gate/auth-request', { headers: { 'x-original-url': `https://${host}/healthz`, 'x-original-method': 'GET' } })

  it('is refused before any rule when strictHosts is on; a rule or redirectHosts naming it lets it be judged', async () => {
    const unknown = await ask(strict, 'evil.example.com')
    expect(unknown.status).toBe(403)
    expect(JSON.parse(unknown.body).error_description).toBe('The gate serves no such host')
    expect((await ask(strict, 'wiki.example.org')).status).toBe(200)
    expect((await ask(strict, 'status.example.org')).status).toBe(200)
  })

  it('is matched against host-less rules when strictHosts is off', async () => {
    const answer = await ask(loose, 'evil.example.com')
    expect(answer.status).toBe(200)
    expect(answer.headers['x-voot-rule']).toBe('health')
  })
})
