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
}

/**
 * Reads the token from an implicit-grant redirect back: checks `state`, turns an `error`
 * into an {@link OAuthError}, and returns the token set (without ID token: an `id_token`
 * in the fragment is dropped, since it is not verified here).
 *
 * @param urlOrFragment - The whole redirect URL (`location.href`), `location.hash`, or the
 *   bare fragment parameters, or them already parsed.
 * @throws {@link OAuthValidationError} (`state`, `response`) or {@link OAuthError}.
 *
 * @example
 * ```ts
 * import { parseImplicitFragment } from 'voot-guard/oauth'
 * const tokens = parseImplicitFragment(location.href, { state: sessionStorage.getItem('state') ?? '' })
 * history.replaceState(null, '', location.pathname) // keep the token out of the history
 * ```
 */
export function parseImplicitFragment(urlOrFragment: CallbackParams, checks: ImplicitFragmentChecks): TokenSet {
  if (typeof checks?.state !== 'string' || checks.state === '') {
    throw new OAuthValidationError('state', 'parseImplicitFragment() needs the state that was sent')
  }
  const params = readParams(urlOrFragment, 'fragment')
  if (params.get('state') !== checks.state) {
    throw new OAuthValidationError('state', 'The state of the redirect back does not match the one sent')
  }
  const fields: Record<string, string> = Object.fromEntries(params)
  const error = errorFromFields(fields)
  if (error !== undefined) throw error
  delete fields['id_token']
  return Object.freeze(
    tokenSetFromFields(fields, { requestedScopes: checks.scopes ?? [], sentAt: (checks.now ?? Date.now)() }),
  )
}
