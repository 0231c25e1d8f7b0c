/**
 * oidc-provider (the real OpenID provider some OAuth tests run against), loaded and
 * created with its console notices caught and checked instead of printed: it warns on
 * import about a Node.js before 22, and on creation about its in-memory adapter (which is
 * what a test wants), and tells about each default TTL function it calls (given here as
 * numbers, their defaults, so it has nothing to tell).
 */
import type { Configuration, default as ProviderClass } from 'oidc-provider'
import { expect, vi } from 'vitest'

/** The lifetimes the tests' providers use: oidc-provider's defaults, as numbers. */
export const TEST_TTL = {
  AccessToken: 3600,
  ClientCredentials: 600,
  IdToken: 3600,
  Interaction: 3600,
  Grant: 14 * 24 * 3600,
  Session: 14 * 24 * 3600,
  RefreshToken: 14 * 24 * 3600,
} satisfies Configuration['ttl']

/** What oidc-provider may say on import and creation: nothing else is expected. */
const EXPECTED_NOTICES = /^oidc-provider WARNING: (Unsupported runtime|a quick start development-only in-memory adapter)/

async function caught<T>(work: () => T | Promise<T>): Promise<T> {
  const notices: string[] = []
  const keep = (message: unknown): void => void notices.push(String(message))
  const warn = vi.spyOn(console, 'warn').mockImplementation(keep)
  const info = vi.spyOn(console, 'info').mockImplementation(keep)
  try {
    return await work()
  } finally {
    warn.mockRestore()
    info.mockRestore()
    for (const notice of notices) expect(notice).toMatch(EXPECTED_NOTICES)
  }
}

/** The Provider class, imported with its import-time notice caught. */
export function loadProvider(): Promise<typeof ProviderClass> {
  return caught(async () => (await import('oidc-provider')).default)
}

/** `new Provider(issuer, configuration)` with {@link TEST_TTL}, its notices caught. */
export async function createProvider(issuer: string, configuration: Configuration): Promise<ProviderClass> {
  const Provider = await loadProvider()
  return caught(() => new Provider(issuer, { ttl: TEST_TTL, ...configuration }))
}
