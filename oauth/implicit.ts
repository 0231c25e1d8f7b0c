/**
 * The implicit grant's redirect back (RFC 6749 section 4.2.2): the access token arrives in
 * the fragment of the redirect URI (`#access_token=...&token_type=Bearer&expires_in=...&
 * scope=...&state=...`), where only the browser sees it.
 *
 * The implicit grant is kept because the spec offers it for client-side apps; the OAuth
 * 2.0 Security BCP advises the code flow with PKCE instead wherever a backend exists.
 *
 * This module imports nothing from Node.js, so it can be bundled for the browser.
 *
 * @module
 */
import { InvalidArgumentError } from '../src/errors.js'
import { OAuthValidationError } from './errors.js'
import { readParams, type CallbackParams } from './params.js'
import { errorFromFields, tokenSetFromFields } from './token-response.js'
import type { TokenSet } from './types.js'

/**
 * Options of {@link parseImplicitFragment}.
 *
 * @example
 * ```ts
 * const checks: ImplicitFragmentChecks = { state: sessionStorage.getItem('state') ?? '', scopes: ['groups'] }
 * ```
 */
export interface ImplicitFragmentChecks {
  /** The `state` sent in the authorization request (kept in session storage, say). Required. */
  state: string
  /** The scopes asked for, used when the provider does not list the granted ones. Default `[]`. */
  scopes?: readonly string[]
  /** Clock for `expiresAt`, in ms since the epoch. Default `Date.now`. */
  now?: () => number
  /**
   * The provider's issuer identifier (RFC 9207): an `iss` in the fragment must equal it.
   * Without it, an `iss` cannot be checked, so none is accepted.
   */
  issuer?: string
  /**
   * `true` when the provider's metadata has `authorization_response_iss_parameter_supported:
   * true`: then a fragment without `iss` is refused. Needs `issuer`. Default `false`.
   */
  requireIssuer?: boolean
}

/**
 * Reads the token from an implicit-grant redirect back: checks `state` and `iss` (RFC
 * 9207: when present, it must be `checks.issuer`; with `checks.requireIssuer`, it must be
 * present), turns an `error` into an {@link OAuthError}, and returns the token set (without ID token: an `id_token`
 * in the fragment is dropped, since it is not verified here).
 *
 * @param urlOrFragment - The whole redirect URL (`location.href`), `location.hash`, or the
 *   bare fragment parameters, or them already parsed.
 * @throws {@link OAuthValidationError} (`state`, `issuer`, `response`) or {@link OAuthError}.
 *
 * @example
 * ```ts
 * import { parseImplicitFragment } from 'voot-guard/oauth'
 * const tokens = parseImplicitFragment(location.href, { state: sessionStorage.getItem('state') ?? '', issuer: 'https://auth.example.org' })
 * history.replaceState(null, '', location.pathname) // keep the token out of the history
 * ```
 */
export function parseImplicitFragment(urlOrFragment: CallbackParams, checks: ImplicitFragmentChecks): TokenSet {
  if (typeof checks?.state !== 'string' || checks.state === '') {
    throw new OAuthValidationError('state', 'parseImplicitFragment() needs the state that was sent')
  }
  const params = readParams(urlOrFragment, 'fragment')
  checkRedirectBack(params, checks)
  const fields: Record<string, string> = Object.fromEntries(params)
  delete fields['id_token']
  return Object.freeze(tokenSetFromFields(fields, { requestedScopes: checks.scopes ?? [], sentAt: (checks.now ?? Date.now)() }))
}

/** RFC 9207: the `iss` of the redirect back tells which provider sent the user (mix-up attacks). */
/**
 * The checks of any redirect back, in this order so that a forged error cannot pass for
 * the provider's: the `state`, then the `iss` (RFC 9207), then an `error` as an {@link OAuthError}.
 *
 * @example
 * ```ts
 * checkRedirectBack(readParams(callbackUrl, 'query'), { state, issuer, requireIssuer: true })
 * ```
 */
export function checkRedirectBack(params: ReadonlyMap<string, string>, checks: ImplicitFragmentChecks): void {
  if (params.get('state') !== checks.state) {
    throw new OAuthValidationError('state', 'The state of the redirect back does not match the one sent')
  }
  checkIssuer(params.get('iss'), checks)
  const error = errorFromFields(Object.fromEntries(params))
  if (error !== undefined) throw error
}

function checkIssuer(iss: string | undefined, checks: ImplicitFragmentChecks): void {
  if (checks.requireIssuer === true && typeof checks.issuer !== 'string') {
    throw new InvalidArgumentError('parseImplicitFragment(): checks.requireIssuer needs checks.issuer')
  }
  if (iss === undefined) {
    if (checks.requireIssuer === true)
      throw new OAuthValidationError('issuer', 'The redirect back has no iss, though the provider sends one')
    return
  }
  if (iss !== checks.issuer) {
    throw new OAuthValidationError('issuer', 'The iss of the redirect back names another issuer (or none was expected)')
  }
}
