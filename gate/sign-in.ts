/**
 * The browser endpoints: `GET /_gate/signin?rd=` (the code flow with PKCE through
 * `voot-guard/oauth`, its state in a short-lived sealed cookie; or a refresh of an expired
 * session), `GET /_gate/callback` (the session cookie), `POST /_gate/signout` (same-origin
 * only; clears the cookie and the token's cached answers across the fleet).
 *
 * @module
 */
import type { IncomingMessage } from 'node:http'
import type { GuardCore } from '../src/adapter-kit.js'
import { jsonAnswer, redirectAnswer, type Answer } from './answer.js'
import { browserOrigin, type BrowserOrigin } from './browser-origin.js'
import { isLoopbackHostname } from './loopback.js'
import type { GateMetrics } from './metrics.js'
import type { GateOAuth } from './oauth-clients.js'
import { safeRedirect } from './redirect-target.js'
import type { GateSession, SessionCookies } from './session.js'
import type { TrustCheck } from './trusted-proxies.js'

/** What the browser endpoints need. */
export interface SignInDependencies {
  readonly core: GuardCore
  readonly oauth: GateOAuth
  readonly cookies: SessionCookies
  readonly trusted: TrustCheck
  /** Whether an absolute `rd` may name `host` besides the request's own. */
  readonly isRedirectHost: (host: string) => boolean
  /** Whether the gate serves `host` (always, unless `strictHosts` is on and nothing names it). */
  readonly isServedHost: (host: string) => boolean
  readonly metrics: GateMetrics
  readonly now: () => number
  /** Reports what an operator should see (never a token). */
  readonly log: (message: string) => void
}

/** The browser endpoints' handlers. */
export interface SignInHandlers {
  signIn(req: IncomingMessage, query: URLSearchParams): Promise<Answer>
  callback(req: IncomingMessage, url: string): Promise<Answer>
  signOut(req: IncomingMessage, query: URLSearchParams): Promise<Answer>
}

const invalid = (description: string) => jsonAnswer(400, { error: 'invalid_request', error_description: description })
const unavailable = () =>
  jsonAnswer(
    503,
    { error: 'temporarily_unavailable', error_description: 'The sign-in service is temporarily unavailable; try again later' },
    { 'retry-after': '5' },
  )

