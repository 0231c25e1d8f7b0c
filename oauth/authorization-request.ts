/**
 * The parameters of an authorization request (RFC 6749 sections 4.1.1 and 4.2.1, OpenID
 * Connect Core section 3.1.2.1): the client's own (`response_type`, `client_id`,
 * `redirect_uri`, `scope`, `state`, `nonce`, PKCE, `max_age`) and the caller's extra ones,
 * checked so that the answer can be read on the way back.
 *
 * @module
 */
import { InvalidArgumentError } from '../src/errors.js'
import type { AuthorizationUrlOptions } from './client-types.js'
import { codeChallenge, randomValue } from './pkce.js'
import { readScopeArgument } from './scope.js'

/**
 * What the request is built from.
 *
 * @example
 * ```ts
 * const input: AuthorizationInput = { responseType: 'code', clientId, redirectUri, defaultScopes: ['openid'], options: {} }
 * ```
 */
export interface AuthorizationInput {
  readonly responseType: 'code' | 'token'
  readonly clientId: string
  readonly redirectUri: string
  readonly defaultScopes: readonly string[]
  /** The caller's options, not yet checked. */
  readonly options: AuthorizationUrlOptions
}

/**
 * A built request: its parameters, and what the redirect back is checked against.
 *
 * @example
 * ```ts
 * const { params, state, nonce, codeVerifier, maxAge } = buildAuthorizationRequest(input)
 * ```
 */
export interface BuiltAuthorizationRequest {
  readonly params: URLSearchParams
  readonly state: string
  readonly nonce: string | undefined
  /** The PKCE verifier (code flow only). */
  readonly codeVerifier: string | undefined
  readonly maxAge: number | undefined
}

// Parameters the client sets itself; `params` must not override them.
const RESERVED_PARAMS = new Set([
  'client_id',
  'redirect_uri',
  'response_type',
  'scope',
  'state',
  'nonce',
  'code_challenge',
  'code_challenge_method',
  'request_uri',
])

// The response mode each flow reads its answer in; any other (jwt, form_post, ...) never reaches it.
const READABLE_RESPONSE_MODE = { code: 'query', token: 'fragment' } as const

// RFC 6749 appendix A.1 / A.5: client_id and state are VSCHARs
const VSCHARS = /^[\x20-\x7E]+$/

/**
 * Builds and checks the parameters of an authorization request. The code flow always
 * gets PKCE S256, and a nonce when the scope has `openid`.
 *
 * @throws {@link InvalidArgumentError} for bad options, a reserved parameter in `params`,
 * a `response_mode` the client cannot read, or a bad `max_age`.
 *
 * @example
 * ```ts
 * const built = buildAuthorizationRequest({ responseType: 'code', clientId, redirectUri, defaultScopes, options: { maxAge: 600 } })
 * const url = new URL(metadata.authorization_endpoint)
 * url.search = built.params.toString()
 * ```
 */
export function buildAuthorizationRequest(input: AuthorizationInput): BuiltAuthorizationRequest {
  const opts = input.options
  if (typeof opts !== 'object' || opts === null) throw new InvalidArgumentError('authorizationUrl(): options must be an object')
  const scopes = opts.scope === undefined ? input.defaultScopes : readScopeArgument(opts.scope)
  const state = opts.state === undefined ? randomValue() : readVschars('state', opts.state)
  const params = new URLSearchParams()
  params.set('response_type', input.responseType)
  params.set('client_id', input.clientId)
  params.set('redirect_uri', input.redirectUri)
  if (scopes.length > 0) params.set('scope', scopes.join(' '))
  params.set('state', state)
  for (const [name, value] of Object.entries(opts.params ?? {})) {
    if (RESERVED_PARAMS.has(name)) throw new InvalidArgumentError(`authorizationUrl(): params.${name} is set by the client itself`)
    if (typeof value !== 'string') throw new InvalidArgumentError(`authorizationUrl(): params.${name} must be a string`)
    params.set(name, value)
  }
  const mode = params.get('response_mode')
  const readable = READABLE_RESPONSE_MODE[input.responseType]
  if (mode !== null && mode !== readable) {
    throw new InvalidArgumentError(
      `authorizationUrl(): params.response_mode ${JSON.stringify(mode.slice(0, 40))} cannot be read by this client; ` +
        `leave it out (or use "${readable}")`,
    )
  }
  const maxAge = readMaxAge(opts.maxAge, params.get('max_age'))
  if (maxAge !== undefined) params.set('max_age', String(maxAge))
  if (input.responseType === 'token') return { params, state, nonce: undefined, codeVerifier: undefined, maxAge }
  const nonce = opts.nonce !== undefined ? readVschars('nonce', opts.nonce) : scopes.includes('openid') ? randomValue() : undefined
  const codeVerifier = randomValue()
  params.set('code_challenge', codeChallenge(codeVerifier))
  params.set('code_challenge_method', 'S256')
  if (nonce !== undefined) params.set('nonce', nonce)
  return { params, state, nonce, codeVerifier, maxAge }
}

function readMaxAge(option: unknown, param: string | null): number | undefined {
  if (option !== undefined && (typeof option !== 'number' || !Number.isSafeInteger(option) || option < 0)) {
    throw new InvalidArgumentError('authorizationUrl(): maxAge must be a whole number of seconds, 0 or more')
  }
  if (param === null) return option as number | undefined
  if (!/^\d{1,10}$/.test(param)) {
    throw new InvalidArgumentError('authorizationUrl(): params.max_age must be a whole number of seconds, 0 or more')
  }
  if (option !== undefined && option !== Number(param)) {
    throw new InvalidArgumentError('authorizationUrl(): maxAge and params.max_age differ; give one')
  }
  return Number(param)
}

function readVschars(name: string, value: unknown): string {
  if (typeof value !== 'string' || !VSCHARS.test(value) || value.length > 512) {
    throw new InvalidArgumentError(`${name} must be 1 to 512 printable ASCII characters`)
  }
  return value
}
