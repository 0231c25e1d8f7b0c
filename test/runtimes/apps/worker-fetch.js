// A Worker guarded by voot-guard/fetch, as a user writes one: the guard made once per
// isolate from the Worker's variable, `protect` around the handler.
import { createGuard } from 'voot-guard/fetch'

let staff

export default {
  fetch(request, env) {
    if (staff === undefined) {
      const guard = createGuard({ baseUrl: env.VOOT_BASE_URL, realm: 'voot-guard-example' })
      staff = guard.protect(guard.requireGroup('fc:org:example.org', 'admin'), (_request, voot) =>
        Response.json({ message: 'Hello, colleague', reason: voot.decision.reason }),
      )
    }
    return staff(request)
  },
}
