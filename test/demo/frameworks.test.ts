/**
 * `npm start -- --framework <name> --dialect <name>`: the demo serves each example against
 * each service the emulator plays, and every line of its guide answers as printed.
 */
import { describe, expect, it } from 'vitest'
import { DEMO_DIALECTS } from '../../demo/dialects.js'
import { DEMO_FRAMEWORKS } from '../../demo/frameworks.js'
import { startDemo } from '../../demo/start.js'
import { InvalidOptionError } from '../../src/errors.js'
import { EMULATOR_DIALECTS } from '../../testing/index.js'
import { checkPrintedLines } from './printed-lines.js'

const COMBINATIONS = DEMO_FRAMEWORKS.flatMap((framework) => EMULATOR_DIALECTS.map((dialect) => [framework, dialect] as const))

describe.each(COMBINATIONS)('the demo with --framework %s --dialect %s', (framework, dialect) => {
  it('serves that example against that service, and every printed line answers as printed', async () => {
    let printed = ''
    const demo = await startDemo({ port: 0, emulatorPort: 0, framework, dialect, print: (guide) => (printed += guide) })
    try {
      expect(printed).toBe(demo.guide)
      expect(printed).toContain(`examples/${framework}/app.ts`)
      expect(printed).toContain(DEMO_DIALECTS[dialect].service)
      expect(demo.emulator.dialect).toBe(dialect)
      // The SURFconext demo names SURFconext's groups, never Feide's.
      if (dialect === 'openconext') expect(printed).not.toMatch(/fc:org|fc:fs/)
      if (dialect === 'openconext') expect(printed).toContain('urn:collab:group:')
      // The printed CLI line is pasted into a shell once per dialect (it starts npm: slower).
      await checkPrintedLines(demo, printed, { shell: framework === 'express' })
    } finally {
      await demo.close()
    }
  })
})

describe('startDemo options', () => {
  it('names the option for a framework or a dialect the demo does not know, or an unknown key', async () => {
    const base = { port: 0, emulatorPort: 0, print: () => {} }
    await expect(startDemo({ ...base, framework: 'rails' as never })).rejects.toThrow(InvalidOptionError)
    await expect(startDemo({ ...base, framework: 'rails' as never })).rejects.toThrow(/framework/)
    await expect(startDemo({ ...base, dialect: 'surf' as never })).rejects.toThrow(
      /options\.dialect: must be one of dataporten, openconext/,
    )
    await expect(startDemo({ ...base, dialekt: 'openconext' } as never)).rejects.toThrow(
      /options\.dialekt: is not an option \(did you mean dialect\?\)/,
    )
  })
})
