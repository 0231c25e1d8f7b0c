// Run by Deno and Bun: the resolver's tracing channels are published there (both have
// node:diagnostics_channel), and the misconfiguration warning has somewhere to go. Prints
// one JSON line: the decision and the authorize traces seen.
import { tracingChannel } from 'node:diagnostics_channel'
import { createMembershipResolver, group } from 'voot-guard'

const baseUrl = (globalThis.Deno?.args ?? process.argv.slice(2))[0]
const seen = []
tracingChannel('voot-guard:authorize').subscribe({
  start() {},
  end() {},
  asyncStart() {},
  asyncEnd(context) {
    seen.push(`${context.outcome}:${context.reason}`)
  },
  error() {},
})
const resolver = createMembershipResolver({ baseUrl })
const decision = await resolver.check('staff-token-1', group('fc:org:example.org', 'admin'))
await resolver.close()
console.log(JSON.stringify({ allowed: decision.allowed, seen }))
