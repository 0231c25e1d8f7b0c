// A Worker guarded by voot-guard/fetch, as a user writes one: the guard made once per
// isolate from the Worker's variable, `protect` around the handler. For the suite it also
// counts the `voot-guard:authorize` traces it sees where the runtime has
// node:diagnostics_channel (with nodejs_compat), in a response header.
import { createGuard } from 'voot-guard/fetch'

let staff
const channels = globalThis.process?.getBuiltinModule?.('node:diagnostics_channel')
let traces = 0
channels?.tracingChannel('voot-guard:authorize').subscribe({
  start() {
    traces++
  },
})

export default {
  async fetch(request, env) {
    if (staff === undefined) {
      const guard = createGuard({ baseUrl: env.VOOT_BASE_URL, realm: 'voot-guard-example' })
      staff = guard.protect(guard.requireGroup('fc:org:example.org', 'admin'), (_request, voot) =>
        Response.json({ message: 'Hello, colleague', reason: voot.decision.reason }),
      )
    }
    const response = await staff(request)
    const headers = new Headers(response.headers)
    headers.set('x-authorize-traces', channels === undefined ? 'absent' : String(traces))
    return new Response(response.body, { status: response.status, headers })
  },
}
