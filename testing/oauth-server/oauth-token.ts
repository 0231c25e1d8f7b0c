/**
 * The emulated token endpoint, `{authUrl}/oauth/token`.
 *
 * - client authentication: HTTP Basic (`client_secret_basic`, both parts form-urlencoded
 *   as RFC 6749 section 2.3.1 says) or `client_id` + `client_secret` in the body
 *   (`client_secret_post`); never both;
 * - `authorization_code`: single-use codes that expire after 60 s, issued to the
 *   authenticating client, `redirect_uri` equal to the authorization request's, PKCE S256
 *   verified when a challenge was sent (and a verifier refused when none was); a second
 *   redemption fails and revokes the token of the first (RFC 6749 section 4.1.2);
 * - `client_credentials`: a client-only token;
 * - errors as RFC 6749 section 5.2 JSON with 400, or 401 for client authentication;
 * - every answer `Cache-Control: no-store`.
 *
 * @module
 */
import { createHash, timingSafeEqual } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import { jsonAnswer, type Answer } from '../answer.js'
import type { EmulatorClient } from '../data/data.js'
import { ID_TOKEN_LIFETIME, digest, findClient, grantScopes, type OAuthContext } from './oauth-context.js'
import { readForm } from './oauth-form.js'
import { startSession } from './oauth-sessions.js'

/** The path of the token endpoint. */
export const TOKEN_PATH = '/oauth/token'

const NO_STORE = { 'cache-control': 'no-store', pragma: 'no-cache' } as const

type ClientAuth = { readonly ok: true; readonly client: EmulatorClient } | { readonly ok: false; readonly answer: Answer }

/**
 * Answers one request to the token endpoint.
 */
export async function token(ctx: OAuthContext, req: IncomingMessage): Promise<Answer> {
  if (req.method !== 'POST') {
    req.resume()
    return tokenError(405, 'invalid_request', 'The token endpoint takes POST', { allow: 'POST' })
  }
  const form = await readForm(req)
  if (!form.ok) return tokenError(400, 'invalid_request', form.reason)
  const auth = authenticateClient(ctx, req.headers.authorization, form.params)
  if (!auth.ok) return auth.answer
  const grantType = form.params.get('grant_type')
  if (grantType === 'authorization_code') return redeemCode(ctx, auth.client, form.params)
  if (grantType === 'client_credentials') return clientCredentials(ctx, auth.client, form.params)
  if (grantType === undefined) return tokenError(400, 'invalid_request', 'The grant_type is missing')
  return tokenError(400, 'unsupported_grant_type', 'Only authorization_code and client_credentials are supported')
}

function authenticateClient(ctx: OAuthContext, header: string | undefined, params: Map<string, string>): ClientAuth {
  const basic = header === undefined ? null : /^basic[ \t]+(\S+)\s*$/i.exec(header)
  const bodyId = params.get('client_id')
  const bodySecret = params.get('client_secret')
  let clientId: string | undefined
  let secret: string | undefined
  if (basic !== null) {
    if (bodySecret !== undefined) {
      return { ok: false, answer: tokenError(400, 'invalid_request', 'Use one client authentication method, not two') }
    }
    const decoded = decodeBasic(basic[1] ?? '')
    if (decoded === undefined) return { ok: false, answer: invalidClient(true) }
    ;[clientId, secret] = decoded
    if (bodyId !== undefined && bodyId !== clientId) return { ok: false, answer: invalidClient(true) }
  } else if (bodySecret !== undefined) {
    clientId = bodyId
    secret = bodySecret
  } else {
    // Every registered client is confidential: no secret, no token.
    return { ok: false, answer: invalidClient(header !== undefined) }
  }
  const client = findClient(ctx.data, clientId)
  if (client === undefined || secret === undefined || !sameSecret(client.clientSecret, secret)) {
    return { ok: false, answer: invalidClient(basic !== null) }
  }
  return { ok: true, client }
}

