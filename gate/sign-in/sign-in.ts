/**
 * The browser endpoints: `GET /_gate/signin?rd=` (the code flow with PKCE through
 * `voot-guard/oauth`, its state in a short-lived sealed cookie; or a refresh of an expired
 * session), `GET /_gate/callback` (the session cookie), `POST /_gate/signout` (same-origin
 * only; ends the session on every instance, clears the cookie and the token's cached answers
 * across the fleet, and with `oauth.endSession` goes on to the provider's end-session endpoint).
 *
 * @module
 */
import type { IncomingMessage } from 'node:http'
import type { GuardCore } from '../../src/adapter-kit.js'
import { jsonAnswer, redirectAnswer, type Answer } from '../http/answer.js'
import { browserOrigin, type BrowserOrigin } from '../http/browser-origin.js'
import { isLoopbackHost } from '../../src/internal.js'
import type { GateMetrics } from '../ops/metrics.js'
import type { GateOAuth, GateSignIns } from '../session/oauth-clients.js'
import { safeRedirect } from './redirect-target.js'
import type { ServiceRouter } from '../policy/service-route.js'
import type { GateSession, SessionCookies } from '../session/session.js'
import { signInChoicePage } from '../pages/sign-in-choice.js'
import type { TrustCheck } from '../http/trusted-proxies.js'

/** What the browser endpoints need. */
export interface SignInDependencies {
  readonly core: GuardCore
  /** The sign-in of each service that signs people in (the one service's under `undefined`). */
  readonly signIns: GateSignIns
  /** With several services: which one a host and path are routed to, and their labels. */
  readonly router: ServiceRouter | undefined
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
  const { core, signIns, router, cookies, trusted, isRedirectHost, isServedHost, metrics, now, log } = deps

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
    const oauth = signIns.get(session.service)
    if (session.refreshToken === undefined || oauth === undefined) return undefined
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

  /**
   * The service a sign-in goes to: the one the browser chose (`service=`), else the one the
   * target's host and path are routed to, else the only one; `undefined` for the gate's one
   * service. An answer instead: the choice page, or the refusal of an unknown choice.
   */
  function signInService(query: URLSearchParams, origin: BrowserOrigin, rd: string): { service: string | undefined } | Answer {
    const asked = query.get('service')
    if (router === undefined)
      return asked === null ? { service: undefined } : invalid('This gate has one group service: no service to choose')
    if (asked !== null) return signIns.has(asked) ? { service: asked } : invalid('No such provider to sign in with')
    const target = new URL(rd, `${origin.scheme}://${origin.authority}`)
    const routed = router.routed(target.hostname, target.pathname)
    if (routed !== undefined && signIns.has(routed)) return { service: routed }
    const offered = [...signIns.keys()].filter((name): name is string => name !== undefined)
    if (offered.length === 1) return { service: offered[0] }
    return signInChoicePage(
      offered.map((service) => ({ service, label: router.labelOf(service) })),
      rd,
    )
  }

  /**
   * With `oauth.endSession`, where the browser ends its session at the provider after the
   * gate's own sign-out (RP-Initiated Logout 1.0): the provider's `end_session_endpoint` with
   * `client_id` and `post_logout_redirect_uri` (`rd`, absolute; the provider must know it).
   * `undefined` when not configured, or when the provider publishes none or cannot be asked.
   */
  async function providerSignOut(session: GateSession, origin: BrowserOrigin, rd: string): Promise<string | undefined> {
    const oauth = signIns.get(session.service)
    if (oauth === undefined || !oauth.endSession) return undefined
    try {
      const end = (await oauth.client.metadata()).end_session_endpoint
      if (end === undefined) return undefined
      const url = new URL(end)
      url.searchParams.set('client_id', oauth.client.clientId)
      url.searchParams.set('post_logout_redirect_uri', new URL(rd, `${origin.scheme}://${origin.authority}`).href)
      return url.href
    } catch {
      log('sign-out: the provider could not be asked for its end_session_endpoint; signed out at the gate only')
      return undefined
    }
  }

  return {
    async signIn(req, query) {
      const origin = originOf(req)
      if ('status' in origin) return origin
      const rd = target(query, origin)
      if (rd === undefined) return invalid('rd must be a relative path or a URL on a host the gate knows')
      if (origin.scheme === 'http' && !isLoopbackHost(origin.host)) {
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
      const chosen = signInService(query, origin, rd)
      if ('status' in chosen) return chosen
      const { service } = chosen
      const oauth = signIns.get(service) as GateOAuth
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
            ...(service === undefined ? {} : { service }),
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
      const oauth = signIns.get(state.service)
      if (oauth === undefined) return failed('The sign-in was started with a provider this gate no longer has; start again')
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
        // The ID token's issuer and `sid`: a back-channel logout names the session by them.
        const claims = tokens.claims as { iss?: unknown; sid?: unknown } | undefined
        session = {
          accessToken: tokens.accessToken,
          expiresAt: tokens.expiresAt,
          refreshToken: tokens.refreshToken,
          sub,
          issuedAt: now(),
          service: state.service,
          issuer: typeof claims?.iss === 'string' ? claims.iss : undefined,
          providerSid: typeof claims?.sid === 'string' ? claims.sid : undefined,
        }
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
        // Ended on every instance first: the answers' invalidation below may fail on its own.
        await cookies.signOut(session)
        try {
          // With several services: dropped in each (no call), whichever it was for.
          await (core.services ?? core.resolver).invalidate(session.accessToken)
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
      const atProvider = session === undefined ? undefined : await providerSignOut(session, origin, rd)
      return redirectAnswer(303, atProvider ?? rd, [clear])
    },
  }
}
