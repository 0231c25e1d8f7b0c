/**
 * `npm start` as a person runs it: the demo in a child process that prints the guide,
 * serves the requests it shows, and stops cleanly on Ctrl-C.
 *
 * The child is the script's own command (`node --env-file=demo/tsx.env --import tsx
 * demo/start.ts`, run with this Node), without the tsx
 * launcher process: that launcher relays Ctrl-C to its child and, when the child takes more
 * than 30 ms to acknowledge it (a loaded CI machine), kills it and exits 130, which would
 * make this test flaky without saying anything about the demo.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { request } from 'undici'
import { afterEach, describe, expect, it } from 'vitest'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
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

const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { scripts: Record<string, string> }
/** `npm start`'s arguments to node. */
const START_ARGUMENTS = (manifest.scripts.start ?? '').split(' ').slice(1)

describe('npm start', () => {
  it('runs demo/start.ts with tsx', () => {
    expect(manifest.scripts.start).toMatch(/^node (--env-file=\S+ )?--import tsx demo\/start\.ts$/)
  })

  it.each([
    ['the Express example', []],
    // Nest's legacy decorators need the tsconfig that demo/tsx.env names: only the script's
    // own command shows that it is found.
    ['the NestJS example', ['--framework', 'nestjs']],
  ])('prints the guide, serves its curl lines, and exits cleanly on Ctrl-C (%s)', async (_name, extra) => {
    // Its own process group, like a terminal's foreground job: Ctrl-C signals the whole group.
    const started = spawn(process.execPath, [...START_ARGUMENTS, ...extra], {
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
      if (Date.now() > deadline || started.exitCode !== null) throw new Error(`the guide did not appear:\n${output}`)
      await new Promise((resolve) => setTimeout(resolve, 25))
    }
    const appUrl = /^ {2}app\s+(http:\/\/127\.0\.0\.1:\d+)$/m.exec(output)?.[1]
    const alice = /# alice is an employee[^\n]*\n\s+curl -i -H 'Authorization: Bearer ([\w-]+)' (\S+)/.exec(output)
    expect(appUrl).toBeDefined()
    expect(alice?.[2]).toBe(`${appUrl}/api/staff`)
    const allowed = await request(alice?.[2] ?? '', { headers: { authorization: `Bearer ${alice?.[1]}` } })
    expect(allowed.statusCode).toBe(200)
    expect(await allowed.body.json()).toMatchObject({ message: 'Hello, colleague' })
    const anonymous = await request(`${appUrl}/api/staff`)
    await anonymous.body.dump()
    expect(anonymous.statusCode).toBe(401)

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
    await expect(request(`${appUrl}/api/me`)).rejects.toThrow()
    // Nothing of the group is left behind: no orphaned tsx or node process.
    // (tsx's esbuild service leaves when its parent does; on a loaded machine that takes a
    // moment, so the check waits for it rather than looking once.)
    const gone = Date.now() + 5_000
    while (groupAlive(started.pid ?? 0) && Date.now() < gone) await new Promise((resolve) => setTimeout(resolve, 50))
    expect(groupAlive(started.pid ?? 0)).toBe(false)
  })
})
