/**
 * Errors of the OAuth client, both {@link VootError}s with code `ERR_OAUTH`: the provider
 * said "error" ({@link OAuthError}), or an answer failed a check ({@link OAuthValidationError}).
 * Transport failures are {@link UpstreamError}s, as with the group service. No message or
 * property ever holds a token, code, verifier, assertion or secret: provider text is
 * cleaned, and every such value found in it is replaced by `[redacted]`.
 *
 * @module
 */
import { VootError, type VootErrorOptions } from '../src/index.js'

/** Longest provider-supplied text kept in an error (descriptions can be attacker-chosen). */
const MAX_PROVIDER_TEXT = 300
// RFC 6749 appendix A.7: error = 1*( %x20-21 / %x23-5B / %x5D-7E )
const ERROR_CODE = /^[\x20-\x21\x23-\x5B\x5D-\x7E]{1,100}$/

/**
 * Options of {@link OAuthError}.
 *
 * @example
 * ```ts
 * new OAuthError('invalid_grant', { errorDescription: text, responseStatus: 400, redact: [code, verifier] })
 * ```
 */
export interface OAuthErrorOptions extends VootErrorOptions {
  /** The provider's `error_description`; cleaned and shortened. */
  errorDescription?: string | undefined
  errorUri?: string | undefined
  /** HTTP status of the provider's answer. */
  responseStatus?: number | undefined
  /** HTTP status an app should answer with. Default 400. */
  status?: number
  /** Values that must not appear in any text of the error. */
  redact?: readonly (string | undefined)[]
}

/**
 * The provider answered with an OAuth error: on the redirect back, from the token or PAR
 * endpoint, or in a `WWW-Authenticate` challenge from userinfo.
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
  readonly errorDescription: string | undefined
  readonly errorUri: string | undefined
  readonly responseStatus: number | undefined

  constructor(error: string, options: OAuthErrorOptions = {}) {
    const code = typeof error === 'string' && ERROR_CODE.test(error) ? error : 'invalid_error_code'
    const description = options.errorDescription === undefined ? undefined : cleanText(options.errorDescription, options.redact)
    const from = options.responseStatus === undefined ? '' : ` (HTTP ${options.responseStatus})`
    const text = description === undefined ? '' : `: ${description}`
    super('ERR_OAUTH', `The authorization server answered with error "${code}"${from}${text}`, options.status ?? 400, options)
    this.error = code
    this.errorDescription = description
    this.errorUri = options.errorUri === undefined ? undefined : cleanUri(options.errorUri)
    this.responseStatus = options.responseStatus
  }
}

/**
 * Which check an {@link OAuthValidationError} failed: the redirect's `state` or `iss`, an
 * answer's shape (`response`), the ID token (`id_token`, `nonce`), the userinfo `subject`,
 * the provider's `metadata`, an insecure `endpoint`, or a back-channel `logout_token`.
 *
 * @example
 * ```ts
 * if (err instanceof OAuthValidationError && err.check === 'nonce') log.warn('ID token replay?')
 * ```
 */
export type OAuthCheck = 'state' | 'issuer' | 'response' | 'id_token' | 'nonce' | 'subject' | 'metadata' | 'endpoint' | 'logout_token'

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
 * An answer from the provider (or the redirect back) failed one of the client's checks;
 * nothing from it is used.
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
  readonly check: OAuthCheck

  constructor(check: OAuthCheck, message: string, options: OAuthValidationErrorOptions = {}) {
    super('ERR_OAUTH', message, options.status ?? 400, options)
    this.check = check
  }
}

/**
 * The {@link OAuthError} for OAuth error fields (a redirect's or a token answer's), or
 * `undefined` when they hold no `error`.
 */
export function errorFromFields(
  fields: Readonly<Record<string, unknown>>,
  options: { readonly responseStatus?: number; readonly redact?: readonly (string | undefined)[] } = {},
): OAuthError | undefined {
  const { error, error_description: description, error_uri: uri } = fields
  if (typeof error !== 'string') return undefined
  // A misconfigured client is the app's fault, not the user's: 500, and not shown to them.
  const status = error === 'invalid_client' || error === 'unauthorized_client' ? 500 : 400
  return new OAuthError(error, {
    ...options,
    status,
    ...(typeof description === 'string' ? { errorDescription: description } : {}),
    ...(typeof uri === 'string' ? { errorUri: uri } : {}),
  })
}

/**
 * Provider text made safe for a message: every listed secret replaced (before shortening,
 * so that a cut never leaves a recognisable prefix), control characters dropped, shortened.
 */
export function cleanText(text: string, redact: readonly (string | undefined)[] = []): string | undefined {
  if (typeof text !== 'string') return undefined
  let clean = text
  // Shorter values would redact ordinary words; real secrets are longer anyway.
  for (const secret of redact) if (secret !== undefined && secret.length >= 4) clean = clean.split(secret).join('[redacted]')
  clean = clean.replace(/[\u0000-\u001f\u007f-\u009f]+/g, ' ').trim()
  if (clean.length > MAX_PROVIDER_TEXT) clean = `${clean.slice(0, MAX_PROVIDER_TEXT)}…`
  return clean === '' ? undefined : clean
}

function cleanUri(uri: string): string | undefined {
  if (typeof uri !== 'string' || uri.length > 2000) return undefined
  const url = URL.canParse(uri) ? new URL(uri) : undefined
  return url?.protocol === 'https:' || url?.protocol === 'http:' ? url.href : undefined
}
