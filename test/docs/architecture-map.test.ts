/**
 * ARCHITECTURE.md stays true: every file and folder it names exists, and every function or
 * method it names in code (`name(...)`) is declared in the package's sources. A rename or a
 * move that forgets the map fails here.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, normalize, relative } from 'node:path'
import { describe, expect, it } from 'vitest'

const root = new URL('../..', import.meta.url).pathname
const map = readFileSync(join(root, 'ARCHITECTURE.md'), 'utf8')

const SKIP = new Set(['node_modules', 'dist', '.git', '.scratch', 'coverage'])

function walk(dir: string, into: string[] = []): string[] {
  for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
    if (SKIP.has(entry.name) || entry.name.startsWith('.')) continue
    const path = dir === '' ? entry.name : `${dir}/${entry.name}`
    if (entry.isDirectory()) {
      into.push(`${path}/`)
      walk(path, into)
    } else {
      into.push(path)
    }
  }
  return into
}

const files = walk('')
const sourceFiles = files.filter((file) => file.endsWith('.ts') && !file.startsWith('test/') && !file.endsWith('.d.ts'))
const sources = sourceFiles.map((file) => readFileSync(join(root, file), 'utf8')).join('\n')

/** The inline code spans of a Markdown text, with the line each is on. */
function codeSpans(text: string): { span: string; line: number; row: string | undefined }[] {
  const spans: { span: string; line: number; row: string | undefined }[] = []
  let fenced = false
  text.split('\n').forEach((lineText, index) => {
    if (/^\s*```/.test(lineText)) fenced = !fenced
    if (fenced) return
    // A table row's first cell names the room its bare file names are in.
    const row = lineText.startsWith('|') ? /^\|\s*`([^`]+\/)`/.exec(lineText)?.[1] : undefined
    for (const match of lineText.matchAll(/`([^`]+)`/g)) spans.push({ span: match[1] as string, line: index + 1, row })
  })
  return spans
}

const PATH = /^[\w@.-]+(\/[\w.*<>-]+)*\/?$/
const FILE = /\.(ts|md|mjs|js|json|yaml|yml)$/

/** Whether a path named in the map exists: exactly from the root, in its row's room, or as the end of one path. */
function exists(path: string, room: string | undefined): boolean {
  const wanted = path.replace(/^\.\//, '')
  if (room !== undefined && !wanted.includes('/')) return files.includes(`${room}${wanted}`)
  if (files.includes(wanted)) return true
  return files.some((file) => file.endsWith(`/${wanted}`))
}

function isDeclared(name: string): boolean {
  const declaration = new RegExp(
    String.raw`(function\*?\s+${name}\b|(class|interface|type|const|let|var)\s+${name}\b|^\s*(readonly\s+|async\s+|static\s+|get\s+)*${name}\??\s*[(:<=]|\b${name}\s*:\s*\(|export\s*\{[^}]*\b${name}\b)`,
    'm',
  )
  return declaration.test(sources)
}

describe('ARCHITECTURE.md', () => {
  const spans = codeSpans(map)

  it('names only files and folders that exist', () => {
    const named = spans.filter(({ span }) => PATH.test(span) && (span.endsWith('/') || FILE.test(span)) && !span.includes('<'))
    expect(named.length).toBeGreaterThan(40)
    const missing = named.filter(({ span, row }) => !exists(span, row)).map(({ span, line }) => `line ${line}: ${span}`)
    expect(missing).toEqual([])
  })

  it('names only functions and methods that are declared in the sources', () => {
    // `name(...)`, the last name of `a.b`, and a camelCase name standing alone
    // (`createGuardFlow`); a lone lower-case word may be a value (`invalid`), not a name.
    const called = spans.flatMap(({ span, line }) => {
      const calls = [...span.matchAll(/([A-Za-z_$][\w$]*)\s*\(/g)].map((match) => match[1] as string)
      const dotted = /^[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$]*)+$/.test(span) && !FILE.test(span) ? [span.slice(span.lastIndexOf('.') + 1)] : []
      const named = /^[a-z][a-z0-9]*[A-Z][\w$]*$/.test(span) ? [span] : []
      return [...calls, ...dotted, ...named].map((name) => ({ name, line }))
    })
    expect(called.length).toBeGreaterThan(30)
    const missing = called.filter(({ name }) => !isDeclared(name)).map(({ name, line }) => `line ${line}: ${name}()`)
    expect(missing).toEqual([])
  })

  it('lists every source file of the core in its rooms table', () => {
    const listed = new Set<string>()
    for (const { span, row } of spans) {
      if (!FILE.test(span)) continue
      if (row !== undefined && !span.includes('/')) listed.add(`${row}${span}`)
      else listed.add(span)
    }
    const core = sourceFiles.filter((file) => file.startsWith('src/') && statSync(join(root, file)).isFile())
    const unlisted = core.filter((file) => !listed.has(file) && ![...listed].some((name) => file.endsWith(`/${name}`)))
    expect(unlisted.map((file) => relative(root, join(root, file)))).toEqual([])
  })

  it('keeps one entry point per layer: every adapter and the gate run createGuardFlow, and only the flow calls authorizeNow', () => {
    const text = (file: string): string => readFileSync(join(root, file), 'utf8')
    // Each adapter's folder, and the gate: the rooms that answer requests.
    const rooms = [...files.filter((file) => /^adapters\/[^/]+\/$/.test(file)), 'gate/']
    expect(rooms.length).toBeGreaterThanOrEqual(7)
    const withoutFlow = rooms.filter(
      (room) => !sourceFiles.some((file) => file.startsWith(room) && text(file).includes('createGuardFlow(')),
    )
    expect(withoutFlow).toEqual([])
    // Outside the guard core's room, the request flow is the one caller of `authorizeNow`
    // (comments and examples aside).
    const callers = sourceFiles.filter(
      (file) =>
        !file.startsWith('src/guard/') &&
        !file.startsWith('bench/') &&
        text(file)
          .split('\n')
          .some((line) => !/^\s*(\*|\/\/)/.test(line) && /\.authorizeNow\(/.test(line)),
    )
    expect(callers).toEqual([])
  })

  describe('the imports keep the house', () => {
    // Every relative import of every source file (tests, fixtures and built output aside).
    const code = sourceFiles.filter((file) => !file.startsWith('examples/') && !file.includes('/fixtures/'))
    const imports = new Map<string, string[]>()
    for (const file of code) {
      const text = readFileSync(join(root, file), 'utf8')
      const targets = [...text.matchAll(/(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)'/g)].map((match) =>
        normalize(join(dirname(file), match[1] as string)).replace(/\.js$/, '.ts'),
      )
      imports.set(
        file,
        targets.filter((target) => code.includes(target)),
      )
    }

    it('has no import circle', () => {
      const circles: string[] = []
      const state = new Map<string, 'open' | 'done'>()
      const visit = (file: string, path: string[]): void => {
        state.set(file, 'open')
        for (const next of imports.get(file) ?? []) {
          if (state.get(next) === 'open') circles.push([...path.slice(path.indexOf(next)), next].join(' -> '))
          else if (state.get(next) === undefined) visit(next, [...path, next])
        }
        state.set(file, 'done')
      }
      for (const file of imports.keys()) if (!state.has(file)) visit(file, [file])
      expect(circles).toEqual([])
    })

    it("keeps the gate's rooms in their order, each importing only the rooms before it", () => {
      const order = ['http', 'config', 'policy|session|ops', 'front', 'pages', 'sign-in', 'policy-tests', '']
      const rank = (file: string): number => {
        const room = /^gate\/([^/]+)\//.exec(file)?.[1] ?? ''
        return order.findIndex((names) => names.split('|').includes(room))
      }
      const gate = [...imports.keys()].filter((file) => file.startsWith('gate/'))
      expect(gate.filter((file) => rank(file) < 0)).toEqual([])
      expect(gate.filter((file) => !file.slice('gate/'.length).includes('/')).length).toBeLessThanOrEqual(12)
      const upwards = gate.flatMap((file) =>
        (imports.get(file) ?? [])
          .filter((target) => target.startsWith('gate/') && rank(target) > rank(file))
          .map((target) => `${file} -> ${target}`),
      )
      expect(upwards).toEqual([])
    })

    it('lets the side rooms reach the core, the gate and the emulator through their faces only', () => {
      const faces = [
        'src/index.ts',
        'src/adapter-kit.ts',
        'src/internal.ts',
        'gate/index.ts',
        'gate/internal.ts',
        'testing/index.ts',
        'testing/internal.ts',
      ]
      const roomOf = (file: string): string => file.split('/')[0] as string
      // The package's rooms; benchmarks measure the core's insides on purpose, as tests do.
      const rooms = ['adapters', 'redis', 'otel', 'oauth', 'testing', 'gate', 'cli', 'bin', 'demo']
      const through = [...imports.entries()]
        .filter(([file]) => rooms.includes(roomOf(file)))
        .flatMap(([file, targets]) =>
          targets
            .filter((target) => ['src', 'gate', 'testing'].includes(roomOf(target)) && roomOf(target) !== roomOf(file))
            .filter((target) => !faces.includes(target))
            .map((target) => `${file} -> ${target}`),
        )
      expect(through).toEqual([])
    })
  })
})
