/**
 * The run's summary names every skipped test's reason (test/support/skip-reasons-reporter.ts):
 * the note of `ctx.skip(note)`, else the outermost suite's name, where the runtimes suite
 * says which install is missing.
 */
import { describe, expect, it } from 'vitest'
import { skipLines } from '../support/skip-reasons-reporter.js'

type Node = { type: 'module' } | { type: 'suite'; name: string; parent: Node }

function skippedTest(name: string, parent: Node, note?: string, mode = 'skip') {
  return { name, parent, options: { mode }, result: () => ({ state: 'skipped', note }) }
}

function testModule(path: string, tests: ReturnType<typeof skippedTest>[]) {
  return {
    relativeModuleId: path,
    children: {
      *allTests() {
        yield* tests
      },
    },
  }
}

describe('skipLines', () => {
  it('groups a file’s skipped tests by reason: a note, else the outermost suite', () => {
    const root: Node = { type: 'module' }
    const suite: Node = { type: 'suite', name: 'Deno deno is not installed: run `npm ci --prefix test/runtimes`', parent: root }
    const inner: Node = { type: 'suite', name: 'inner', parent: suite }
    const modules = [
      testModule('test/runtimes/runtimes.test.ts', [skippedTest('a', suite), skippedTest('b', inner)]),
      testModule('test/demo/e2e-login.test.ts', [
        skippedTest('c', root, 'no Chromium: install it'),
        skippedTest('d', root, undefined, 'todo'),
      ]),
    ]
    expect(skipLines(modules as never)).toEqual([
      '  test/runtimes/runtimes.test.ts: 2 skipped: Deno deno is not installed: run `npm ci --prefix test/runtimes`',
      '  test/demo/e2e-login.test.ts: 1 skipped: no Chromium: install it',
    ])
  })

  it('says when a skipped test gives no reason', () => {
    const modules = [testModule('test/x.test.ts', [skippedTest('lonely', { type: 'module' })])]
    expect(skipLines(modules as never)).toEqual(['  test/x.test.ts: 1 skipped: lonely (no reason given)'])
  })
})
