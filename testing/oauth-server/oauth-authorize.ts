/**
 * The emulated authorization endpoint, `{authUrl}/oauth/authorization`.
 *
 * `GET` checks the request and shows the consent page; the page's form `POST`s the
 * person's choice back here, and the answer is a 302 to the client's redirect URI: with
 * `code` (code flow) in the query, or with the access token (implicit flow) in the
 * fragment, or with `error=access_denied` when the person declines. As RFC 6749 section
 * 4.1.2.1 demands, a request with an unknown client or an unregistered redirect URI is
 * never sent back: it gets an error page.
 *
 * @module
 */
import { randomBytes } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import type { Answer } from '../answer.js'
import {
  CODE_LIFETIME,
  PENDING_LIFETIME,
  digest,
  findClient,
  grantScopes,
  remember,
  type OAuthContext,
  type PendingRequest,
} from './oauth-context.js'
import { readForm } from './oauth-form.js'
import { redirectUriMatches } from './oauth-redirect-uri.js'
import { consentPage, errorPage } from './oauth-pages.js'

/** The path of the authorization endpoint. */
export const AUTHORIZATION_PATH = '/oauth/authorization'

// RFC 6749 appendix A.4 (scope-token) and RFC 7636 section 4.2 (S256 challenge).
const SCOPE = /^[\x21\x23-\x5B\x5D-\x7E]+(?: [\x21\x23-\x5B\x5D-\x7E]+)*$/
const CHALLENGE = /^[A-Za-z0-9\-._~]{43,128}$/

/**
 * Answers one request to the authorization endpoint.
 */
export async function authorize(ctx: OAuthContext, req: IncomingMessage, url: URL): Promise<Answer> {
  if (req.method === 'GET' || req.method === 'HEAD') return showConsent(ctx, url.searchParams)
  if (req.method === 'POST') return decide(ctx, req)
  const page = errorPage(405, 'The authorization endpoint takes GET (and the consent form POST).')
  return { ...page, headers: { ...page.headers, allow: 'GET, POST' } }
}

function showConsent(ctx: OAuthContext, search: URLSearchParams): Answer {
  const params = new Map<string, string>()
  const repeated: string[] = []
  for (const [name, value] of search) {
    if (params.has(name)) repeated.push(name)
    else params.set(name, value)
  }
  const client = findClient(ctx.data, params.get('client_id'))
  if (client === undefined || repeated.includes('client_id')) {
    return errorPage(400, 'The client_id is missing or not registered with this authorization server.')
  }
  const redirectUri = params.get('redirect_uri')
  if (redirectUri === undefined || repeated.includes('redirect_uri') || !redirectUriMatches(client.redirectUris, redirectUri)) {
    return errorPage(400, 'The redirect_uri is missing or not registered for this client.')
  }
  const responseType = params.get('response_type')
  const state = params.get('state')
  const back = (error: string, description: string): Answer =>
    redirectBack(
      ctx,
      { uri: redirectUri, mode: responseType === 'token' ? 'fragment' : 'query', state },
      {
        error,
        error_description: description,
      },
    )

  if (repeated.length > 0) return back('invalid_request', `The parameter ${repeated[0]} appears more than once`)
  if (responseType !== 'code' && responseType !== 'token') {
    return back('unsupported_response_type', 'Only response_type code and token are supported')
  }
  const scope = params.get('scope')
  if (scope !== undefined && scope !== '' && !SCOPE.test(scope)) return back('invalid_scope', 'The scope is malformed')
  const challenge = params.get('code_challenge')
  const method = params.get('code_challenge_method')
  if (challenge !== undefined || method !== undefined) {
    if (challenge === undefined) return back('invalid_request', 'code_challenge_method without code_challenge')
    if (method !== 'S256') return back('invalid_request', 'Only the S256 code_challenge_method is supported')
    if (!CHALLENGE.test(challenge)) return back('invalid_request', 'The code_challenge is malformed')
  }
  if ((params.get('prompt') ?? '').split(' ').includes('none')) {
    return back('login_required', 'The emulator keeps no sign-in session; the person must choose a user')
  }

  const requestId = randomBytes(24).toString('base64url')
  const now = ctx.now()
  const scopes = grantScopes(client, scope)
  const pending: PendingRequest = {
    clientId: client.clientId,
    redirectUri,
    responseType,
    scopes,
    state,
    nonce: params.get('nonce'),
    codeChallenge: challenge,
    expiresAt: now + PENDING_LIFETIME,
  }
  remember(ctx.pending, requestId, pending, now)
  const loginHint = params.get('login_hint')
  return consentPage({
    requestId,
    clientName: client.name ?? client.clientId,
    service: ctx.service,
    redirectUri,
    scopes,
    users: ctx.data.users.map((u) => ({ id: u.id, name: u.name })),
    ...(loginHint === undefined ? {} : { selectedUser: loginHint }),
    // The issuer's path first: one of several emulated services serves under /<name>.
    action: `${new URL(ctx.issuer).pathname.replace(/\/+$/, '')}${AUTHORIZATION_PATH}`,
  })
}

