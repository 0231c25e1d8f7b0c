/**
 * The emulated userinfo endpoints: `{authUrl}/openid/userinfo` (OpenID Connect) and the
 * spec's `{authUrl}/userinfo`. Both take the access token as `Authorization: Bearer`,
 * by `GET` or `POST` (OpenID Connect Core section 5.3.1).
 *
 * The OpenID Connect answer is `{ sub, name, email? }`. The spec's endpoint adds the
 * shape the real service's `/userinfo` has always had: `user: { userid, name, email }`
 * and `audience` (the client id).
 *
 * @module
 */
import type { IncomingMessage } from 'node:http'
import { jsonAnswer, type Answer } from '../answer.js'
import { REALM, identifyCaller } from '../bearer-auth.js'
import type { OAuthContext } from './oauth-context.js'

/** The paths of the userinfo endpoints. */
export const USERINFO_PATHS = { openid: '/openid/userinfo', spec: '/userinfo' } as const

/**
 * Answers one request to a userinfo endpoint.
 */
export function userinfo(ctx: OAuthContext, req: IncomingMessage, flavour: 'openid' | 'spec'): Answer {
  req.resume()
  if (req.method !== 'GET' && req.method !== 'POST' && req.method !== 'HEAD') {
    return jsonAnswer(405, { error: 'invalid_request', error_description: 'Use GET or POST' }, { allow: 'GET, POST' })
  }
  const caller = identifyCaller(req.headers.authorization, ctx.tokens)
  if (caller.kind === 'anonymous') {
    return jsonAnswer(
      401,
      { error: 'invalid_request', error_description: 'No bearer token' },
      { 'www-authenticate': `Bearer realm="${REALM}"` },
    )
  }
  if (caller.kind === 'invalid') {
    return jsonAnswer(
      401,
      { error: 'invalid_token', error_description: 'Token is invalid' },
      { 'www-authenticate': `Bearer realm="${REALM}", error="invalid_token", error_description="Token is invalid"` },
    )
  }
  const { userId, clientId, scopes } = caller.record
  const user = userId === undefined ? undefined : ctx.data.users.find((u) => u.id === userId)
  const needsOpenid = flavour === 'openid' && !scopes.includes('openid')
  if (user === undefined || needsOpenid) {
    const scope = flavour === 'openid' ? 'openid' : 'userid'
    const description = user === undefined ? 'This resource requires a personal token' : 'The openid scope is required'
    return jsonAnswer(
      403,
      { error: 'insufficient_scope', error_description: description },
      { 'www-authenticate': `Bearer realm="${REALM}", error="insufficient_scope", scope="${scope}"` },
    )
  }
  const claims = { sub: user.id, name: user.name, ...(user.email === undefined ? {} : { email: user.email }) }
  const body =
    flavour === 'openid'
      ? claims
      : {
          ...claims,
          user: { userid: user.id, name: user.name, ...(user.email === undefined ? {} : { email: user.email }) },
          audience: clientId,
        }
  return jsonAnswer(200, body, { 'cache-control': 'no-store' })
}
