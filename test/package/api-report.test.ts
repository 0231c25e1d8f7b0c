import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { beforeAll, describe, expect, it } from 'vitest'

/** What scripts/api-report.mjs exports: the same functions `npm run api:check` runs. */
interface ApiReportScript {
  generate(): Promise<Map<string, string>>
  readCommitted(dir?: string): Map<string, string>
  compareReports(committed: Map<string, string>, generated: Map<string, string>): string
}

const root = fileURLToPath(new URL('../..', import.meta.url))
// A computed specifier: the script is plain JavaScript without a declaration file.
const scriptUrl = new URL('../../scripts/api-report.mjs', import.meta.url).href

describe('API report (api/*.api.md)', () => {
  let script: ApiReportScript
  let generated: Map<string, string>

  beforeAll(async () => {
    script = (await import(scriptUrl)) as ApiReportScript
    // One TypeScript program for every entry point: the slow part, done once.
    generated = await script.generate()
    // About 8 s on a quiet machine; the margin is for a full suite on two shared cores.
  }, 60_000)

  it('matches the public surface of the source; run `npm run api:report` when the change is intended', () => {
    expect(script.compareReports(script.readCommitted(), generated)).toBe('')
  })

  it('has one report per subpath of package.json exports, with no path of this machine in it', () => {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
      exports: Record<string, unknown>
    }
    const subpaths = Object.entries(pkg.exports).filter(([, entry]) => typeof entry === 'object')
    expect(generated.size).toBe(subpaths.length)
    expect([...generated.keys()]).toContain('voot-guard.api.md')
    expect([...generated.keys()]).toContain('voot-guard-express.api.md')
    for (const text of generated.values()) expect(text).not.toContain(root)
  })

  it('names the changed subpath and symbol, with the lines that differ', () => {
    const express = generated.get('voot-guard-express.api.md') ?? ''
    expect(express).toContain('function createGuard(options: ExpressGuardOptions): ExpressGuard')
    // The committed file as it would be before a change: an older signature, one export fewer.
    const older = new Map(generated)
    older.set(
      'voot-guard-express.api.md',
      express
        .replace('function createGuard(options: ExpressGuardOptions): ExpressGuard', 'function createGuard(): ExpressGuard')
        .replace(/## `ExpressGuardOptions`[^#]*/, ''),
    )
    older.delete('voot-guard-koa.api.md')

    const message = script.compareReports(older, generated)
    expect(message.split('\n')).toEqual(
      expect.arrayContaining([
        'api/voot-guard-express.api.md: the public surface changed',
        '  added: ExpressGuardOptions',
        '  changed: createGuard',
        '    - function createGuard(): ExpressGuard',
        '    + function createGuard(options: ExpressGuardOptions): ExpressGuard',
        'api/voot-guard-koa.api.md: missing (a new entry point)',
        'If the change is intended, run `npm run api:report` and commit api/ with it.',
      ]),
    )
    expect(message).not.toContain('voot-guard.api.md:')
  })
})
