// The cache-key digest off Node (digest-web.ts): SHA-256(salt + token) as 32 latin1
// characters, byte for byte what node:crypto computes, whichever implementation the runtime
// gives it: node:crypto's `hash` through process.getBuiltinModule (Deno, Bun, Workers with
// nodejs_compat) or @noble/hashes (Workers without the flag, Vercel's Edge).
import { createHash } from 'node:crypto'
import { afterEach, describe, expect, it, vi } from 'vitest'

afterEach(() => {
  vi.restoreAllMocks()
})

async function freshDigestModule(): Promise<typeof import('../../../src/resolver/store/digest-web.js')> {
  vi.resetModules()
  return import('../../../src/resolver/store/digest-web.js')
}

const ZERO_SALT = 'AAAAAAAAAAAAAAAAAAAAAA' // base64url of 16 zero bytes

describe('digest-web', () => {
  for (const [name, hidesBuiltins] of [
    ['node:crypto found through process.getBuiltinModule', false],
    ['@noble/hashes where the runtime has no node:crypto', true],
  ] as const) {
    it(`${name}: SHA-256(salt + token), 32 latin1 characters, a fresh salt each time`, async () => {
      if (hidesBuiltins) vi.spyOn(process, 'getBuiltinModule').mockReturnValue(undefined as never)
      const { createSaltedDigest } = await freshDigestModule()
      const salted = createSaltedDigest()
      const random = vi.spyOn(crypto, 'getRandomValues').mockImplementation((array) => array)
      const digest = createSaltedDigest()
      random.mockRestore()
      const token = 'tøken-€-abc'
      expect(digest(token)).toHaveLength(32)
      expect(digest(token)).toBe(
        createHash('sha256')
          .update(ZERO_SALT + token)
          .digest()
          .toString('latin1'),
      )
      expect(salted(token)).not.toBe(digest(token))
    })
  }
})
