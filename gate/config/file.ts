/**
 * Reading `gate.yaml` (or `.yml`, `.json`): the text parsed with the `yaml` package, which
 * knows where every key stands, so that each problem names its file, line, column and key.
 * A YAML error (an unquoted `*`, which YAML reads as an alias; a duplicate key; a tab) is a
 * problem like any other, and the rest of the file is still read and checked, so that one
 * run reports every problem. `${NAME}` in a string value is taken from the environment (a
 * missing variable is a problem, at its line). Values are substituted after parsing, so an
 * environment variable can never add keys or structure.
 *
 * @module
 */
import { readFile } from 'node:fs/promises'
import { extname } from 'node:path'
import { isAlias, isMap, isPair, isScalar, isSeq, LineCounter, parseDocument, type Document } from 'yaml'
import { formatConfigPath, type GateConfigPath, type GateConfigProblem } from './problem.js'

/**
 * A configuration file, read: its content (`undefined` when nothing could be read), the
 * problems found so far, and `place()`, which adds the file, line and column to problems
 * found later (by {@link checkGateConfig} or {@link createGate}) and leaves out those that
 * only repeat a problem already found here (a key whose variable is unset, a value that a
 * YAML error broke).
 *
 * @example
 * ```ts
 * const loaded = await loadGateConfig('gate.yaml', process.env)
 * const problems = [...loaded.problems, ...loaded.place(await checkGateConfig(loaded.config))]
 * ```
 */
export interface LoadedGateConfig {
  readonly file: string
  readonly config: unknown
  readonly problems: readonly GateConfigProblem[]
  place(problems: readonly GateConfigProblem[]): GateConfigProblem[]
}

const VARIABLE = /\$\$\{|\$\{([^}]*)\}/g
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/

type Located = { path: GateConfigPath; message: string; offset?: number; suggestion?: string }

/** Replaces `${NAME}` (and `$${` by a literal `${`) in every string of `value`, recording missing names. */
function substitute(
  value: unknown,
  env: Readonly<Record<string, string | undefined>>,
  path: (string | number)[],
  found: Located[],
): unknown {
  if (typeof value === 'string') {
    if (!value.includes('${')) return value
    return value.replace(VARIABLE, (match, name: string | undefined) => {
      if (match === '$${') return '${'
      if (name === undefined || !NAME.test(name)) {
        found.push({ path: [...path], message: `"${match}" is not a variable reference: use \${NAME} (letters, digits, _)` })
        return ''
      }
      const value = env[name]
      if (value === undefined) {
        found.push({ path: [...path], message: `the environment variable ${name} is not set` })
        return ''
      }
      return value
    })
  }
  if (Array.isArray(value)) return value.map((item, index) => substitute(item, env, [...path, index], found))
  if (typeof value === 'object' && value !== null) {
    const out: Record<string, unknown> = {}
    for (const [key, item] of Object.entries(value)) out[key] = substitute(item, env, [...path, key], found)
    return out
  }
  return value
}

function startOf(node: unknown): number | undefined {
  return (node as { range?: [number, number, number] } | null | undefined)?.range?.[0]
}

/**
 * The document's value as plain data, read node by node: an alias (YAML's `*name`, which an
 * unquoted `*.example.org` is) becomes a problem at its place and no value, never a
 * resolved copy of another part of the file; of a repeated key, the first is kept (the
 * repeat is a problem already, from the parser).
 */
function valueOf(node: unknown, path: (string | number)[], found: Located[]): unknown {
  if (isAlias(node)) {
    const offset = startOf(node)
    found.push({
      path: [...path],
      message: `YAML reads an unquoted "*${node.source}" as an alias: quote the value, such as "*${node.source}"`,
      ...(offset === undefined ? {} : { offset }),
    })
    // Not a value any check accepts: the key's own checks then fail (quietly: this problem says it).
    return { alias: node.source }
  }
  if (isScalar(node)) return node.value
  if (isSeq(node)) return node.items.map((item, index) => valueOf(item, [...path, index], found))
  if (isMap(node)) {
    const out: Record<string, unknown> = {}
    for (const pair of node.items) {
      if (!isPair(pair)) continue
      const key = isScalar(pair.key) ? pair.key.value : undefined
      if (typeof key !== 'string' && typeof key !== 'number') {
        const offset = startOf(pair.key)
        found.push({ path: [...path], message: 'a key must be a plain string', ...(offset === undefined ? {} : { offset }) })
        continue
      }
      const name = String(key)
      if (Object.hasOwn(out, name)) continue
      out[name] = valueOf(pair.value, [...path, name], found)
    }
    return out
  }
  return node === null || node === undefined ? null : undefined
}

/** The offset of the key (or list item) at `path`, or of its nearest ancestor that exists. */
function offsetOf(doc: Document, path: GateConfigPath): number | undefined {
  for (let length = path.length; length >= 0; length--) {
    const parent = length <= 1 ? doc.contents : doc.getIn(path.slice(0, length - 1), true)
    let offset: number | undefined
    if (length === 0) offset = startOf(doc.contents)
    else {
      const last = path[length - 1]
      if (isMap(parent)) offset = startOf(parent.items.find((item) => isScalar(item.key) && String(item.key.value) === String(last))?.key)
      else if (isSeq(parent) && typeof last === 'number') offset = startOf(parent.items[last])
    }
    if (offset !== undefined) return offset
  }
  return undefined
}