/** Creates the handlers. */
export function createSignInHandlers(deps: SignInDependencies): SignInHandlers {
  const { core, oauth, cookies, trusted, isRedirectHost, isServedHost, metrics, now, log } = deps

  /** The request's origin, or the answer refusing it: no host named, or (strictHosts) one the gate does not serve. */
  function originOf(req: IncomingMessage): BrowserOrigin | Answer {
    const origin = browserOrigin(req, trusted)
    if (origin === undefined) return invalid('The request does not name its host')
    if (!isServedHost(origin.host)) return jsonAnswer(403, { error: 'forbidden', error_description: 'The gate serves no such host' })
    return origin
  }

  function target(query: URLSearchParams, origin: BrowserOrigin): string | undefined {
    return safeRedirect(query.get('rd') ?? '/', isRedirectHost, origin)
  }

  async function refreshed(session: GateSession, origin: BrowserOrigin): Promise<string | undefined> {
    if (session.refreshToken === undefined) return undefined
    try {
      const client = oauth.clientFor(oauth.redirectUri ?? `${origin.scheme}://${origin.authority}/_gate/callback`)
      const tokens = await client.refresh(session.refreshToken)
      if (tokens.tokenType !== 'Bearer') return undefined
      return cookies.writeSession(
        {
          ...session,
          accessToken: tokens.accessToken,
          expiresAt: tokens.expiresAt,
          refreshToken: tokens.refreshToken ?? session.refreshToken,
        },
        origin,
      )
    } catch {
      return undefined
    }
  }

  return {
    async signIn(req, query) {
      const origin = originOf(req)
      if ('status' in origin) return origin
      const rd = target(query, origin)
      if (rd === undefined) return invalid('rd must be a relative path or a URL on a host the gate knows')
      if (origin.scheme === 'http' && !isLoopbackHostname(origin.host)) {
        return invalid('Sign-in needs https (the session cookie is Secure); plain http works on loopback only')
      }
      const session = cookies.readSession(req.headers.cookie, origin)
      if (session !== undefined) {
        const cookie = await refreshed(session, origin)
        if (cookie !== undefined) {
          metrics.signIn('refreshed')
          return redirectAnswer(302, rd, [cookie])
        }
      }
      const redirectUri = oauth.redirectUri ?? `${origin.scheme}://${origin.authority}/_gate/callback`
      try {
        const request = await oauth.clientFor(redirectUri).authorizationUrl()
        const cookie = cookies.writeSignIn(
          {
            state: request.state,
            nonce: request.nonce,
            codeVerifier: request.codeVerifier,
            maxAge: request.maxAge,
            rd,
            redirectUri,
            createdAt: now(),
          },
          origin,
        )
        if (cookie === undefined) return invalid('rd is too long')
        metrics.signIn('started')
        return redirectAnswer(302, request.url, [cookie])
      } catch (error) {
        log(`sign-in could not start: ${error instanceof Error ? error.message : 'error'}`)
        return unavailable()
      }
    },

    async callback(req, url) {
      const origin = originOf(req)
      if ('status' in origin) return origin
      const state = cookies.readSignIn(req.headers.cookie, origin)
      const clear = cookies.clearSignIn(origin)
      const failed = (description: string): Answer => {
        metrics.signIn('failed')
        const answer = invalid(description)
        return { ...answer, headers: { ...answer.headers, 'set-cookie': [clear] } }
      }
      if (state === undefined) return failed('The sign-in expired or was not started in this browser; start again')
      const client = oauth.clientFor(state.redirectUri)
      let session: GateSession
      try {
        const tokens = await client.handleCallback(url, {
          state: state.state,
          codeVerifier: state.codeVerifier,
          ...(state.nonce === undefined ? {} : { nonce: state.nonce }),
          ...(state.maxAge === undefined ? {} : { maxAge: state.maxAge }),
        })
        if (tokens.tokenType !== 'Bearer') return failed('The provider issued a sender-constrained token, which a gate cannot forward')
        const sub = tokens.claims?.sub ?? (await client.userinfo(tokens)).sub
        if (typeof sub !== 'string' || sub === '') return failed('The provider named no subject for this user')
        session = { accessToken: tokens.accessToken, expiresAt: tokens.expiresAt, refreshToken: tokens.refreshToken, sub, issuedAt: now() }
      } catch (error) {
        const code = (error as { code?: unknown; error?: unknown }).error ?? (error as { code?: unknown }).code
        return failed(`The sign-in was refused${typeof code === 'string' && /^[a-z_]{1,40}$/i.test(code) ? ` (${code})` : ''}`)
      }
      const cookie = cookies.writeSession(session, origin) ?? cookies.writeSession({ ...session, refreshToken: undefined }, origin)
      if (cookie === undefined) return failed('The tokens do not fit in a 4 KB cookie')
      metrics.signIn('completed')
      return redirectAnswer(302, state.rd, [cookie, clear])
    },

    async signOut(req, query) {
      const origin = originOf(req)
      if ('status' in origin) return origin
      const sent = req.headers.origin
      if (typeof sent !== 'string' || sent.toLowerCase() !== `${origin.scheme}://${origin.authority}`.toLowerCase()) {
        return jsonAnswer(403, { error: 'forbidden', error_description: 'Sign-out must come from a page of the same origin' })
      }
      const rd = target(query, origin)
      const session = cookies.readSession(req.headers.cookie, origin)
      if (session !== undefined) {
        cookies.signOut(session)
        try {
          await core.resolver.invalidate(session.accessToken)
        } catch {
          log('sign-out: the shared cache could not drop the session’s answers')
        }
      }
      metrics.signIn('signed-out')
      const clear = cookies.clearSession(origin)
      // Signed out all the same; only the redirect is refused, as sign-in refuses it.
      if (rd === undefined) {
        const answer = invalid('rd must be a relative path or a URL on a host the gate knows')
        return { ...answer, headers: { ...answer.headers, 'set-cookie': [clear] } }
      }
      return redirectAnswer(303, rd, [clear])
    },
  }
}
