// Checks the built package as a user gets it: every subpath export resolves from dist/
// (through the package's own `exports`), has its main entry points, and ships types.
import { access } from 'node:fs/promises'
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const pkg = require('../package.json')
const expected = {
  'voot-guard': ['createMembershipResolver', 'createGroupsClient', 'group', 'anyOf', 'allOf', 'groupOfType', 'where', 'VootError'],
  'voot-guard/adapter-kit': ['createGuardCore', 'createGuards', 'createCredentialsReader', 'authorizationOf', 'createHttpErrorRenderer'],
  'voot-guard/express': ['createGuard'],
  'voot-guard/koa': ['createGuard'],
  'voot-guard/testing': ['startEmulator'],
  'voot-guard/oauth': ['createOAuthClient'],
  'voot-guard/otel': ['instrumentVootGuard'],
}
let failed = false
for (const [specifier, names] of Object.entries(expected)) {
  const module = await import(specifier)
  const missing = names.filter((name) => !(name in module))
  const entry = pkg.exports[specifier.replace('voot-guard', '.')]
  try {
    await access(new URL(`../${entry.types}`, import.meta.url))
  } catch {
    missing.push(`types at ${entry.types}`)
  }
  if (missing.length > 0) {
    failed = true
    console.error(`${specifier}: missing ${missing.join(', ')}`)
  } else {
    console.log(`${specifier}: ok`)
  }
}
await access(new URL(`../${pkg.bin['voot-guard']}`, import.meta.url))
console.log('bin: ok')
process.exitCode = failed ? 1 : 0
