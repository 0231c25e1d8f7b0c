/**
 * The gate's OAuth side through `voot-guard/oauth`: one client per redirect URI (the
 * default redirect URI follows the host a sign-in started on), and the `sub` of a bearer
 * token from the userinfo endpoint, cached like group answers (keyed by a digest, never
 * by the token).
 *
 * @module
 */
import { createHmac, randomBytes } from 'node:crypto'
import { LRUCache } from 'lru-cache'
import { createOAuthClient, type OAuthClient, type OAuthClientOptions } from '../../oauth/index.js'

/** The OAuth clients of one gate. */
export interface GateOAuth {
  /** The client for `redirectUri` (the configured one wins over the one given). */
  clientFor(redirectUri: string): OAuthClient
  /** The configured redirect URI, if any. */
  readonly redirectUri: string | undefined
  /** The userinfo `sub` of a bearer token (cached); rejects like `userinfo()`. */
  subjectOf(token: string): Promise<string>
  /** One client for what needs no redirect URI: back-channel Logout Tokens (one `jti` memory), metadata. */
  readonly client: OAuthClient
  /** `oauth.backchannelLogout`: the provider's Logout Tokens end sessions. */
  readonly backchannelLogout: boolean
  /** `oauth.endSession`: sign-out continues at the provider's `end_session_endpoint`. */
  readonly endSession: boolean
}

/**
 * The sign-ins of a gate: each service's OAuth clients by the service's name, the one
 * service's under `undefined`. Empty when the gate signs nobody in.
 */
export type GateSignIns = ReadonlyMap<string | undefined, GateOAuth>

/** A redirect URI that only serves to validate options and call userinfo. */
const PLACEHOLDER_REDIRECT = 'https://gate.invalid/_gate/callback'

/**
 * Creates the clients from the `oauth` settings; throws the client's `InvalidOptionError`
 * for an invalid option.
 */
export function createGateOAuth(options: Readonly<Record<string, unknown>>, subjectTtl: number): GateOAuth {
  const { backchannelLogout, endSession, ...clientOptions } = options
  const configured = clientOptions['redirectUri'] as string | undefined
  const base = { ...clientOptions } as unknown as OAuthClientOptions
  const main = createOAuthClient({ ...base, redirectUri: configured ?? PLACEHOLDER_REDIRECT })
  const clients = new LRUCache<string, OAuthClient>({ max: 64 })
  if (configured !== undefined) clients.set(configured, main)
  const digestKey = randomBytes(32)
  const subjects = new LRUCache<string, Promise<string>>({ max: 10_000, ttl: Math.max(1, subjectTtl) })

  return {
    client: main,
    backchannelLogout: backchannelLogout === true,
    endSession: endSession === true,
    redirectUri: configured,
    clientFor(redirectUri) {
      const uri = configured ?? redirectUri
      let client = clients.get(uri)
      if (client === undefined) {
        client = createOAuthClient({ ...base, redirectUri: uri })
        clients.set(uri, client)
      }
      return client
    },
    subjectOf(token) {
      const key = createHmac('sha256', digestKey).update(token).digest('base64url')
      let found = subjects.get(key)
      if (found === undefined) {
        found = main.userinfo(token).then((info) => {
          if (typeof info.sub !== 'string' || info.sub === '') throw new Error('userinfo has no sub')
          return info.sub
        })
        subjects.set(key, found)
        found.catch(() => subjects.delete(key))
      }
      return found
    },
  }
}
