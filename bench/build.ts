/**
 * Compiles the library and the benchmark to plain JavaScript before anything is measured.
 *
 * Running the measured code through tsx would measure tsx: it compiles with esbuild's
 * `keepNames`, which wraps every function created at run time in a `__name()` call (an
 * `Object.defineProperty`), so each per-request closure costs several times what it costs
 * in the published build. The output goes to `node_modules/.cache/voot-guard-bench/`
 * (ignored by git, and under the project's `node_modules`, so packages resolve).
 *
 * @module
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'

/** The project root. */
export const ROOT = fileURLToPath(new URL('..', import.meta.url))
/**
 * Where the compiled tree goes. `VOOT_BENCH_BUILD_DIR` puts it elsewhere (inside the
 * project, e.g. `.scratch/bench-build`, so that packages still resolve): git worktrees that
 * share one `node_modules` would otherwise share, and overwrite, one compiled tree.
 */
export const BUILD_DIR = resolve(process.env['VOOT_BENCH_BUILD_DIR'] ?? join(ROOT, 'node_modules', '.cache', 'voot-guard-bench'))

const SOURCE_DIRS = ['src', 'adapters', 'testing', 'otel', 'redis', 'oauth', 'gate', 'demo', 'bench']

function* typeScriptFiles(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) yield* typeScriptFiles(path)
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) yield path
  }
}

/** Transpiles every TypeScript file of the library and the benchmark; returns the build directory. */
export function buildForBenchmark(): string {
  rmSync(BUILD_DIR, { recursive: true, force: true })
  const compilerOptions: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ESNext,
    verbatimModuleSyntax: true,
    sourceMap: false,
    declaration: false,
  }
  for (const dir of SOURCE_DIRS) {
    for (const file of typeScriptFiles(join(ROOT, dir))) {
      const { outputText } = ts.transpileModule(readFileSync(file, 'utf8'), { compilerOptions, fileName: file })
      const target = join(BUILD_DIR, relative(ROOT, file)).replace(/\.ts$/, '.js')
      mkdirSync(dirname(target), { recursive: true })
      writeFileSync(target, outputText)
    }
  }
  // Node reads the module format, and the `#` imports, from the nearest package.json: the
  // package's own imports, as Node resolves them (the `node` condition), into this tree.
  writeFileSync(join(BUILD_DIR, 'package.json'), JSON.stringify({ type: 'module', imports: nodeImports() }) + '\n')
  return BUILD_DIR
}

/** The package's `imports`, each the target of its `node` condition, moved from `./dist/` to this tree. */
function nodeImports(): Record<string, string> {
  const { imports } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    imports: Record<string, { node: string }>
  }
  return Object.fromEntries(Object.entries(imports).map(([name, conditions]) => [name, conditions.node.replace(/^\.\/dist\//, './')]))
}
