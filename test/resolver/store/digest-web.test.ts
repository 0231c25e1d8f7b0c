// The cache-key digest off Node (digest-web.ts): the token digest of token-digest.ts, whose
// SHA-256 (for long tokens) is whichever the runtime gives: node:crypto's `hash` through
// process.getBuiltinModule (Deno, Bun, Workers with nodejs_compat) or @noble/hashes
// (Workers without the flag, Vercel's Edge). Both must give node:crypto's bytes.
import { createHash } from 'node:crypto'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { createSipHash128 } from '../../../src/resolver/store/siphash.js'

afterEach(() => {
  vi.restoreAllMocks()
})

async function freshDigestModule(): Promise<typeof import('../../../src/resolver/store/digest-web.js')> {
  vi.resetModules()
  return import('../../../src/resolver/store/digest-web.js')
}

const ZERO_SALT = '\u0000'.repeat(16) // the salt the zeroed random bytes give

describe('digest-web', () => {
  for (const [name, hidesBuiltins] of [
    ['node:crypto found through process.getBuiltinModule', false],
    ['@noble/hashes where the runtime has no node:crypto', true],
  ] as const) {
    it(`${name}: SipHash-2-4-128 of a short token, SHA-256(salt + token) of a long one, 16 latin1 characters, fresh secrets each time`, async () => {
      if (hidesBuiltins) vi.spyOn(process, 'getBuiltinModule').mockReturnValue(undefined as never)
      const { createRuntimeTokenDigest } = await freshDigestModule()
      const salted = createRuntimeTokenDigest()
      const random = vi.spyOn(crypto, 'getRandomValues').mockImplementation((array) => array)
      const digest = createRuntimeTokenDigest()
      random.mockRestore()
      const short = 'abc.DEF-123'
      expect(digest(short)).toBe(createSipHash128(new Uint8Array(16))(short))
      const long = 'tøken-€-abc'.repeat(10)
      expect(digest(long)).toHaveLength(16)
      expect(digest(long)).toBe(
        createHash('sha256')
          .update(ZERO_SALT + long)
          .digest()
          .toString('latin1')
          .slice(0, 16),
      )
      expect(salted(short)).not.toBe(digest(short))
      expect(salted(long)).not.toBe(digest(long))
    })
  }
})
