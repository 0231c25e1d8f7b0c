/**
 * The gate demo (demo/gate.ts, `npm start -- --gate`): every curl line it prints answers
 * as printed, run as the shell command itself when curl is installed, else replayed from
 * its data.
 */
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startDemoGate, type DemoGate } from '../../demo/gate.js'
import { send } from './support/raw-request.js'

const run = promisify(execFile)
let demo: DemoGate
let haveCurl = false

beforeAll(async () => {
  demo = await startDemoGate({ port: 0 })
  haveCurl = await run('curl', ['--version']).then(
    () => true,
    () => false,
  )
}, 30_000)

afterAll(async () => {
  await demo?.close()
})

describe('the gate demo', () => {
  it('prints every line with its description', () => {
    expect(demo.guide).toContain(demo.gateUrl)
    for (const line of demo.curlLines) expect(demo.guide).toContain(`  # ${line.description}\n  ${line.command}\n`)
    expect(new Set(demo.curlLines.map((line) => line.expectedStatus))).toEqual(new Set([200, 302, 401, 403, 503]))
  })

  it('answers every line as printed', async () => {
    for (const line of demo.curlLines) {
      let status: number
      let user: string | undefined
      if (haveCurl) {
        const { stdout } = await run('sh', ['-c', `${line.command} -s -o /dev/null -D -`])
        status = Number(/^HTTP\/1\.1 (\d{3})/.exec(stdout)?.[1])
        user = /^x-voot-user: ?(.*?)\r?$/im.exec(stdout)?.[1]
      } else {
        const url = new URL(line.url)
        const answer = await send(url.origin, `${url.pathname}${url.search}`, { method: line.method, headers: { ...line.headers } })
        status = answer.status
        user = answer.headers['x-voot-user'] as string | undefined
      }
      expect(status, line.description).toBe(line.expectedStatus)
      if (line.expectedUser !== undefined) expect(user, line.description).toBe(line.expectedUser)
    }
  })
})
