/**
 * `voot-guard emulator`'s own options, run in-process: `--dialect` (the service it plays)
 * and the warning for a `--host` that is not loopback. No test binds a non-loopback
 * address: the warning is checked with an address this machine does not have (it is
 * printed before binding, so it shows even though the bind then fails), and the deciding
 * function is checked on its own.
 */
import { describe, expect, it } from 'vitest'
import { runCli } from '../../cli/index.js'
import { exposedHostWarning, isLoopbackListenHost } from '../../cli/listen-host.js'
import { READING_CLUB_GROUP_ID } from '../../testing/index.js'

interface Started {
  baseUrl: string
  authUrl: string
  dialect: string
  tokens: Record<string, string>
}

/** Runs `voot-guard emulator ... --json` until it has printed its start line; `stop()` ends it. */
async function startCli(args: string[]): Promise<{ started: Started; stderr: () => string; stop: () => Promise<number> }> {
  const controller = new AbortController()
  let stdout = ''
  let stderr = ''
  const done = runCli(['emulator', '--port', '0', '--json', ...args], {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
    env: {},
    signal: controller.signal,
  })
  let exited: number | undefined
  void done.then((code) => (exited = code))
  while (!stdout.includes('\n') && exited === undefined) await new Promise((resolve) => setTimeout(resolve, 5))
  if (exited !== undefined) throw new Error(`the emulator exited ${exited}: ${stderr}`)
  return {
    started: JSON.parse(stdout) as Started,
    stderr: () => stderr,
    stop: () => {
      controller.abort()
      return done
    },
  }
}

async function runOnce(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = ''
  let stderr = ''
  const code = await runCli(['emulator', ...args], {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
    env: {},
  })
  return { code, stdout, stderr }
}

describe('voot-guard emulator --dialect', () => {
  it('openconext: serves at the root, says so, and its tokens read OpenConext answers', async () => {
    const { started, stop } = await startCli(['--dialect', 'openconext'])
    try {
      expect(started.dialect).toBe('openconext')
      expect(started.baseUrl).toBe(started.authUrl)
      expect(started.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
      const res = await fetch(`${started.baseUrl}/me/groups/${encodeURIComponent(READING_CLUB_GROUP_ID)}`, {
        headers: { authorization: `Bearer ${started.tokens['carol']}` },
      })
      expect(res.status).toBe(200)
      expect(await res.json()).toMatchObject({ id: READING_CLUB_GROUP_ID, sourceID: 'SURFteams', membership: { basic: 'manager' } })
      // Nothing under /groups in this dialect.
      expect(
        (await fetch(`${started.authUrl}/groups/me/groups`, { headers: { authorization: `Bearer ${started.tokens['carol']}` } })).status,
      ).toBe(404)
    } finally {
      expect(await stop()).toBe(0)
    }
  })

  it('dataporten is the default, and can be named', async () => {
    for (const args of [[], ['--dialect', 'dataporten']]) {
      const { started, stop } = await startCli(args)
      try {
        expect(started.dialect).toBe('dataporten')
        expect(started.baseUrl).toBe(`${started.authUrl}/groups`)
      } finally {
        expect(await stop()).toBe(0)
      }
    }
  })

  it('names the dialect in the readable guide', async () => {
    const controller = new AbortController()
    let stdout = ''
    const done = runCli(['emulator', '--port', '0', '--dialect', 'openconext'], {
      stdout: { write: (text: string) => (stdout += text) },
      stderr: { write: () => true },
      env: {},
      signal: controller.signal,
    })
    while (!stdout.includes('Stop with Ctrl-C')) await new Promise((resolve) => setTimeout(resolve, 5))
    controller.abort()
    expect(await done).toBe(0)
    expect(stdout).toMatch(/dialect\s+openconext/)
    expect(stdout).toMatch(/base URL\s+http:\/\/127\.0\.0\.1:\d+ /)
  })

  it('refuses an unknown dialect with exit code 2, naming the choices', async () => {
    const result = await runOnce(['--port', '0', '--dialect', 'surf'])
    expect(result.code).toBe(2)
    expect(result.stderr).toMatch(/--dialect must be one of dataporten, openconext/)
  })

  it('lists --dialect in --help', async () => {
    const result = await runOnce(['--help'])
    expect(result.code).toBe(0)
    expect(result.stdout).toMatch(/--dialect D\s+the service to play: dataporten \(default/)
    expect(result.stdout).not.toMatch(/\/v1\/groups/)
  })
})

describe('voot-guard emulator --host', () => {
  it('warns on stderr before binding a host that is not loopback (here one that then fails to bind)', async () => {
    // 192.0.2.1 is TEST-NET-1 (RFC 5737): never an address of this machine, so nothing listens on it.
    const result = await runOnce(['--port', '0', '--host', '192.0.2.1', '--json'])
    expect(result.stderr).toContain(exposedHostWarning('192.0.2.1'))
    expect(result.stderr).toMatch(/not a loopback address\. Anyone who can reach it gets tokens/)
    expect(result.code).toBe(2)
    // stdout stays one JSON document (the error), the warning went to stderr only.
    expect(result.stdout).not.toContain('warning')
  })

  it('says nothing for a loopback host', async () => {
    const { stderr, stop } = await startCli(['--host', '127.0.0.1'])
    expect(await stop()).toBe(0)
    expect(stderr()).toBe('')
  })

  it.each([
    ['127.0.0.1', true],
    ['127.0.0.53', true],
    ['localhost', true],
    ['LOCALHOST', true],
    ['::1', true],
    ['[::1]', true],
    ['0:0:0:0:0:0:0:1', true],
    ['0.0.0.0', false],
    ['::', false],
    ['192.168.1.10', false],
    ['10.0.0.1', false],
    ['emulator.example.org', false],
    ['localhost.example.org', false],
    ['not a host', false],
  ])('isLoopbackListenHost(%j) is %s', (host, loopback) => {
    expect(isLoopbackListenHost(host)).toBe(loopback)
  })
})
