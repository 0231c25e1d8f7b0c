/**
 * One authenticated form POST to the token or pushed authorization request endpoint, and
 * the reading of its answer: a JSON object on success, an {@link OAuthError} for an OAuth
 * error body (RFC 6749 section 5.2, RFC 9126 section 2.3), an {@link UpstreamError} for
 * anything else.
 *
 * @module
 */
import type { ClientAuthenticationParts } from './client-authentication.js'
import { OAuthValidationError } from './errors.js'
import { isJsonObject, parseJson, unexpectedStatus, type EndpointRole, type HttpSend } from './http.js'
import { errorFromFields } from './token-response.js'

/**
 * One POST to an authenticated endpoint.
 *
 * @example
 * ```ts
 * const post: EndpointPost = { role: 'token', url, fields: { grant_type: 'refresh_token', refresh_token }, auth, success: 200, redact: [refresh_token] }
 * ```
 */
export interface EndpointPost {
  readonly role: EndpointRole
  readonly url: string
  readonly fields: Readonly<Record<string, string>>
  readonly auth: ClientAuthenticationParts
  /** The status of a successful answer: 200 for the token endpoint, 201 for PAR. */
  readonly success: number
  /** Values sent that must not appear in any error (codes, tokens, verifiers). */
  readonly redact: readonly (string | undefined)[]
}

/**
 * Sends the POST and returns the answer's JSON object.
 *
 * @throws {@link OAuthError} for an OAuth error answer, {@link OAuthValidationError}
 * (`response`) for a success that is not a JSON object, {@link UpstreamError} otherwise.
 *
 * @example
 * ```ts
 * const json = await postToEndpoint(send, { role: 'token', url, fields, auth: await auth.parts(), success: 200, redact: [code] })
 * ```
 */
export async function postToEndpoint(send: HttpSend, post: EndpointPost): Promise<Record<string, unknown>> {
  const body = new URLSearchParams(post.fields)
  for (const [name, value] of Object.entries(post.auth.fields)) body.set(name, value)
  const res = await send({
    role: post.role,
    method: 'POST',
    url: post.url,
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json', ...post.auth.headers },
    body: body.toString(),
  })
  const redact = [...post.redact, ...post.auth.secrets]
  const json = parseJson(res.body)
  if (res.status === post.success) {
    if (!isJsonObject(json)) {
      throw new OAuthValidationError('response', `The ${post.role} endpoint answered with a body that is not a JSON object`, { status: 502 })
    }
    const error = errorFromFields(json, { responseStatus: res.status, redact })
    if (error !== undefined) throw error
    return json
  }
  if (res.status >= 400 && res.status < 500 && res.status !== 429 && isJsonObject(json)) {
    const error = errorFromFields(json, { responseStatus: res.status, redact })
    if (error !== undefined) throw error
  }
  throw unexpectedStatus(post.role, res.status)
}