async function redeemCode(ctx: OAuthContext, client: EmulatorClient, params: Map<string, string>): Promise<Answer> {
  const code = params.get('code')
  if (code === undefined || code === '') return tokenError(400, 'invalid_request', 'The code is missing')
  const record = ctx.codes.get(digest(code))
  const invalid = (why: string): Answer => tokenError(400, 'invalid_grant', why)
  if (record === undefined || record.clientId !== client.clientId) return invalid('The code is unknown')
  if (record.redeemed) {
    // RFC 6749 section 4.1.2: a reused code is a sign of theft; what it gave out is withdrawn.
    if (record.accessToken !== undefined) ctx.tokens.revoke(record.accessToken)
    record.accessToken = undefined
    return invalid('The code has already been used')
  }
  record.redeemed = true
  const now = ctx.now()
  if (record.expiresAt <= now) return invalid('The code has expired')
  if (params.get('redirect_uri') !== record.redirectUri) {
    return invalid('The redirect_uri differs from the one of the authorization request')
  }
  const verifier = params.get('code_verifier')
  if (record.codeChallenge === undefined) {
    if (verifier !== undefined) return invalid('A code_verifier was sent, but the authorization request had no code_challenge')
  } else if (verifier === undefined || createHash('sha256').update(verifier, 'ascii').digest('base64url') !== record.codeChallenge) {
    return invalid('The code_verifier does not match the code_challenge')
  }
  const accessToken = ctx.tokens.issue({
    userId: record.userId,
    clientId: client.clientId,
    scopes: record.scopes,
    expiresIn: ctx.accessTokenLifetime,
  })
  record.accessToken = accessToken
  const body: Record<string, unknown> = {
    access_token: accessToken,
    token_type: 'Bearer',
    expires_in: ctx.accessTokenLifetime,
    scope: record.scopes.join(' '),
  }
  if (record.scopes.includes('openid')) {
    const user = ctx.data.users.find((u) => u.id === record.userId)
    const seconds = Math.floor(now / 1000)
    body['id_token'] = await ctx.keys.sign({
      iss: ctx.issuer,
      sub: record.userId,
      aud: client.clientId,
      exp: seconds + ID_TOKEN_LIFETIME,
      iat: seconds,
      auth_time: Math.floor(record.authTime / 1000),
      // The provider session: a back-channel logout names it.
      sid: startSession(ctx, record.userId, client.clientId),
      ...(record.nonce === undefined ? {} : { nonce: record.nonce }),
      at_hash: atHash(accessToken),
      ...(record.scopes.includes('profile') && user !== undefined ? { name: user.name } : {}),
      ...(record.scopes.includes('email') && user?.email !== undefined ? { email: user.email } : {}),
    })
  }
  return jsonAnswer(200, body, NO_STORE)
}

function clientCredentials(ctx: OAuthContext, client: EmulatorClient, params: Map<string, string>): Answer {
  // A client-only token represents no user, so it carries no openid scope and no ID token.
  const scopes = grantScopes(client, params.get('scope')).filter((s) => s !== 'openid')
  const accessToken = ctx.tokens.issue({ clientId: client.clientId, scopes, expiresIn: ctx.accessTokenLifetime })
  return jsonAnswer(
    200,
    { access_token: accessToken, token_type: 'Bearer', expires_in: ctx.accessTokenLifetime, scope: scopes.join(' ') },
    NO_STORE,
  )
}

/**
 * An RFC 6749 section 5.2 error answer.
 */
export function tokenError(status: number, error: string, description: string, headers: Readonly<Record<string, string>> = {}): Answer {
  return jsonAnswer(status, { error, error_description: description }, { ...NO_STORE, ...headers })
}

function invalidClient(usedHeader: boolean): Answer {
  // RFC 6749 section 5.2: 401, with a challenge for the scheme the client tried.
  return tokenError(401, 'invalid_client', 'Client authentication failed', {
    ...(usedHeader ? { 'www-authenticate': 'Basic realm="voot-guard-emulator"' } : {}),
  })
}

/** `client_id:client_secret` from a Basic credential, each part form-urldecoded. */
function decodeBasic(credential: string): [string, string] | undefined {
  const text = Buffer.from(credential, 'base64').toString('utf8')
  const colon = text.indexOf(':')
  if (colon < 0) return undefined
  try {
    const decode = (part: string): string => decodeURIComponent(part.replace(/\+/g, ' '))
    return [decode(text.slice(0, colon)), decode(text.slice(colon + 1))]
  } catch {
    return undefined
  }
}

function sameSecret(expected: string, given: string): boolean {
  const a = createHash('sha256').update(expected).digest()
  const b = createHash('sha256').update(given).digest()
  return timingSafeEqual(a, b)
}

/** OpenID Connect Core section 3.1.3.6: left half of SHA-256 of the access token, base64url. */
function atHash(accessToken: string): string {
  return createHash('sha256').update(accessToken, 'ascii').digest().subarray(0, 16).toString('base64url')
}
