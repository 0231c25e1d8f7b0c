/**
 * The browser's side of the flows, left to the app by openid-client: the authorization request's
 * parameters, the redirect back as any framework hands it over, and the implicit grant's fragment.
 *
 * @module
 */
import { createHash, randomBytes } from 'node:crypto'
import { InvalidArgumentError } from '../src/index.js'
import { errorFromFields, OAuthValidationError } from './errors.js'
import { readScopeArgument, tokenSetFromFields } from './token-set.js'
import type { AuthorizationUrlOptions, CallbackParams, ImplicitFragmentChecks, TokenSet } from './types.js'

// Parameters the client sets itself; `params` must not override them.
const RESERVED = new Set(
  'client_id redirect_uri response_type scope state nonce code_challenge code_challenge_method request_uri'.split(' '),
)
// The response mode each flow reads its answer in; any other (jwt, form_post, ...) never reaches it.
const READABLE_MODE = { code: 'query', token: 'fragment' } as const
// RFC 6749 appendix A.5: state is VSCHARs
const VSCHARS = /^[\x20-\x7E]{1,512}$/
// RFC 7636 section 4.1
const VERIFIER = /^[A-Za-z0-9\-._~]{43,128}$/

/**
 * The PKCE S256 code challenge of a verifier (RFC 7636 section 4.2).
 *
 * @example
 * ```ts
 * codeChallenge('dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk') // 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM'
 * ```
 */
export function codeChallenge(verifier: string): string {
  return createHash('sha256').update(verifier, 'ascii').digest('base64url')
}

/** Whether `value` is a valid PKCE code verifier. */
export function isCodeVerifier(value: unknown): value is string {
  return typeof value === 'string' && VERIFIER.test(value)
}

/** An authorization request's parameters, checked, with what the session must keep. */
export function authorizationParams(
  responseType: 'code' | 'token',
  base: { readonly clientId: string; readonly redirectUri: string; readonly scopes: readonly string[] },
  opts: AuthorizationUrlOptions,
): { params: URLSearchParams; state: string; nonce: string | undefined; codeVerifier: string; maxAge: number | undefined } {
  if (typeof opts !== 'object' || opts === null) throw new InvalidArgumentError('authorizationUrl(): options must be an object')
  const random = (): string => randomBytes(32).toString('base64url')
  const scopes = opts.scope === undefined ? base.scopes : readScopeArgument(opts.scope)
  const state = opts.state === undefined ? random() : vschars('state', opts.state)
  const refuse = (text: string): never => {
    throw new InvalidArgumentError(`authorizationUrl(): ${text}`)
  }
  const params = new URLSearchParams({ response_type: responseType, client_id: base.clientId, redirect_uri: base.redirectUri })
  if (scopes.length > 0) params.set('scope', scopes.join(' '))
  params.set('state', state)
  for (const [name, value] of Object.entries(opts.params ?? {})) {
    if (RESERVED.has(name)) refuse(`params.${name} is set by the client itself`)
    params.set(name, typeof value === 'string' ? value : refuse(`params.${name} must be a string`))
  }
  const mode = params.get('response_mode')
  if (mode !== null && mode !== READABLE_MODE[responseType]) {
    refuse(
      `params.response_mode ${JSON.stringify(mode.slice(0, 40))} cannot be read by this client; leave it out (or use "${READABLE_MODE[responseType]}")`,
    )
  }
  const param = params.get('max_age')
  const maxAge = opts.maxAge ?? (param === null ? undefined : Number(param))
  if (opts.maxAge !== undefined && (typeof opts.maxAge !== 'number' || !Number.isSafeInteger(opts.maxAge) || opts.maxAge < 0)) {
    refuse('maxAge must be a whole number of seconds, 0 or more')
  }
  if (param !== null && !/^\d{1,10}$/.test(param)) refuse('params.max_age must be a whole number of seconds, 0 or more')
  if (param !== null && maxAge !== Number(param)) refuse('maxAge and params.max_age differ; give one')
  if (maxAge !== undefined) params.set('max_age', String(maxAge))
  if (responseType === 'token') return { params, state, nonce: undefined, codeVerifier: '', maxAge }
  const nonce = opts.nonce !== undefined ? vschars('nonce', opts.nonce) : scopes.includes('openid') ? random() : undefined
  const codeVerifier = random()
  params.set('code_challenge', codeChallenge(codeVerifier))
  params.set('code_challenge_method', 'S256')
  if (nonce !== undefined) params.set('nonce', nonce)
  return { params, state, nonce, codeVerifier, maxAge }
}

