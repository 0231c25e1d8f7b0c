/**
 * `npm start -- --services feide,openconext` as a person runs it: the demo in a child
 * process (the script's own command, as test/demo/process.test.ts explains) prints its
 * story, and every curl line of it gets the status its comment promises over real HTTP: a
 * Feide admin 200, a SURFconext admin 200, a plain member 403, and the two 401s of a token
 * whose service is not named or named wrongly. Ctrl-C stops it cleanly.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { request } from 'undici'
import { afterEach, describe, expect, it } from 'vitest'
import { PROJECT_BOARD_GROUP_ID } from '../../testing/index.js'
import { curlAvailable, parseCurl, pasteEnvironment } from './printed-lines.js'

const run = promisify(execFile)
const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { scripts: Record<string, string> }
/** `npm start`'s arguments to node. */
const START_ARGUMENTS = (manifest.scripts.start ?? '').split(' ').slice(1)
let child: ChildProcess | undefined

function groupAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0)
    return true
  } catch {
    return false
  }
}

afterEach(() => {
  // Only the process group this file started, and only if a test left it running.
  if (child?.pid !== undefined && groupAlive(child.pid)) process.kill(-child.pid, 'SIGKILL')
  child = undefined
})

/** The status of a printed curl line: run by the shell when curl is installed, else replayed. */
async function statusOf(command: string): Promise<{ status: number; body: string }> {
  if (await curlAvailable()) {
    const { stdout } = await run('sh', ['-c', `${command} -s`], { env: pasteEnvironment() })
    const [head = '', body = ''] = stdout.split(/\r?\n\r?\n/)
    return { status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]), body }
  }
  const { url, headers } = parseCurl(command)
  const answer = await request(url, { headers })
  return { status: answer.statusCode, body: await answer.body.text() }
}

describe('npm start -- --services feide,openconext', () => {
  it('prints a story whose every curl line answers as it says (200, 200, 403, 401, 401), and stops on Ctrl-C', async () => {
    const started = spawn(process.execPath, [...START_ARGUMENTS, '--services', 'feide,openconext'], {
      cwd: ROOT,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    child = started
    let output = ''
    started.stdout?.setEncoding('utf8').on('data', (chunk: string) => (output += chunk))
    started.stderr?.setEncoding('utf8').on('data', (chunk: string) => (output += chunk))
    const exited = once(started, 'exit') as Promise<[number | null, NodeJS.Signals | null]>
    const deadline = Date.now() + 15_000
    while (!output.includes('Stop with Ctrl-C')) {
      if (Date.now() > deadline || started.exitCode !== null) throw new Error(`the story did not appear:\n${output}`)
      await new Promise((resolve) => setTimeout(resolve, 25))
    }

    const lines = [...output.matchAll(/^ {2}# (.*): (\d{3})\n {2}(curl .*)$/gm)].map(([, description = '', status, command = '']) => ({
      description,
      expected: Number(status),
      command,
    }))
    expect(lines.map((line) => line.expected)).toEqual([200, 200, 403, 401, 401])
    expect(lines[0]?.description).toMatch(/^alice at Feide/)
    expect(lines[1]?.description).toMatch(/^alice at SURFconext/)
    expect(lines[2]?.description).toMatch(/^bob at Feide/)
    for (const line of lines) {
      const { status, body } = await statusOf(line.command)
      expect(status, line.description).toBe(line.expected)
      if (line.description.startsWith('alice at SURFconext')) expect(JSON.parse(body)).toMatchObject({ groupId: PROJECT_BOARD_GROUP_ID })
    }
    // The console the story points to shows a section per service.
    const consoleUrl = /^ {2}console\s+(\S+)/m.exec(output)?.[1] ?? ''
    const page = await request(consoleUrl)
    const html = await page.body.text()
    expect(html).toContain('feide (dataporten)')
    expect(html).toContain('openconext (openconext)')

    process.kill(-(started.pid ?? 0), 'SIGINT')
    let timer: NodeJS.Timeout | undefined
    const [code, signal] = await Promise.race([
      exited,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no exit within 5 s of SIGINT:\n${output}`)), 5_000)
      }),
    ]).finally(() => clearTimeout(timer))
    expect({ code, signal }).toEqual({ code: 0, signal: null })
    expect(output).toMatch(/Demo stopped\.\n/)
    expect(output).not.toMatch(/Error|ERR_/)
  })
})
