/**
 * A vitest reporter that ends the run's summary with every skipped test and why: the note
 * of `ctx.skip(note)`, or else the name of its outermost suite (the runtimes suite names
 * the missing install there). The default reporter only counts a skipped file.
 */
import type { Reporter, TestCase, TestModule } from 'vitest/node'

/** Why `test` was skipped, as its note or its outermost suite says. */
function reasonOf(test: TestCase): string {
  const result = test.result()
  if (result.state === 'skipped' && result.note !== undefined) return result.note
  let outer: TestCase['parent'] = test.parent
  while (outer.type === 'suite' && outer.parent.type === 'suite') outer = outer.parent
  return outer.type === 'suite' ? outer.name : `${test.name} (no reason given)`
}

/** The skipped tests of `modules`, grouped by file and reason, one line each. */
export function skipLines(modules: ReadonlyArray<TestModule>): string[] {
  const lines: string[] = []
  for (const module of modules) {
    const reasons = new Map<string, number>()
    for (const test of module.children.allTests('skipped')) {
      if (test.options.mode === 'todo') continue
      const reason = reasonOf(test)
      reasons.set(reason, (reasons.get(reason) ?? 0) + 1)
    }
    for (const [reason, count] of reasons) {
      lines.push(`  ${module.relativeModuleId}: ${count} skipped: ${reason}`)
    }
  }
  return lines
}

export default class SkipReasonsReporter implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    const lines = skipLines(modules)
    if (lines.length > 0) process.stdout.write(`\n Skipped, and why:\n${lines.join('\n')}\n\n`)
  }
}
