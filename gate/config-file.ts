/**
 * Reading `gate.yaml` (or `.yml`, `.json`): the text parsed with the `yaml` package, which
 * knows where every key stands, so that each problem names its file, line and key;
 * `${NAME}` in a string value is taken from the environment (a missing variable is a
 * problem, at its line). Values are substituted after parsing, so an environment variable
 * can never add keys or structure.
 *
 * @module
 */
import { readFile } from 'node:fs/promises'
import { extname } from 'node:path'
import { isMap, isScalar, isSeq, LineCounter, parseDocument, type Document } from 'yaml'
import { formatConfigPath, type GateConfigPath, type GateConfigProblem } from './config-problem.js'

/**
 * A configuration file, read: its content (`undefined` when it could not be parsed), the
 * problems found so far, and `place()`, which adds the file and line to problems found
 * later (by {@link checkGateConfig} or {@link createGate}).
 *
 * @example
 * ```ts
 * const loaded = await loadGateConfig('gate.yaml', process.env)
 * const problems = loaded.problems.length > 0 ? loaded.problems : loaded.place(await checkGateConfig(loaded.config))
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

/** Replaces `${NAME}` (and `$${` by a literal `${`) in every string of `value`, recording missing names. */
function substitute(
  value: unknown,
  env: Readonly<Record<string, string | undefined>>,
  path: (string | number)[],
  missing: { path: GateConfigPath; message: string }[],
): unknown {
  if (typeof value === 'string') {
    if (!value.includes('${')) return value
    return value.replace(VARIABLE, (match, name: string | undefined) => {
      if (match === '$${') return '${'
      if (name === undefined || !NAME.test(name)) {
        missing.push({ path: [...path], message: `"${match}" is not a variable reference: use \${NAME} (letters, digits, _)` })
        return ''
      }
      const found = env[name]
      if (found === undefined) {
        missing.push({ path: [...path], message: `the environment variable ${name} is not set` })
        return ''
      }
      return found
    })
  }
  if (Array.isArray(value)) return value.map((item, index) => substitute(item, env, [...path, index], missing))
  if (typeof value === 'object' && value !== null) {
    const out: Record<string, unknown> = {}
    for (const [key, item] of Object.entries(value)) out[key] = substitute(item, env, [...path, key], missing)
    return out
  }
  return value
}

/** The line and column of the key (or list item) at `path`, or of its nearest ancestor that exists. */
function locate(doc: Document, lines: LineCounter, path: GateConfigPath): { line: number; column: number } | undefined {
  for (let length = path.length; length >= 0; length--) {
    const parent = length <= 1 ? doc.contents : doc.getIn(path.slice(0, length - 1), true)
    let offset: number | undefined
    if (length === 0) offset = (doc.contents as { range?: [number, number, number] } | null)?.range?.[0]
    else {
      const last = path[length - 1]
      if (isMap(parent)) {
        const pair = parent.items.find((item) => isScalar(item.key) && item.key.value === last)
        offset = (pair?.key as { range?: [number, number, number] } | undefined)?.range?.[0]
      } else if (isSeq(parent) && typeof last === 'number') {
        offset = (parent.items[last] as { range?: [number, number, number] } | undefined)?.range?.[0]
      }
    }
    if (offset !== undefined) {
      const { line, col } = lines.linePos(offset)
      return { line, column: col }
    }
  }
  return undefined
}

/**
 * Reads a configuration file. Never throws for a problem in the file: problems are in the
 * result, each with file, line and key.
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
  const fail = (message: string, line?: number): LoadedGateConfig => ({
    file,
    config: undefined,
    problems: [{ key: '(file)', path: [], message, file, ...(line === undefined ? {} : { line, column: 1 }) }],
    place: (problems) => problems.map((problem) => ({ ...problem, file })),
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
  if (extension === '.json') {
    try {
      JSON.parse(text)
    } catch (error) {
      const position = /position (\d+)/.exec(error instanceof Error ? error.message : '')
      const line = position === null ? undefined : text.slice(0, Number(position[1])).split('\n').length
      return fail(`not valid JSON: ${error instanceof Error ? error.message : 'error'}`, line)
    }
  }
  const lines = new LineCounter()
  const doc = parseDocument(text, { lineCounter: lines, uniqueKeys: true, prettyErrors: false })
  if (doc.errors.length > 0) {
    return {
      file,
      config: undefined,
      problems: doc.errors.map((error) => {
        const at = lines.linePos(error.pos[0])
        return { key: '(syntax)', path: [], message: error.message.split('\n')[0] ?? 'syntax error', file, line: at.line, column: at.col }
      }),
      place: (problems) => problems.map((problem) => ({ ...problem, file })),
    }
  }
  const place = (problems: readonly GateConfigProblem[]): GateConfigProblem[] =>
    problems.map((problem) => {
      const at = locate(doc, lines, problem.path)
      return { ...problem, file, ...(at === undefined ? {} : { line: at.line, column: at.column }) }
    })
  const missing: { path: GateConfigPath; message: string }[] = []
  const config = substitute(doc.toJS({ maxAliasCount: 0 }), env, [], missing)
  return {
    file,
    config,
    problems: place(missing.map(({ path, message }) => ({ key: formatConfigPath(path), path, message }))),
    place,
  }
}
