/**
 * Errors of the OAuth 2.0 / OpenID Connect client.
 *
 * Two kinds, both {@link VootError}s with code `ERR_OAUTH`:
 *
 * - {@link OAuthError}: the provider (or the redirect back from it) said "error", with an
 *   RFC 6749 `error` code such as `access_denied` or `invalid_grant`;
 * - {@link OAuthValidationError}: an answer failed one of the client's own checks (state,
 *   issuer, ID token, response shape, insecure endpoint); `check` says which.
 *
 * Transport failures (timeout, refused connection, redirect, 5xx, oversized body) are
 * {@link UpstreamError}s, as with the group service, so one handler can map both to 503.
 *
 * No message or property ever holds an access token, refresh token, ID token,
 * authorization code, PKCE verifier or client secret: text that comes from the provider is
 * cleaned and any of those values found in it is replaced by `[redacted]`.
 *
 * @module
 */
import { VootError, type VootErrorOptions } from '../src/errors.js'

/** Longest provider-supplied text kept in an error (descriptions can be attacker-chosen). */
const MAX_PROVIDER_TEXT = 300

/**
 * Options of {@link OAuthError}.
 *
 * @example
 * ```ts
 * new OAuthError('invalid_grant', { errorDescription: text, responseStatus: 400, redact: [code, verifier] })
 * ```
 */
export interface OAuthErrorOptions extends VootErrorOptions {
  /** The provider's `error_description`. Cleaned and shortened before use. */
  errorDescription?: string | undefined
  /** The provider's `error_uri`. */
  errorUri?: string | undefined
  /** HTTP status of the provider's answer, when the error came in an HTTP response. */
  responseStatus?: number | undefined
  /** HTTP status an app should answer with. Default 400. */
  status?: number
  /** Values that must not appear in any text of the error (codes, tokens, secrets). */
  redact?: readonly (string | undefined)[]
}

/**
 * The provider answered with an OAuth error: an `error` parameter on the redirect back
 * (RFC 6749 section 4.1.2.1), an error body from the token endpoint (section 5.2), or a
 * `WWW-Authenticate` error from the userinfo endpoint (RFC 6750 section 3).
 *
 * @example
 * ```ts
 * import { OAuthError } from 'voot-guard/oauth'
 * try { await client.handleCallback(req.query, session) } catch (err) {
 *   if (err instanceof OAuthError && err.error === 'access_denied') return res.redirect('/?declined')
 *   throw err
 * }
 * ```
 */
export class OAuthError extends VootError {
  /** The RFC 6749 error code, such as `access_denied`, `invalid_grant`, `invalid_token`. */
  readonly error: string
  /** The provider's human-readable description, cleaned; may be absent. */
  readonly errorDescription: string | undefined
  /** The provider's `error_uri`, when it sent a well-formed one. */
  readonly errorUri: string | undefined
  /** HTTP status of the provider's answer, when the error came in an HTTP response. */
  readonly responseStatus: number | undefined

  constructor(error: string, options: OAuthErrorOptions = {}) {
    const code = cleanErrorCode(error)
    const description = options.errorDescription === undefined ? undefined : cleanText(options.errorDescription, options.redact)
    const from = options.responseStatus === undefined ? '' : ` (HTTP ${options.responseStatus})`
    super(
      'ERR_OAUTH',
      `The authorization server answered with error "${code}"${from}${description === undefined ? '' : `: ${description}`}`,
      options.status ?? 400,
      options,
    )
    this.error = code
    this.errorDescription = description
    this.errorUri = options.errorUri === undefined ? undefined : cleanUri(options.errorUri)
    this.responseStatus = options.responseStatus
  }
}

/**
 * Which check an {@link OAuthValidationError} failed.
 *
 * - `state`: the `state` of the redirect back differs from the one kept in the session;
 * - `issuer`: the `iss` of the redirect back (RFC 9207) or of the discovery document is wrong;
 * - `response`: an answer is missing a field or has one of the wrong type or value;
 * - `id_token`: the ID token's signature, issuer, audience, expiry, ... is not valid;
 * - `nonce`: the ID token's `nonce` differs from the one kept in the session;
 * - `subject`: the userinfo `sub` differs from the ID token's;
 * - `metadata`: the discovery document is unusable;
 * - `endpoint`: a discovered endpoint is not HTTPS (and not loopback) or otherwise unusable.
 *
 * @example
 * ```ts
 * if (err instanceof OAuthValidationError && err.check === 'nonce') log.warn('ID token replay?')
 * ```
 */
export type OAuthCheck = 'state' | 'issuer' | 'response' | 'id_token' | 'nonce' | 'subject' | 'metadata' | 'endpoint'

/**
 * Options of {@link OAuthValidationError}.
 *
 * @example
 * ```ts
 * new OAuthValidationError('metadata', 'The JWKS is malformed', { status: 502 })
 * ```
 */
export interface OAuthValidationErrorOptions extends VootErrorOptions {
  /** HTTP status an app should answer with. Default 400. */
  status?: number
}

/**
 * An answer from the provider (or the redirect back from it) failed one of the client's
 * checks. Nothing from a failed answer is ever used.
 *
 * @example
 * ```ts
 * import { OAuthValidationError } from 'voot-guard/oauth'
 * try { await client.handleCallback(req.query, session) } catch (err) {
 *   if (err instanceof OAuthValidationError && err.check === 'state') return res.status(400).send('Start again')
 *   throw err
 * }
 * ```
 */
export class OAuthValidationError extends VootError {
  /** The check that failed. */
  readonly check: OAuthCheck

  constructor(check: OAuthCheck, message: string, options: OAuthValidationErrorOptions = {}) {
    super('ERR_OAUTH', message, options.status ?? 400, options)
    this.check = check
  }
}

// RFC 6749 appendix A.7: error = 1*( %x20-21 / %x23-5B / %x5D-7E )
const ERROR_CODE = /^[\x20-\x21\x23-\x5B\x5D-\x7E]{1,100}$/

function cleanErrorCode(error: string): string {
  return typeof error === 'string' && ERROR_CODE.test(error) ? error : 'invalid_error_code'
}

/**
 * Provider text made safe for a message: control characters dropped, shortened, and every
 * listed secret value replaced. Secrets are replaced before shortening so that a cut never
 * leaves a recognisable prefix of one.
 */
export function cleanText(text: string, redact: readonly (string | undefined)[] = []): string | undefined {
  if (typeof text !== 'string') return undefined
  let clean = text
  for (const secret of redact) {
    // Shorter values would redact ordinary words and letters; real secrets are longer anyway.
    if (secret !== undefined && secret.length >= 4) clean = clean.split(secret).join('[redacted]')
  }
  // eslint-disable-next-line no-control-regex
  clean = clean.replace(/[\u0000-\u001f\u007f-\u009f]+/g, ' ').trim()
  if (clean.length > MAX_PROVIDER_TEXT) clean = `${clean.slice(0, MAX_PROVIDER_TEXT)}…`
  return clean === '' ? undefined : clean
}

function cleanUri(uri: string): string | undefined {
  if (typeof uri !== 'string' || uri.length > 2000) return undefined
  try {
    const url = new URL(uri)
    return url.protocol === 'https:' || url.protocol === 'http:' ? url.href : undefined
  } catch {
    return undefined
  }
}
