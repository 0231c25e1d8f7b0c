/**
 * The emulated provider's sessions, and their ends: each sign-in that gets an ID token is a
 * provider session (`sid` in the ID token); ending a user's sessions (the console,
 * `voot-guard emulator sessions end`, `emulator.oauth.endSessions`) sends each client
 * registered with a `backchannelLogoutUri` a Logout Token (OpenID Connect Back-Channel
 * Logout 1.0) for each of its sessions of that user, or, when none is known (the emulator
 * restarted since), one naming the user alone. `GET /oauth/logout` is the RP-Initiated
 * Logout 1.0 end-session endpoint: it ends the sessions of the `id_token_hint`'s user and
 * sends the browser to a `post_logout_redirect_uri` the client registered.
 *
 * @module
 */
import { randomBytes } from 'node:crypto'
import { request } from 'node:http'
import { request as requestTls } from 'node:https'
import { decodeJwt } from 'jose'
import { jsonAnswer, type Answer } from '../answer.js'
import type { EmulatorClient } from '../data/data.js'
import { redirectUriMatches } from './oauth-redirect-uri.js'
import { findClient, remember, type OAuthContext } from './oauth-context.js'

/** The path of the end-session endpoint. */
export const END_SESSION_PATH = '/oauth/logout'

/** The event that makes a JWT a Logout Token. */
const LOGOUT_EVENT = 'http://schemas.openid.net/event/backchannel-logout'
/** How long a provider session is remembered: as long as a sign-in's refresh could last here. */
const SESSION_LIFETIME = 24 * 3_600_000
/** How long a client has to answer a Logout Token. */
const DELIVERY_TIMEOUT = 5_000

/** What ending a user's sessions did: how many were known, and each Logout Token's delivery. */
export interface SessionsEnded {
  readonly sessions: number
  /** One per Logout Token sent: the client, and the status it answered (0: no answer). */
  readonly notified: readonly { readonly clientId: string; readonly status: number }[]
}

/** Starts a provider session of `userId` at `clientId`; returns its `sid`. */
export function startSession(ctx: OAuthContext, userId: string, clientId: string): string {
  const sid = randomBytes(16).toString('base64url')
  const now = ctx.now()
  remember(ctx.sessions, sid, { userId, clientId, expiresAt: now + SESSION_LIFETIME }, now)
  return sid
}

/**
 * Ends every session of `userId`, telling each client that registered a
 * `backchannelLogoutUri`; resolves once every client answered or timed out.
 */
export async function endSessions(ctx: OAuthContext, userId: string): Promise<SessionsEnded> {
  const now = ctx.now()
  const ended: { sid: string | undefined; client: EmulatorClient }[] = []
  let sessions = 0
  for (const [sid, session] of ctx.sessions) {
    if (session.userId !== userId) continue
    ctx.sessions.delete(sid)
    if (session.expiresAt <= now) continue
    sessions++
    const client = findClient(ctx.data, session.clientId)
    if (client !== undefined && typeof client['backchannelLogoutUri'] === 'string') ended.push({ sid, client })
  }
  // None known (the emulator restarted since the sign-in): the user's sessions, by `sub` alone.
  if (sessions === 0) {
    for (const client of ctx.data.clients) if (typeof client['backchannelLogoutUri'] === 'string') ended.push({ sid: undefined, client })
  }
  const notified = await Promise.all(
    ended.map(async ({ sid, client }) => ({ clientId: client.clientId, status: await deliver(ctx, client, userId, sid) })),
  )
  return { sessions, notified }
}

async function deliver(ctx: OAuthContext, client: EmulatorClient, userId: string, sid: string | undefined): Promise<number> {
  const seconds = Math.floor(ctx.now() / 1000)
  const token = await ctx.keys.sign(
    {
      iss: ctx.issuer,
      aud: client.clientId,
      iat: seconds,
      exp: seconds + 120,
      jti: randomBytes(16).toString('base64url'),
      sub: userId,
      ...(sid === undefined ? {} : { sid }),
      events: { [LOGOUT_EVENT]: {} },
    },
    'logout+jwt',
  )
  return post(String(client['backchannelLogoutUri']), new URLSearchParams({ logout_token: token }).toString())
}

/** POSTs a form; resolves the status, or 0 when there was no answer in time. */
function post(uri: string, body: string): Promise<number> {
  return new Promise((resolve) => {
    let url: URL
    try {
      url = new URL(uri)
    } catch {
      resolve(0)
      return
    }
    const send = url.protocol === 'https:' ? requestTls : request
    const req = send(
      url,
      {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-length': Buffer.byteLength(body) },
        timeout: DELIVERY_TIMEOUT,
      },
      (res) => {
        res.resume()
        resolve(res.statusCode ?? 0)
      },
    )
    req.on('timeout', () => req.destroy())
    req.on('error', () => resolve(0))
    req.end(body)
  })
}

/**
 * `GET /oauth/logout` (RP-Initiated Logout 1.0): ends the sessions of the `id_token_hint`'s
 * user (its signature is not checked: this is an emulator; an unreadable hint ends nothing),
 * then redirects to `post_logout_redirect_uri` when the `client_id`'s client registered it
 * (among its `postLogoutRedirectUris`, or matching its redirect URIs as they are matched),
 * with `state`; else a page that says the user is signed out.
 */
export async function endSession(ctx: OAuthContext, url: URL): Promise<Answer> {
  const params = url.searchParams
  const hint = params.get('id_token_hint')
  let userId: string | undefined
  if (hint !== null) {
    try {
      const claims = decodeJwt(hint)
      if (claims.iss === ctx.issuer && typeof claims.sub === 'string') userId = claims.sub
    } catch {
      // No user named: nothing ended.
    }
  }
  if (userId !== undefined) await endSessions(ctx, userId)
  const client = findClient(ctx.data, params.get('client_id') ?? undefined)
  const target = params.get('post_logout_redirect_uri')
  if (target !== null) {
    const registered = [...((client?.['postLogoutRedirectUris'] as string[] | undefined) ?? []), ...(client?.redirectUris ?? [])]
    if (client === undefined || !redirectUriMatches(registered, target)) {
      return jsonAnswer(400, { error: 'invalid_request', error_description: 'post_logout_redirect_uri is not registered for client_id' })
    }
    const back = new URL(target)
    const state = params.get('state')
    if (state !== null) back.searchParams.set('state', state)
    return { status: 302, headers: { location: back.href, 'cache-control': 'no-store' }, body: '' }
  }
  return {
    status: 200,
    headers: { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' },
    body: 'You are signed out of the emulator.\n',
  }
}
