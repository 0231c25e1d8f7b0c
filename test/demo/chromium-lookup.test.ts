/**
 * How the browser tests find Chromium (test/support/chromium.ts): an explicit
 * `CHROMIUM_PATH` wins (and a wrong one is reported, not guessed around), then the usual
 * locations, then Playwright's own browser; the advice for a missing one says how to install it.
 */
import { describe, expect, it } from 'vitest'
import { CHROMIUM_LOCATIONS, findChromium, isCI } from '../support/chromium.js'

const PLAYWRIGHT = '/home/dev/.cache/ms-playwright/chromium-1/chrome-linux64/chrome'
const onDisk =
  (...paths: string[]) =>
  (path: string) =>
    paths.includes(path)

describe('findChromium', () => {
  it('takes CHROMIUM_PATH first', () => {
    const lookup = findChromium({
      env: { CHROMIUM_PATH: '/opt/chrome' },
      exists: onDisk('/opt/chrome', '/usr/bin/chromium'),
      playwrightPath: () => PLAYWRIGHT,
    })
    expect(lookup).toEqual({ found: true, executablePath: '/opt/chrome' })
  })

  it('reports a CHROMIUM_PATH with nothing there instead of falling back', () => {
    const lookup = findChromium({ env: { CHROMIUM_PATH: '/opt/nothing' }, exists: onDisk('/usr/bin/chromium') })
    expect(lookup).toEqual({ found: false, advice: expect.stringContaining('CHROMIUM_PATH is "/opt/nothing"') })
  })

  it('tries the usual locations in order', () => {
    expect(
      findChromium({ env: {}, exists: onDisk('/usr/bin/chromium-browser', '/usr/bin/google-chrome'), playwrightPath: () => undefined }),
    ).toEqual({
      found: true,
      executablePath: '/usr/bin/chromium-browser',
    })
    const mac = '/Applications/Google Chrome.app/Contents/MacOS/Google Chrome'
    expect(CHROMIUM_LOCATIONS).toContain(mac)
    expect(findChromium({ env: {}, exists: onDisk(mac), playwrightPath: () => undefined })).toEqual({ found: true, executablePath: mac })
  })

  it("falls back to Playwright's own browser when it is installed", () => {
    expect(findChromium({ env: {}, exists: onDisk(PLAYWRIGHT), playwrightPath: () => PLAYWRIGHT })).toEqual({
      found: true,
      executablePath: PLAYWRIGHT,
    })
    expect(findChromium({ env: {}, exists: onDisk(), playwrightPath: () => PLAYWRIGHT }).found).toBe(false)
  })

  it('says how to install a browser when there is none', () => {
    const lookup = findChromium({ env: { CHROMIUM_PATH: '' }, exists: onDisk(), playwrightPath: () => undefined })
    expect(lookup.found).toBe(false)
    if (lookup.found) return
    expect(lookup.advice).toContain('apt-get install chromium')
    expect(lookup.advice).toContain('npx playwright install chromium')
    expect(lookup.advice).toContain('CHROMIUM_PATH')
  })
})

describe('isCI', () => {
  it.each([
    [{ CI: 'true' }, true],
    [{ CI: '1' }, true],
    [{ CI: 'false' }, false],
    [{ CI: '0' }, false],
    [{ CI: '' }, false],
    [{}, false],
  ])('%j -> %s', (env, expected) => {
    expect(isCI(env)).toBe(expected)
  })
})
