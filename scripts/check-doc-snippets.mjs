// Type-checks every ```ts code block in README.md and docs/**/*.md against the repo's
// sources (the `voot-guard/...` paths of tsconfig.json), so the docs cannot drift from the API.
//
// - Each block becomes a module of its own in a temp folder under .scratch/ and is compiled
//   with the repo's strict tsconfig. A block may use two names without declaring them:
//   `baseUrl` (string) and `token` (string); everything else it imports or declares.
// - A block that names an example file on its first line (`// examples/...`) is an excerpt:
//   test/package/readme.test.ts checks that its lines are lines of that example, and the examples
//   are type-checked and run by test/package/examples.test.ts. It is counted, not compiled here.
// - ```ts ignore opts a block out. Use it only for fragments that cannot stand alone (a
//   signature listing, a line of a larger program); the count of ignored blocks is printed.
//
//   node scripts/check-doc-snippets.mjs [--json]
import { execFileSync } from 'node:child_process'
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { join, relative } from 'node:path'

const root = new URL('..', import.meta.url).pathname
const json = process.argv.includes('--json')

async function markdownFiles() {
  const files = ['README.md']
  const walk = async (dir) => {
    let entries = []
    try {
      entries = await readdir(join(root, dir), { withFileTypes: true })
    } catch {
      return
    }
    for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
      const path = `${dir}/${entry.name}`
      if (entry.isDirectory()) await walk(path)
      else if (entry.name.endsWith('.md')) files.push(path)
    }
  }
  await walk('docs')
  return files
}

/** The fenced blocks of a Markdown text whose info string starts with `ts`. */
function tsBlocks(text) {
  const blocks = []
  const lines = text.split('\n')
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(`{3,}|~{3,})\s*(ts|typescript)\b(.*)$/.exec(lines[i])
    if (open === null) continue
    const fence = open[2]
    const body = []
    let j = i + 1
    while (j < lines.length && !lines[j].trimStart().startsWith(fence)) body.push(lines[j++])
    blocks.push({ line: i + 2, info: open[4].trim(), code: body.join('\n') })
    i = j
  }
  return blocks
}

const scratch = join(root, '.scratch', `doc-snippets-${process.pid}`)
const counts = { checked: 0, excerpts: 0, ignored: 0 }
const where = new Map()
try {
  await mkdir(scratch, { recursive: true })
  for (const file of await markdownFiles()) {
    const blocks = tsBlocks(await readFile(join(root, file), 'utf8'))
    for (const block of blocks) {
      if (/^ignore\b/.test(block.info)) counts.ignored++
      else if (/^\/\/ examples\//.test(block.code)) counts.excerpts++
      else {
        const name = `snippet-${String(where.size + 1).padStart(3, '0')}.ts`
        where.set(name, { file, line: block.line })
        // `export {}` last, so line numbers match the Markdown and every block is a module.
        await writeFile(join(scratch, name), `${block.code}\nexport {}\n`)
        counts.checked++
      }
    }
  }
  await writeFile(join(scratch, 'free-names.d.ts'), 'declare const baseUrl: string\ndeclare const token: string\n')
  await writeFile(
    join(scratch, 'tsconfig.json'),
    JSON.stringify({
      extends: relative(scratch, join(root, 'tsconfig.json')),
      compilerOptions: { noEmit: true, noUnusedLocals: false, noUnusedParameters: false },
      include: ['*.ts'],
    }),
  )
  let output = ''
  if (counts.checked > 0) {
    try {
      execFileSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(scratch, 'tsconfig.json')], {
        cwd: root,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
      })
    } catch (error) {
      output = `${error.stdout ?? ''}${error.stderr ?? ''}` || String(error)
    }
  }
  // Point each error at the Markdown line it comes from.
  const errors = output
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) =>
      line.replace(/^(?:.*[\\/])?(snippet-\d+\.ts)\((\d+),(\d+)\)/, (match, name, row, column) => {
        const at = where.get(name)
        return at === undefined ? match : `${at.file}:${at.line + Number(row) - 1}:${column}`
      }),
    )
  if (json) console.log(JSON.stringify({ ...counts, errors }))
  else {
    for (const error of errors) console.error(error)
    console.log(
      `doc snippets: ${counts.checked} type-checked, ${counts.excerpts} example excerpts (checked by test/package/readme.test.ts), ${counts.ignored} marked ignore` +
        (errors.length > 0 ? `; ${errors.length} error lines` : ''),
    )
  }
  process.exitCode = errors.length > 0 ? 1 : 0
} finally {
  await rm(scratch, { recursive: true, force: true })
}
