/**
 * `npm start` as a person runs it: the demo in a child process that prints the guide,
 * serves the requests it shows, and stops cleanly on Ctrl-C.
 *
 * The child is started as test/demo/demo-process.ts says: the script's own command, without
 * the tsx launcher process (it says why).
 */
import { request } from 'undici'
import { afterEach, describe, expect, it } from 'vitest'
import { groupAlive, MANIFEST as manifest, startDemoProcess, stopDemoProcess, type DemoProcess } from './demo-process.js'

let demo: DemoProcess | undefined

afterEach(() => {
  // Only the process group this file started, and only if a test left it running.
  stopDemoProcess(demo?.child)
  demo = undefined
})

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
    const started = await startDemoProcess(extra)
    demo = started
    const output = started.output()
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

    const { code, signal } = await started.interrupt()
    expect({ code, signal }).toEqual({ code: 0, signal: null })
    expect(started.output()).toMatch(/Demo stopped\.\n/)
    expect(started.output()).not.toMatch(/Error|ERR_/)
    await expect(request(`${appUrl}/api/me`)).rejects.toThrow()
    // Nothing of the group is left behind: no orphaned tsx or node process.
    // (tsx's esbuild service leaves when its parent does; on a loaded machine that takes a
    // moment, so the check waits for it rather than looking once.)
    const gone = Date.now() + 5_000
    while (groupAlive(started.child.pid ?? 0) && Date.now() < gone) await new Promise((resolve) => setTimeout(resolve, 50))
    expect(groupAlive(started.child.pid ?? 0)).toBe(false)
  })
})
