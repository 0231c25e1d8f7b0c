/**
 * Problems found in a gate configuration, and the error that carries them.
 *
 * @module
 */

/** Where in the configuration: keys and list indexes, from the top. */
export type GateConfigPath = readonly (string | number)[]

/**
 * One problem in a configuration. `file`, `line` and `column` are set when it was read from
 * a file (1-based).
 *
 * @example
 * ```ts
 * const problem: GateConfigProblem = { key: 'rules[0].requrie', path: ['rules', 0, 'requrie'], message: 'unknown key', suggestion: 'require' }
 * ```
 */
export interface GateConfigProblem {
  /** The key as written in messages: `rules[2].require.group`. */
  readonly key: string
  readonly path: readonly (string | number)[]
  readonly message: string
  /** The known key a misspelt one most likely means. */
  readonly suggestion?: string
  readonly file?: string
  readonly line?: number
  readonly column?: number
}

/**
 * The dotted form of a path: `rules[2].require.group`.
 *
 * @example
 * ```ts
 * formatConfigPath(['rules', 2, 'require']) // 'rules[2].require'
 * ```
 */
export function formatConfigPath(path: GateConfigPath): string {
  let text = ''
  for (const part of path) text += typeof part === 'number' ? `[${part}]` : text === '' ? part : `.${part}`
  return text === '' ? '(top level)' : text
}

/**
 * One problem as a line: `gate.yaml:12:5: rules[2].requrie: unknown key (did you mean "require"?)`.
 *
 * @example
 * ```ts
 * for (const problem of error.problems) console.error(formatConfigProblem(problem))
 * ```
 */
export function formatConfigProblem(problem: GateConfigProblem): string {
  const where =
    problem.file === undefined ? '' : `${problem.file}${problem.line === undefined ? '' : `:${problem.line}:${problem.column ?? 1}`}: `
  const hint = problem.suggestion === undefined ? '' : ` (did you mean "${problem.suggestion}"?)`
  return `${where}${problem.key}: ${problem.message}${hint}`
}

/**
 * A configuration the gate refuses; `problems` lists every problem found, each with its
 * key (and file and line when read from a file).
 *
 * @example
 * ```ts
 * try { createGate(config) } catch (error) {
 *   if (error instanceof GateConfigError) for (const p of error.problems) console.error(formatConfigProblem(p))
 * }
 * ```
 */
export class GateConfigError extends Error {
  override readonly name = 'GateConfigError'
  readonly code = 'ERR_GATE_CONFIG'
  readonly problems: readonly GateConfigProblem[]

  constructor(problems: readonly GateConfigProblem[]) {
    super(
      `the gate configuration has ${problems.length} problem${problems.length === 1 ? '' : 's'}:\n` +
        problems.map((problem) => `  ${formatConfigProblem(problem)}`).join('\n'),
    )
    this.problems = problems
  }
}

/** Collects problems while a configuration is read. */
export class ProblemList {
  readonly items: GateConfigProblem[] = []

  add(path: GateConfigPath, message: string, suggestion?: string): void {
    this.items.push({
      key: formatConfigPath(path),
      path: [...path],
      message,
      ...(suggestion === undefined ? {} : { suggestion }),
    })
  }

  /** Whether a problem was found at `path` or at a key that holds it. */
  covers(path: GateConfigPath): boolean {
    return this.items.some(
      (problem) => problem.path.length <= path.length && problem.path.every((part, index) => String(part) === String(path[index])),
    )
  }
}
