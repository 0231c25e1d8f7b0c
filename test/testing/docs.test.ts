/**
 * docs/emulator.md's example data file is a valid data set that both dialects serve as the
 * page says: a plain-string membership as a string, a logo as an image.
 */
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { startEmulator, validateEmulatorData, type EmulatorData } from '../../testing/index.js'

const page = readFileSync(new URL('../../docs/emulator.md', import.meta.url), 'utf8')
const example = /```json\n([\s\S]*?)```/.exec(page)?.[1]

describe('docs/emulator.md', () => {
  it('has an example data file that validates', () => {
    expect(example).toBeDefined()
    expect(() => validateEmulatorData(JSON.parse(example ?? ''))).not.toThrow()
  })

  it('serves the example as the page says, in both dialects', async () => {
    const data = JSON.parse(example ?? '') as EmulatorData
    const dataporten = await startEmulator({ data })
    const openconext = await startEmulator({ data, dialect: 'openconext' })
    try {
      const logo = await fetch(`${dataporten.baseUrl}/groups/${encodeURIComponent('fc:adhoc:book-club')}/logo`)
      expect(logo.status).toBe(200)
      expect(logo.headers.get('content-type')).toBe('image/svg+xml')
      expect(await logo.text()).toBe('<svg xmlns="http://www.w3.org/2000/svg"/>')
      const board = await fetch(`${openconext.baseUrl}/me/groups/${encodeURIComponent('urn:collab:group:example.org:board')}`, {
        headers: { authorization: `Bearer ${openconext.issueToken('zoe')}` },
      })
      expect(await board.json()).toEqual({
        id: 'urn:collab:group:example.org:board',
        displayName: 'Board',
        description: null,
        sourceID: 'Example',
        membership: 'manager',
      })
    } finally {
      await Promise.all([dataporten.close(), openconext.close()])
    }
  })
})
