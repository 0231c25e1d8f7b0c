/**
 * The README's code is the examples' code: every TypeScript block in README.md that names
 * an example file on its first line (`// examples/...`) must consist of lines of that file,
 * in order (lines that are only `// …` mark an omission). The examples themselves are
 * type-checked and run by test/package/examples.test.ts, so the README cannot drift from working code.
 *
 * Every other ```ts block in README.md and docs/ is type-checked against the sources by
 * scripts/check-doc-snippets.mjs (```ts ignore opts a fragment out).
 */
import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'

const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8')
const blocks = [...readme.matchAll(/```ts\n\/\/ (examples\/[^\s]+)[^\n]*\n([\s\S]*?)```/g)].map((m) => ({
  file: m[1] ?? '',
  lines: (m[2] ?? '').split('\n').map((l) => l.trim()).filter((l) => l !== '' && l !== '// …'),
}))

describe('README code blocks', () => {
  it('exist for every framework and a plain service', () => {
    expect(blocks.map((b) => b.file).sort()).toEqual([
      'examples/express/app.ts',
      'examples/fastify/app.ts',
      'examples/fetch/app.ts',
      'examples/hono/app.ts',
      'examples/koa/app.ts',
      'examples/nestjs/app.ts',
      'examples/service/check.ts',
    ])
  })

  it.each(blocks.map((b) => [b.file, b] as const))('%s: every line comes from the example, in order', (_file, block) => {
    const source = readFileSync(new URL(`../../${block.file}`, import.meta.url), 'utf8').split('\n').map((l) => l.trim())
    let at = 0
    for (const line of block.lines) {
      const found = source.indexOf(line, at)
      expect(found, `README line not found in order in ${block.file}: ${line}`).toBeGreaterThanOrEqual(0)
      at = found + 1
    }
  })
})

describe('TypeScript blocks in README.md and docs/', () => {
  it('type-check against the sources', async () => {
    const script = new URL('../../scripts/check-doc-snippets.mjs', import.meta.url).pathname
    const { stdout } = await promisify(execFile)(process.execPath, [script, '--json']).catch((error: { stdout: string }) => error)
    const result = JSON.parse(stdout) as { checked: number; excerpts: number; ignored: number; errors: string[] }
    expect(result.errors).toEqual([])
    expect(result.checked).toBeGreaterThan(0)
  }, 120_000)
})