/** The path of the deepest key or list item whose node holds `offset` (where a YAML error stands). */
function pathAt(root: unknown, offset: number): (string | number)[] {
  const path: (string | number)[] = []
  let node: unknown = root
  for (;;) {
    const holds = (child: unknown) => {
      const range = (child as { range?: [number, number, number] } | null | undefined)?.range
      return range !== undefined && offset >= range[0] && offset <= range[2]
    }
    if (isMap(node)) {
      const pair = node.items.find((item) => holds(item.key) || holds(item.value))
      if (pair === undefined || !isScalar(pair.key)) return path
      path.push(String(pair.key.value))
      if (holds(pair.key)) return path
      node = pair.value
    } else if (isSeq(node)) {
      const index = node.items.findIndex(holds)
      if (index === -1) return path
      path.push(index)
      node = node.items[index]
    } else return path
  }
}

/** Whether `path` is `prefix` or lies under it. */
function within(path: GateConfigPath, prefix: GateConfigPath): boolean {
  return prefix.length <= path.length && prefix.every((part, index) => String(part) === String(path[index]))
}

/**
 * Reads a configuration file. Never throws for a problem in the file: problems are in the
 * result, each with file, line, column and key; what could be read of the file is in
 * `config`, so that its checks can report their problems in the same run.
 *
 * @example
 * ```ts
 * const loaded = await loadGateConfig('/etc/voot-gate/gate.yaml', process.env)
 * if (loaded.problems.length === 0) createGate(loaded.config as GateConfig)
 * ```
 */
export async function loadGateConfig(
  file: string,
  env: Readonly<Record<string, string | undefined>> = process.env,
): Promise<LoadedGateConfig> {
  const fail = (message: string, line?: number, column?: number): LoadedGateConfig => ({
    file,
    config: undefined,
    problems: [{ key: '(file)', path: [], message, file, ...(line === undefined ? {} : { line, column: column ?? 1 }) }],
    place: () => [],
  })
  const extension = extname(file).toLowerCase()
  if (!['.yaml', '.yml', '.json'].includes(extension)) return fail('the configuration must be a .yaml, .yml or .json file')
  let text: string
  try {
    text = await readFile(file, 'utf8')
  } catch (error) {
    const code = (error as { code?: unknown }).code
    return fail(code === 'ENOENT' ? 'no such file' : `cannot read the file (${typeof code === 'string' ? code : 'error'})`)
  }
  const lines = new LineCounter()
  if (extension === '.json') {
    try {
      JSON.parse(text)
    } catch (error) {
      const message = error instanceof Error ? error.message : 'error'
      const position = /position (\d+)/.exec(message)
      if (position === null) return fail(`not valid JSON: ${message}`)
      lines.addNewLine(0)
      for (let i = 0; i < text.length; i++) if (text[i] === '\n') lines.addNewLine(i + 1)
      const at = lines.linePos(Number(position[1]))
      return fail(`not valid JSON: ${message}`, at.line, at.col)
    }
  }
  // JSON is read as YAML too (it is YAML 1.2), so that a JSON file's repeated keys and locations are known.
  const doc = parseDocument(text, { lineCounter: lines, uniqueKeys: true, prettyErrors: false })
  const found: Located[] = []
  // Where the checks' problems only follow from a problem found here: the lines a YAML error
  // stands on, the keys whose value it broke, and (below) the keys of every problem found here.
  const brokenLines = new Set<number>()
  const quiet: GateConfigPath[] = []
  const repeated: Located[] = []
  for (const error of doc.errors) {
    const offset = error.pos[0]
    const message = error.message.split('\n')[0] ?? 'syntax error'
    const problem = { path: pathAt(doc.contents, offset), message: `YAML: ${message}${yamlHint(error.code)}`, offset }
    // A repeated key breaks nothing else: the first is read, and checked like any other.
    if (error.code === 'DUPLICATE_KEY') repeated.push(problem)
    else {
      brokenLines.add(lines.linePos(offset).line)
      // What the checks say of the key whose value the error broke only follows from it.
      quiet.push(problem.path.slice(0, problem.path.findLastIndex((part) => typeof part === 'string') + 1))
      found.push(problem)
    }
  }
  const walked: Located[] = []
  const raw = valueOf(doc.contents, [], walked)
  // What the walk finds on a line a YAML error broke only follows from that error.
  found.push(...walked.filter((item) => item.offset === undefined || !brokenLines.has(lines.linePos(item.offset).line)))
  const config = substitute(raw, env, [], found)

  const locate = (path: GateConfigPath, offset: number | undefined) => {
    const at = offset ?? offsetOf(doc, path)
    if (at === undefined) return {}
    const { line, col } = lines.linePos(at)
    return { line, column: col }
  }
  const problems: GateConfigProblem[] = [...repeated, ...found].map(({ path, message, offset }) => ({
    key: formatConfigPath(path),
    path,
    message,
    file,
    ...locate(path, offset),
  }))
  // A YAML error at the top (a broken first line) reaches no key: it names the syntax.
  for (const problem of problems) if (problem.path.length === 0) Object.assign(problem, { key: '(syntax)' })
  for (const item of found) if (item.path.length > 0) quiet.push(item.path)
  return {
    file,
    config,
    problems,
    place: (later) =>
      later.flatMap((problem) => {
        if (quiet.some((path) => path.length > 0 && within(problem.path, path))) return []
        const placed = { ...problem, file, ...locate(problem.path, undefined) }
        return placed.line !== undefined && brokenLines.has(placed.line) ? [] : [placed]
      }),
  }
}

/** What to do about the YAML errors people make in a configuration. */
function yamlHint(code: string): string {
  switch (code) {
    case 'DUPLICATE_KEY':
      return ' (a key given twice: keep one)'
    case 'TAB_AS_INDENT':
      return ' (indent with spaces)'
    case 'BAD_ALIAS':
      return ' (an unquoted "*" starts a YAML alias: quote the value)'
    default:
      return ''
  }
}
