/**
 * The emulator's OAuth 2.0 / OpenID Connect authorization server, mounted by
 * `startEmulator` beside the group endpoints. Issuer = `authUrl`.
 *
 * | path | what |
 * |---|---|
 * | `/.well-known/openid-configuration` | discovery (also at `/.well-known/oauth-authorization-server`) |
 * | `/oauth/authorization` | consent page; code and implicit (`token`) flows |
 * | `/oauth/token` | `authorization_code` (PKCE S256) and `client_credentials` |
 * | `/userinfo`, `/openid/userinfo` | the user's profile, for a Bearer token |
 * | `/openid/jwks` | the public RS256 key(s) that sign ID tokens (and Logout Tokens) |
 * | `/oauth/logout` | RP-Initiated Logout 1.0: ends the user's sessions, back to a registered `post_logout_redirect_uri` |
 *
 * ID tokens carry a `sid`; {@link OAuthServer.endSessions} sends Logout Tokens to the
 * clients registered with a `backchannelLogoutUri` (Back-Channel Logout 1.0).
 *
 * Access tokens are opaque and live in the emulator's shared {@link TokenStore}, so a token
 * from a real login works on the group endpoints.
 *
 * @module
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import { INTERNAL_ERROR, jsonAnswer, writeAnswer, type Answer } from '../answer.js'
import type { EmulatorData } from '../data/data.js'
import { AUTHORIZATION_PATH, authorize } from './oauth-authorize.js'
import type { OAuthContext } from './oauth-context.js'
import { createSigningKeys } from './oauth-keys.js'
import { TOKEN_PATH, token } from './oauth-token.js'
import { USERINFO_PATHS, userinfo } from './oauth-userinfo.js'
import { END_SESSION_PATH, endSession, endSessions, type SessionsEnded } from './oauth-sessions.js'
import type { TokenStore } from '../token-store.js'

/**
 * The path of the JWKS.
 */
export const JWKS_PATH = '/openid/jwks'

/**
 * Options of {@link createOAuthServer}.
 */
export interface OAuthServerOptions {
  /** The data set: its users sign in, its clients are registered. */
  data: EmulatorData
  /** The token store shared with the group endpoints. */
  tokens: TokenStore
  /** The issuer identifier: the emulator's `authUrl`, such as `http://127.0.0.1:4000`. */
  issuer: string
  /** Clock, in ms since the epoch (code expiry, ID token times). */
  now: () => number
  /** Access token lifetime in seconds. Default `28800` (8 hours; the real service's are long). */
  accessTokenLifetime?: number
  /** The service its pages name (`Feide`, `SURFconext (surf)`). Default `'the emulated service'`. */
  service?: string
}

/**
 * An emulated authorization server.
 *
 * @example
 * ```ts
 * const emulator = await startEmulator()
 * const kid = await emulator.oauth.rotateKeys() // new ID tokens are signed with a new key
 * ```
 */
export interface OAuthServer {
  /** The issuer identifier (no trailing slash). */
  readonly issuer: string
  /**
   * Answers the request when it is for one of the server's paths; resolves to `false`
   * (and leaves the request alone) otherwise.
   */
  handle(req: IncomingMessage, res: ServerResponse, url: URL): Promise<boolean>
  /**
   * Starts signing ID tokens with a new key and resolves to its `kid`. The old key stays
   * in the JWKS unless `keepPrevious` is `false`.
   */
  rotateKeys(options?: { keepPrevious?: boolean }): Promise<string>
  /** The discovery document. */
  metadata(): Record<string, unknown>
  /**
   * Ends every session of the user `userId`: each client registered with a
   * `backchannelLogoutUri` is sent a Logout Token per session (or, when none is known, one
   * naming the user); resolves once each answered or timed out, with their statuses.
   *
   * @example
   * ```ts
   * const { notified } = await emulator.oauth.endSessions('alice') // [{ clientId: 'voot-gate', status: 200 }]
   * ```
   */
  endSessions(userId: string): Promise<SessionsEnded>
}

/**
 * Creates the authorization server of an emulator.
 */
export function createOAuthServer(options: OAuthServerOptions): OAuthServer {
  const issuer = options.issuer.replace(/\/+$/, '')
  const ctx: OAuthContext = {
    data: options.data,
    tokens: options.tokens,
    issuer,
    now: options.now,
    keys: createSigningKeys(),
    pending: new Map(),
    codes: new Map(),
    sessions: new Map(),
    accessTokenLifetime: options.accessTokenLifetime ?? 28_800,
    service: options.service ?? 'the emulated service',
  }
  const metadata = (): Record<string, unknown> => discoveryDocument(ctx)

  const route = async (req: IncomingMessage, url: URL): Promise<Answer | undefined> => {
    switch (url.pathname) {
      case '/.well-known/openid-configuration':
      case '/.well-known/oauth-authorization-server':
        req.resume()
        return jsonAnswer(200, metadata(), { 'cache-control': 'public, max-age=3600' })
      case JWKS_PATH:
        req.resume()
        return jsonAnswer(200, await ctx.keys.jwks(), { 'cache-control': 'public, max-age=600' })
      case AUTHORIZATION_PATH:
        return authorize(ctx, req, url)
      case TOKEN_PATH:
        return token(ctx, req)
      case END_SESSION_PATH:
        req.resume()
        return endSession(ctx, url)
      case USERINFO_PATHS.openid:
        return userinfo(ctx, req, 'openid')
      case USERINFO_PATHS.spec:
        return userinfo(ctx, req, 'spec')
      default:
        return undefined
    }
  }

  return {
    issuer,
    async handle(req, res, url) {
      let answer: Answer | undefined
      try {
        answer = await route(req, url)
      } catch {
        answer = INTERNAL_ERROR
      }
      if (answer === undefined) return false
      writeAnswer(res, answer)
      return true
    },
    rotateKeys: (rotateOptions) => ctx.keys.rotate(rotateOptions),
    metadata,
    endSessions: (userId) => endSessions(ctx, userId),
  }
}

function discoveryDocument(ctx: OAuthContext): Record<string, unknown> {
  const { issuer } = ctx
  const scopes = new Set(['openid', 'userid', 'profile', 'email', 'groups'])
  for (const client of ctx.data.clients) for (const scope of client.scopes ?? []) scopes.add(scope)
  return {
    issuer,
    authorization_endpoint: `${issuer}${AUTHORIZATION_PATH}`,
    token_endpoint: `${issuer}${TOKEN_PATH}`,
    userinfo_endpoint: `${issuer}${USERINFO_PATHS.openid}`,
    jwks_uri: `${issuer}${JWKS_PATH}`,
    end_session_endpoint: `${issuer}${END_SESSION_PATH}`,
    backchannel_logout_supported: true,
    backchannel_logout_session_supported: true,
    scopes_supported: [...scopes],
    response_types_supported: ['code', 'token'],
    response_modes_supported: ['query', 'fragment'],
    grant_types_supported: ['authorization_code', 'implicit', 'client_credentials'],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
    id_token_signing_alg_values_supported: ['RS256'],
    subject_types_supported: ['public'],
    claims_supported: ['sub', 'iss', 'aud', 'exp', 'iat', 'auth_time', 'nonce', 'at_hash', 'sid', 'name', 'email'],
    authorization_response_iss_parameter_supported: true,
  }
}
