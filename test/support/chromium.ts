/**
 * Where the browser tests find Chromium: `CHROMIUM_PATH` when set, else the usual install
 * locations on Debian/Ubuntu and macOS, else the browser Playwright downloaded for itself
 * (`npx playwright install chromium`) when it is there.
 *
 * Outside CI a missing browser makes the browser tests skip, with {@link ChromiumLookup.advice}
 * as the reason; in CI (`CI=true`) it is a failure, so a CI machine without a browser can
 * never pass by skipping them.
 */
import { existsSync } from 'node:fs'
import { chromium } from 'playwright-core'
import type { TestContext } from 'vitest'

/** The usual places, in order of preference. */
export const CHROMIUM_LOCATIONS: readonly string[] = [
  '/usr/bin/chromium', // Debian
  '/usr/bin/chromium-browser', // Ubuntu, Alpine
  '/snap/bin/chromium',
  '/usr/bin/google-chrome-stable',
  '/usr/bin/google-chrome',
  '/Applications/Chromium.app/Contents/MacOS/Chromium',
  '/Applications/Google Chrome.app/Contents/MacOS/Google Chrome',
]

/** What {@link findChromium} found: a path, or why not and how to install one. */
export type ChromiumLookup = { readonly found: true; readonly executablePath: string } | { readonly found: false; readonly advice: string }

/** Seams for the lookup's own test: the environment, the file system and Playwright. */
export interface FindChromiumOptions {
  readonly env?: NodeJS.ProcessEnv
  readonly exists?: (path: string) => boolean
  readonly playwrightPath?: () => string | undefined
}

function ownPlaywrightPath(): string | undefined {
  try {
    return chromium.executablePath()
  } catch {
    return undefined
  }
}

/**
 * Finds a Chromium to drive.
 *
 * @example
 * ```ts
 * const lookup = findChromium()
 * if (lookup.found) await chromium.launch({ executablePath: lookup.executablePath })
 * ```
 */
export function findChromium(options: FindChromiumOptions = {}): ChromiumLookup {
  const env = options.env ?? process.env
  const exists = options.exists ?? existsSync
  const fromEnv = env['CHROMIUM_PATH']
  if (fromEnv !== undefined && fromEnv !== '') {
    // An explicit choice that does not exist is a mistake to report, not a cue to guess.
    return exists(fromEnv)
      ? { found: true, executablePath: fromEnv }
      : { found: false, advice: `CHROMIUM_PATH is ${JSON.stringify(fromEnv)}, but there is no file there` }
  }
  const playwright = (options.playwrightPath ?? ownPlaywrightPath)()
  const candidates = playwright === undefined ? CHROMIUM_LOCATIONS : [...CHROMIUM_LOCATIONS, playwright]
  const executablePath = candidates.find((path) => exists(path))
  if (executablePath !== undefined) return { found: true, executablePath }
  return {
    found: false,
    advice:
      'no Chromium found (looked at CHROMIUM_PATH, ' +
      `${candidates.join(', ')}). Install one: "apt-get install chromium" (Debian), ` +
      '"apt-get install chromium-browser" (Ubuntu), "brew install --cask chromium" (macOS) or ' +
      '"npx playwright install chromium"; or set CHROMIUM_PATH to a Chrome or Chromium binary',
  }
}

/** True when running in CI (`CI` set to anything but an empty string, `0` or `false`). */
export function isCI(env: NodeJS.ProcessEnv = process.env): boolean {
  const value = env['CI']
  return value !== undefined && value !== '' && value !== '0' && value.toLowerCase() !== 'false'
}

/**
 * The flags every browser test launches Chromium with: headless, and without the background
 * connections a closed network refuses (updates, sync, QUIC).
 */
export const CHROMIUM_ARGS: readonly string[] = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
]

/**
 * For a test that drives `lookup`'s Chromium: outside CI, skips it (with the reason printed)
 * when there is none; in CI (`CI=true`), fails it.
 */
export function needChromium(ctx: TestContext, lookup: ChromiumLookup): void {
  if (lookup.found) return
  if (isCI()) throw new Error(`CI=true, and ${lookup.advice}`)
  const reason = `browser test skipped: ${lookup.advice}`
  console.warn(reason)
  ctx.skip(reason)
}
