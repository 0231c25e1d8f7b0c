/**
 * The userinfo request (OpenID Connect Core section 5.3): the user's profile, fetched
 * with the access token, its `sub` checked against the ID token's.
 *
 * @module
 */
import { InvalidArgumentError } from '../src/errors.js'
import { OAuthError, OAuthValidationError } from './errors.js'
import { isJsonObject, parseJson, unexpectedStatus, type HttpSend } from './http.js'
import { errorFromFields } from './token-response.js'
import type { ProviderMetadata, TokenSet, UserInfo } from './types.js'
import { parseBearerChallenge } from './www-authenticate.js'

/**
 * Fetches the user's profile from the provider's `userinfo_endpoint`. Given a token set with ID token claims, or
 * a `subject`, the answer's `sub` must match it (OpenID Connect Core section 5.3.2).
 *
 * @throws {@link OAuthError} (`invalid_token`, `insufficient_scope`) for a 401 or 403,
 * {@link OAuthValidationError} (`response`, `subject`), {@link UpstreamError}.
 *
 * @example
 * ```ts
 * const info = await fetchUserinfo(send, client.metadata, tokens, {})
 * ```
 */
export async function fetchUserinfo(
  send: HttpSend,
  metadata: () => Promise<ProviderMetadata>,
  token: string | TokenSet,
  options: { subject?: string },
): Promise<UserInfo> {
  const accessToken = typeof token === 'string' ? token : token?.accessToken
  if (typeof accessToken !== 'string' || accessToken === '') {
    throw new InvalidArgumentError('userinfo(): the access token must be a non-empty string')
  }
  const subject = options.subject ?? (typeof token === 'string' ? undefined : token.claims?.sub)
  const { userinfo_endpoint: endpoint } = await metadata()
  if (endpoint === undefined) {
    throw new OAuthValidationError('metadata', 'The provider publishes no userinfo_endpoint', { status: 502 })
  }
  const res = await send({
    role: 'userinfo',
    method: 'GET',
    url: endpoint,
    headers: { authorization: `Bearer ${accessToken}`, accept: 'application/json' },
  })
  if (res.status === 401 || res.status === 403) throw userinfoError(res.status, res.headers['www-authenticate'], res.body, accessToken)
  if (res.status !== 200) throw unexpectedStatus('userinfo', res.status)
  const type = String(res.headers['content-type'] ?? '').toLowerCase()
  if (type.startsWith('application/jwt')) {
    throw new OAuthValidationError('response', 'Signed or encrypted userinfo responses are not supported', { status: 502 })
  }
  const info = parseJson(res.body)
  if (!isJsonObject(info)) {
    throw new OAuthValidationError('response', 'The userinfo endpoint answered with a body that is not a JSON object', { status: 502 })
  }
  if (subject !== undefined && info['sub'] !== subject) {
    throw new OAuthValidationError('subject', 'The userinfo sub differs from the ID token\'s', { status: 502 })
  }
  return Object.freeze(info) as UserInfo
}

function userinfoError(status: number, header: string | string[] | undefined, body: string, accessToken: string): OAuthError {
  const challenge = parseBearerChallenge(header)
  const json = parseJson(body)
  const fields: Record<string, unknown> = { ...(isJsonObject(json) ? json : {}), ...challenge }
  if (typeof fields['error'] !== 'string') fields['error'] = status === 401 ? 'invalid_token' : 'insufficient_scope'
  const error = errorFromFields(fields, { responseStatus: status, redact: [accessToken] })
  return new OAuthError(error?.error ?? 'invalid_token', {
    status,
    responseStatus: status,
    ...(error?.errorDescription === undefined ? {} : { errorDescription: error.errorDescription }),
    ...(error?.errorUri === undefined ? {} : { errorUri: error.errorUri }),
  })
}
