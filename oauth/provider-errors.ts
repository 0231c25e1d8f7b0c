/**
 * openid-client's errors as this package's: transport failures, 5xx and 429 as
 * {@link UpstreamError}s (503, as with the group service), OAuth error answers as
 * {@link OAuthError}s, failed checks as {@link OAuthValidationError}s. None keeps the
 * library's error as its cause: that chain holds the request and the answer.
 *
 * @module
 */
import { ClientError, ResponseBodyError, WWWAuthenticateChallengeError } from 'openid-client'
import { VootError } from '../src/index.js'
import { errorFromFields, OAuthError, OAuthValidationError } from './errors.js'
import { jsonObject, unexpectedStatus, type EndpointRole } from './fetch.js'

interface CheckFailure {
  readonly message: string
  readonly code?: string
  readonly cause?: { readonly claim?: unknown; readonly body?: unknown }
}

/** This package's error for a failed openid-client call to `role`; `redact` lists the values no text may hold. */
export async function providerError(err: unknown, role: EndpointRole, redact: readonly (string | undefined)[]): Promise<Error> {
  // Our own errors (thrown by the fetch function: timeouts, redirects, oversized bodies) come wrapped.
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 4; e = e.cause, depth++) {
    if (e instanceof VootError) return e
  }
  if (err instanceof ResponseBodyError) {
    if (err.status >= 500 || err.status === 429) return unexpectedStatus(role, err.status)
    return errorFromFields(err.cause, { responseStatus: err.status, redact }) ?? unexpectedStatus(role, err.status)
  }
  if (err instanceof WWWAuthenticateChallengeError) {
    const status = err.status
    const fields = err.cause.find((challenge) => typeof challenge.parameters.error === 'string')?.parameters
    if (role !== 'userinfo') {
      // A token endpoint's challenge (Basic realm=...) comes with the error in the body.
      const body: Readonly<Record<string, unknown>> = { ...(fields ?? (await jsonObject(err.response))) }
      return errorFromFields(body, { responseStatus: status, redact }) ?? unexpectedStatus(role, status)
    }
    const error = fields?.error ?? (status === 403 ? 'insufficient_scope' : 'invalid_token')
    const description = fields?.error_description
    return new OAuthError(error, {
      status,
      responseStatus: status,
      redact,
      ...(description === undefined ? {} : { errorDescription: description }),
    })
  }
  if (err instanceof ClientError && err.cause instanceof Response) return unexpectedStatus(role, err.cause.status)
  const failure = (err instanceof ClientError && err.cause instanceof Error ? err.cause : err) as CheckFailure
  const body = failure.cause?.body
  const inBody = typeof body === 'object' && body !== null ? errorFromFields(body as Record<string, unknown>, { redact }) : undefined
  // An OAuth error in a 200 answer is still the provider saying "error".
  if (inBody !== undefined) return inBody
  return checkError(failure, role)
}

function checkError(failure: CheckFailure, role: EndpointRole): OAuthValidationError {
  // The library's messages are fixed texts that name the claim or field; they hold no value.
  const text = typeof failure.message === 'string' ? failure.message.slice(0, 200) : 'unexpected failure'
  const claim = failure.cause?.claim
  if (claim === 'nonce') return new OAuthValidationError('nonce', "The ID token's nonce does not match the one sent", { status: 502 })
  if (role === 'userinfo' && /"sub"/.test(text)) {
    return new OAuthValidationError('subject', "The userinfo sub differs from the ID token's", { status: 502 })
  }
  if (role === 'token' && (failure.code?.startsWith('OAUTH_JWT_') === true || /JWT|ID Token|id_token/.test(text))) {
    const reason = claim === 'exp' ? 'it has expired' : claim === 'auth_time' ? 'its "auth_time" is older than the max_age sent' : text
    return new OAuthValidationError('id_token', `The ID token is not valid: ${reason}`, { status: 502 })
  }
  return new OAuthValidationError('response', `The ${role} endpoint's answer is not valid: ${text}`, { status: 502 })
}
