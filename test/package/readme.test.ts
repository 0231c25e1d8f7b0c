/**
 * The README's code is the examples' code: every TypeScript block in README.md that names
 * an example file on its first line (`// examples/...`) must consist of lines of that file,
 * in order and indented as there (lines that are only `// …` mark an omission); between two
 * omissions the lines are consecutive lines of the file and whole statements (no bracket
 * left open). The examples themselves are type-checked and run by
 * test/package/examples.test.ts, so the README cannot drift from working code.
 *
 * Every other ```ts block in README.md and docs/ is type-checked against the sources by
 * scripts/check-doc-snippets.mjs (```ts ignore opts a fragment out).
 */
import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'

const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8')
const OMISSION = '// …'
const blocks = [...readme.matchAll(/```ts\n\/\/ (examples\/[^\s]+)[^\n]*\n([\s\S]*?)```/g)].map((m) => ({
  file: m[1] ?? '',
  lines: (m[2] ?? '').split('\n').filter((l) => l.trim() !== ''),
}))

/** The runs of lines between omission marks. */
function segments(lines: readonly string[]): string[][] {
  const runs: string[][] = [[]]
  for (const line of lines) {
    if (line.trim() === OMISSION) runs.push([])
    else runs[runs.length - 1]?.push(line)
  }
  return runs.filter((run) => run.length > 0)
}

/** Opening minus closing brackets of `code`, outside strings, template literals and line comments. */
function openBrackets(code: string): number {
  let depth = 0
  let quote: string | undefined
  for (let i = 0; i < code.length; i++) {
    const char = code[i] ?? ''
    if (quote !== undefined) {
      if (char === '\\') i++
      else if (char === quote) quote = undefined
    } else if (char === "'" || char === '"' || char === '`') quote = char
    else if (char === '/' && code[i + 1] === '/') i = code.indexOf('\n', i) === -1 ? code.length : code.indexOf('\n', i)
    else if ('([{'.includes(char)) depth++
    else if (')]}'.includes(char)) depth--
  }
  return depth
}

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

  it.each(blocks.map((b) => [b.file, b] as const))(
    '%s: every line comes from the example, in order, indented as there, in whole statements',
    (_file, block) => {
      const source = readFileSync(new URL(`../../${block.file}`, import.meta.url), 'utf8').split('\n')
      let at = 0
      for (const run of segments(block.lines)) {
        const found = source.indexOf(run[0] ?? '', at)
        expect(found, `README line not found in order (with its indent) in ${block.file}: ${run[0]}`).toBeGreaterThanOrEqual(0)
        // Without a mark, nothing is left out: the run is consecutive lines of the file.
        expect(run, `README lines of ${block.file} leave lines out without a ${OMISSION}`).toEqual(source.slice(found, found + run.length))
        expect(openBrackets(run.join('\n')), `README excerpt of ${block.file} stops inside a statement:\n${run.join('\n')}`).toBe(0)
        at = found + run.length
      }
    },
  )

  it('an excerpt that stops on an open block, or loses its indent, is caught', () => {
    expect(openBrackets("  app.get('/x', (req, res) => {\n    res.json({ a: '}' })")).toBe(2)
    expect(openBrackets("  app.get('/x', (req, res) => {\n    res.json({ a: '}' }) // }\n  })")).toBe(0)
    expect(segments(['a', '  // …', 'b', 'c'])).toEqual([['a'], ['b', 'c']])
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
