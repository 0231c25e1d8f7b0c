// The candidates for the cache-key digest off Node, timed inside one runtime: the
// synchronous SHA-256 of @noble/hashes, Web Crypto's subtle.digest (awaited, as the warm
// path would have to), node:crypto's one-shot hash where the runtime has it, and the
// SipHash-2-4-128 that short tokens get (src/resolver/store/siphash.ts).
import { sha256 } from '@noble/hashes/sha2.js'
import { createSipHash128 } from '../../src/resolver/store/siphash.ts'

const utf8 = new TextEncoder()
const tokens = Array.from({ length: 256 }, (_, i) => `AAAAAAAAAAAAAAAAAAAAAA-token-${i}-${'x'.repeat(40)}`)

export async function measure(operations = 20_000, rounds = 5) {
  const nodeCrypto = globalThis.process?.getBuiltinModule?.('node:crypto')
  const candidates = {
    noble: (t) => String.fromCharCode(...sha256(utf8.encode(t))),
    subtleAwaited: async (t) => String.fromCharCode(...new Uint8Array(await crypto.subtle.digest('SHA-256', utf8.encode(t)))),
  }
  const sip = createSipHash128(crypto.getRandomValues(new Uint8Array(16)))
  candidates.sipHash = (t) => sip(t)
  if (typeof nodeCrypto?.hash === 'function') candidates.nodeCryptoHash = (t) => nodeCrypto.hash('sha256', t, 'binary')
  const samples = Object.fromEntries(Object.keys(candidates).map((name) => [name, []]))
  for (let round = 0; round < rounds; round++) {
    for (const [name, digest] of Object.entries(candidates)) {
      const started = performance.now()
      for (let i = 0; i < operations; i++) await digest(tokens[i & 255])
      samples[name].push(((performance.now() - started) * 1e6) / operations)
    }
  }
  const median = (values) => values.sort((a, b) => a - b)[values.length >> 1]
  return Object.fromEntries(Object.entries(samples).map(([name, values]) => [name, Math.round(median(values))]))
}
