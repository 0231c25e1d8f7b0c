/**
 * `npm start` with the emulator's OpenConext dialect (`startDemo({ dialect })`, which the
 * `--dialect` argument sets): the Express example asks an OpenConext-style service at the
 * root, for its URN groups. Every line of that guide is checked, for each framework, in
 * test/demo/frameworks.test.ts; here, what the emulator answers the app.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startDemo, type Demo } from '../../demo/start.js'
import { PROJECT_BOARD_GROUP_ID, READING_CLUB_GROUP_ID } from '../../testing/index.js'

let demo: Demo

beforeAll(async () => {
  demo = await startDemo({ port: 0, emulatorPort: 0, print: () => {}, dialect: 'openconext' })
})
afterAll(async () => {
  await demo.close()
})

describe('startDemo({ dialect: "openconext" })', () => {
  it('runs the emulator in that dialect, at the root', () => {
    expect(demo.emulator.dialect).toBe('openconext')
    expect(demo.emulator.baseUrl).toBe(demo.emulator.authUrl)
    expect(demo.guide).toContain(demo.emulator.baseUrl)
  })

  it('the example app reads the OpenConext answers through the guard', async () => {
    const res = await fetch(`${demo.appUrl}/api/me`, { headers: { authorization: `Bearer ${demo.tokens['carol']}` } })
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({
      groups: [
        { id: READING_CLUB_GROUP_ID, role: 'manager' },
        { id: PROJECT_BOARD_GROUP_ID, role: 'manager' },
      ],
    })
    expect(demo.emulator.count('/me/groups')).toBe(1)
  })

  it('refuses an unknown dialect, naming the option', async () => {
    await expect(startDemo({ port: 0, emulatorPort: 0, print: () => {}, dialect: 'nope' as never })).rejects.toThrow(/dialect/)
  })
})
