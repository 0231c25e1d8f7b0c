/**
 * `npm start -- --framework <name>`: the demo serves each example, and every curl line of
 * its guide gets the status it says.
 */
import { request } from 'undici'
import { describe, expect, it } from 'vitest'
import { DEMO_FRAMEWORKS, frameworkArgument } from '../../demo/frameworks.js'
import { startDemo } from '../../demo/start.js'
import { InvalidOptionError } from '../../src/errors.js'

describe.each(DEMO_FRAMEWORKS.filter((framework) => framework !== 'express'))('the demo with --framework %s', (framework) => {
  it('serves that example, and each curl line gets its status', async () => {
    const demo = await startDemo({ port: 0, emulatorPort: 0, framework, print: () => {} })
    try {
      expect(demo.guide).toContain(`examples/${framework}/app.ts`)
      for (const line of demo.curlLines) {
        const response = await request(line.url, { headers: { ...line.headers } })
        await response.body.dump()
        expect([line.description, response.statusCode]).toEqual([line.description, line.expectedStatus])
      }
    } finally {
      await demo.close()
    }
  })
})

describe('--framework', () => {
  it('is read from the command line, other arguments left alone', () => {
    expect(frameworkArgument([])).toBeUndefined()
    expect(frameworkArgument(['--framework', 'hono'])).toBe('hono')
    expect(frameworkArgument(['--dialect', 'x', '--framework=fetch'])).toBe('fetch')
  })

  it('names the option for a framework the demo does not know', async () => {
    await expect(startDemo({ port: 0, emulatorPort: 0, framework: 'rails' as never, print: () => {} })).rejects.toThrow(InvalidOptionError)
    await expect(startDemo({ port: 0, emulatorPort: 0, framework: 'rails' as never, print: () => {} })).rejects.toThrow(/framework/)
  })
})
