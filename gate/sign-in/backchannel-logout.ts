/**
 * `POST /_gate/backchannel-logout`: OpenID Connect Back-Channel Logout 1.0. The provider
 * posts a Logout Token (`logout_token`, a form field); it is verified as the spec's section
 * 2.6 says (`verifyLogoutToken` of `voot-guard/oauth`, the same code an app uses), then
 * every session of its `sid` (or, with `sub` alone, of that user at that issuer) that began
 * by now ends, on every instance with `redis`. 200 with `Cache-Control: no-store`; a token
 * refused is 400 `invalid_request`. Neither says which sessions existed: the gate does not
 * know (sessions are cookies), and ends what the token names either way.
 *
 * @module
 */
import type { IncomingMessage } from 'node:http'
import { OAuthValidationError, verifyLogoutToken } from '../../oauth/index.js'
import { jsonAnswer, type Answer } from '../http/answer.js'
import { readFormBody } from '../http/form-body.js'
import type { GateMetrics } from '../ops/metrics.js'
import type { GateOAuth, GateSignIns } from '../session/oauth-clients.js'
import type { GateSessionEnds } from '../session/session-ends.js'

/** The largest body read: a Logout Token is a few hundred bytes to a few KB. */
const MAX_BODY_BYTES = 16_384
/** How long the provider has to send it. */
const BODY_TIMEOUT = 10_000

const invalid = (description: string): Answer =>
  jsonAnswer(400, { error: 'invalid_request', error_description: description }, { connection: 'close' })

/**
 * The handler, or `undefined` when no service has `oauth.backchannelLogout: true`.
 *
 * @example
 * ```ts
 * const logout = createBackchannelLogout({ signIns, ends, metrics, log: console.warn })
 * if (logout !== undefined) answer = await logout(req)
 * ```
 */
export function createBackchannelLogout(deps: {
  readonly signIns: GateSignIns
  readonly ends: GateSessionEnds
  readonly metrics: GateMetrics
  readonly log: (message: string) => void
}): ((req: IncomingMessage) => Promise<Answer>) | undefined {
  const providers = [...deps.signIns.values()].filter((oauth) => oauth.backchannelLogout)
  if (providers.length === 0) return undefined

  /** The provider whose issuer the (not yet verified) token names: only to choose whose keys verify it. */
  async function providerOf(token: string): Promise<GateOAuth | undefined> {
    let iss: unknown
    try {
      const payload = token.split('.')[1] ?? ''
      iss = (JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { iss?: unknown } | null)?.iss
    } catch {
      return undefined
    }
    if (typeof iss !== 'string') return undefined
    for (const oauth of providers) {
      const metadata = await oauth.client.metadata().catch(() => undefined)
      if (metadata?.issuer === iss) return oauth
    }
    return undefined
  }

  return async (req) => {
    const form = await readFormBody(req, MAX_BODY_BYTES, BODY_TIMEOUT)
    if ('problem' in form) {
      return invalid(
        form.problem === 'type'
          ? 'The logout token must come as an application/x-www-form-urlencoded body'
          : form.problem === 'size'
            ? 'The body is too large'
            : 'The body did not arrive',
      )
    }
    const tokens = form.fields.getAll('logout_token')
    if (tokens.length !== 1 || tokens[0] === '') return invalid('Send exactly one logout_token')
    const token = tokens[0] as string
    const oauth = await providerOf(token)
    if (oauth === undefined) return invalid('The logout token is not from a provider this gate accepts logouts from')
    try {
      const claims = await verifyLogoutToken(oauth.client, token)
      await deps.ends.endAtProvider(claims.iss, { sid: claims.sid, sub: claims.sub })
    } catch (error) {
      if (error instanceof OAuthValidationError && error.check === 'logout_token') return invalid(error.message)
      // The provider's keys could not be read: the provider may send the token again.
      deps.log(`gate: back-channel logout: ${error instanceof Error ? error.message : 'error'}`)
      return jsonAnswer(
        503,
        { error: 'temporarily_unavailable', error_description: "The provider's keys could not be read; try again" },
        { 'retry-after': '5' },
      )
    }
    deps.metrics.signIn('backchannel-logout')
    return { status: 200, headers: { 'cache-control': 'no-store' } }
  }
}