function vschars(name: string, value: unknown): string {
  if (typeof value !== 'string' || !VSCHARS.test(value))
    throw new InvalidArgumentError(`${name} must be 1 to 512 printable ASCII characters`)
  return value
}

/** The parameters of a redirect back, each once (a repeated one is refused, RFC 6749 section 3.1). */
export function readParams(input: CallbackParams, part: 'query' | 'fragment'): Map<string, string> {
  const entries = typeof input === 'string' ? new URLSearchParams(paramString(input, part === 'query' ? '?' : '#')) : input
  if (typeof entries !== 'object' || entries === null) {
    throw new OAuthValidationError('response', 'The redirect parameters must be a string, URLSearchParams or an object')
  }
  const params = new Map<string, string>()
  for (const [name, value] of entries instanceof URLSearchParams ? entries : Object.entries(entries)) {
    const safe = name.replace(/[^\x21-\x7e]/g, '?').slice(0, 40)
    if (value === undefined) continue
    if (params.has(name) || Array.isArray(value))
      throw new OAuthValidationError('response', `The redirect parameter "${safe}" appears more than once`)
    if (typeof value !== 'string') throw new OAuthValidationError('response', `The redirect parameter "${safe}" is not a string`)
    params.set(name, value)
  }
  return params
}

function paramString(input: string, marker: '?' | '#'): string {
  if (input.startsWith(marker)) return input.slice(1)
  if (URL.canParse(input)) return (marker === '?' ? new URL(input).search : new URL(input).hash).slice(1)
  // A relative URL such as Express's `req.originalUrl` ('/callback?code=...'), or bare parameters.
  const part = marker === '?' ? (input.split('#')[0] ?? '') : input
  return part.includes(marker) ? part.slice(part.indexOf(marker) + 1) : part
}

/**
 * The checks of any redirect back, in this order so that a forged error cannot pass for the
 * provider's: `state`, then `iss` (RFC 9207), then an `error` as an {@link OAuthError}.
 */
export function checkRedirectBack(params: ReadonlyMap<string, string>, checks: ImplicitFragmentChecks): void {
  if (params.get('state') !== checks.state)
    throw new OAuthValidationError('state', 'The state of the redirect back does not match the one sent')
  if (checks.requireIssuer === true && typeof checks.issuer !== 'string') {
    throw new InvalidArgumentError('parseImplicitFragment(): checks.requireIssuer needs checks.issuer')
  }
  const iss = params.get('iss')
  if (iss === undefined ? checks.requireIssuer === true : iss !== checks.issuer) {
    throw new OAuthValidationError('issuer', 'The iss of the redirect back is missing or names another issuer')
  }
  const error = errorFromFields(Object.fromEntries(params))
  if (error !== undefined) throw error
}

/**
 * Reads the token from an implicit-grant redirect back: checks `state` and `iss`, turns an
 * `error` into an {@link OAuthError}, and returns the token set (an `id_token` in the
 * fragment is dropped: it is not verified here).
 *
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
  if (typeof checks !== 'object' || typeof checks.state !== 'string' || checks.state === '') {
    throw new OAuthValidationError('state', 'parseImplicitFragment() needs the state that was sent')
  }
  const params = readParams(urlOrFragment, 'fragment')
  checkRedirectBack(params, checks)
  params.delete('id_token')
  const sentAt = (checks.now ?? Date.now)()
  return Object.freeze(tokenSetFromFields(Object.fromEntries(params), { requestedScopes: checks.scopes ?? [], sentAt }))
}
