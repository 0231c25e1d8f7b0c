/**
 * `npm start -- --services feide,openconext` as a person runs it: the demo in a child
 * process (the script's own command, as test/demo/demo-process.ts explains) prints its
 * story, and every curl line of it gets the status its comment promises over real HTTP: a
 * Feide admin 200, a SURFconext admin 200, a plain member 403, and the two 401s of a token
 * whose service is not named or named wrongly. Ctrl-C stops it cleanly.
 */
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { request } from 'undici'
import { afterEach, describe, expect, it } from 'vitest'
import { PROJECT_BOARD_GROUP_ID } from '../../testing/index.js'
import { startDemoProcess, stopDemoProcess, type DemoProcess } from './demo-process.js'
import { curlAvailable, parseCurl, pasteEnvironment } from './printed-lines.js'

const run = promisify(execFile)
let demo: DemoProcess | undefined

afterEach(() => {
  // Only the process group this file started, and only if a test left it running.
  stopDemoProcess(demo?.child)
  demo = undefined
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
    const started = await startDemoProcess(['--services', 'feide,openconext'])
    demo = started
    const output = started.output()
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

    const { code, signal } = await started.interrupt()
    expect({ code, signal }).toEqual({ code: 0, signal: null })
    expect(started.output()).toMatch(/Demo stopped\.\n/)
    expect(started.output()).not.toMatch(/Error|ERR_/)
  })
})