async function decide(ctx: OAuthContext, req: IncomingMessage): Promise<Answer> {
  const form = await readForm(req)
  if (!form.ok) return errorPage(400, form.reason)
  const requestId = form.params.get('request_id') ?? ''
  const pending = ctx.pending.get(requestId)
  const now = ctx.now()
  if (pending === undefined || pending.expiresAt <= now) {
    ctx.pending.delete(requestId)
    return errorPage(400, 'This sign-in request is unknown or has expired. Start again from the application.')
  }
  const mode = pending.responseType === 'token' ? 'fragment' : 'query'
  const decision = form.params.get('decision')
  if (decision === 'decline') {
    ctx.pending.delete(requestId)
    return redirectBack(
      ctx,
      { uri: pending.redirectUri, mode, state: pending.state },
      {
        error: 'access_denied',
        error_description: 'The user declined the request',
      },
    )
  }
  const user = ctx.data.users.find((u) => u.id === form.params.get('user'))
  if (decision !== 'approve' || user === undefined) {
    return errorPage(400, 'Choose a demo user, then Approve or Decline.')
  }
  // One decision per request: a replayed form post finds nothing.
  ctx.pending.delete(requestId)

  if (pending.responseType === 'token') {
    const accessToken = ctx.tokens.issue({
      userId: user.id,
      clientId: pending.clientId,
      scopes: pending.scopes,
      expiresIn: ctx.accessTokenLifetime,
    })
    return redirectBack(
      ctx,
      { uri: pending.redirectUri, mode: 'fragment', state: pending.state },
      {
        access_token: accessToken,
        token_type: 'Bearer',
        expires_in: String(ctx.accessTokenLifetime),
        scope: pending.scopes.join(' '),
      },
    )
  }
  const code = randomBytes(32).toString('base64url')
  remember(
    ctx.codes,
    digest(code),
    {
      clientId: pending.clientId,
      redirectUri: pending.redirectUri,
      userId: user.id,
      scopes: pending.scopes,
      nonce: pending.nonce,
      codeChallenge: pending.codeChallenge,
      authTime: now,
      expiresAt: now + CODE_LIFETIME,
      redeemed: false,
      accessToken: undefined,
    },
    now,
  )
  return redirectBack(ctx, { uri: pending.redirectUri, mode: 'query', state: pending.state }, { code })
}

/**
 * The 302 back to the client, with the parameters in the query (code flow, and errors of
 * it) or the fragment (implicit flow), plus `state` when the request had one and `iss`
 * (RFC 9207).
 */
function redirectBack(
  ctx: OAuthContext,
  { uri, mode, state }: { readonly uri: string; readonly mode: 'query' | 'fragment'; readonly state: string | undefined },
  params: Record<string, string>,
): Answer {
  const url = new URL(uri)
  const all = { ...params, ...(state === undefined ? {} : { state }), iss: ctx.issuer }
  if (mode === 'fragment') {
    url.hash = new URLSearchParams(all).toString()
  } else {
    for (const [name, value] of Object.entries(all)) url.searchParams.append(name, value)
  }
  return { status: 302, headers: { location: url.href, 'cache-control': 'no-store' }, body: '' }
}
