/**
 * The session cookie and the sign-in cookie: what they hold, their names and attributes.
 * The session holds the tokens and the user's `sub`, never the groups: every request is
 * decided against live memberships.
 *
 * @module
 */
import { randomBytes } from 'node:crypto'
import { createCookieSealer } from './cookie-seal.js'
import { readCookie, setCookie } from './cookies.js'
import { isLoopbackHost } from '../../src/internal.js'
import { createGateSessionEnds, type GateSessionEnds } from './session-ends.js'

/** A signed-in browser's session. */
export interface GateSession {
  readonly accessToken: string
  /** Expiry of the access token, ms since the epoch. */
  readonly expiresAt: number | undefined
  readonly refreshToken: string | undefined
  /** The user's subject identifier. */
  readonly sub: string
  /** When the session began (ms); the session ends `cookie.maxAge` later whatever refreshes happen. */
  readonly issuedAt: number
  /** The session's random id, for the sign-out list; made by `writeSession` when absent. */
  readonly sid?: string
  /** With several group services: the one the user signed in with, where the access token goes. */
  readonly service?: string | undefined
  /** The issuer of the ID token the session came with, when there was one: whose back-channel logout ends it. */
  readonly issuer?: string | undefined
  /** That ID token's `sid` claim (the provider's session), when it had one. */
  readonly providerSid?: string | undefined
}

/** What a sign-in keeps between `/_gate/signin` and `/_gate/callback`. */
export interface SignInState {
  readonly state: string
  readonly nonce: string | undefined
  readonly codeVerifier: string
  readonly maxAge: number | undefined
  readonly rd: string
  readonly redirectUri: string
  readonly createdAt: number
  /** With several group services: the one whose provider the user chose. */
  readonly service?: string | undefined
}

/** Where a browser's request went: its scheme and host (lower-case, no port). */
export interface Origin {
  readonly scheme: 'http' | 'https'
  readonly host: string
}

/** The largest `Set-Cookie` pair browsers are sure to keep. */
export const MAX_COOKIE_BYTES = 4096
const SIGN_IN_LIFETIME = 600_000

/**
 * Reads and writes the gate's cookies.
 *
 * @example
 * ```ts
 * const cookies = createSessionCookies({ name: undefined, secrets, maxAge: 28_800_000 }, Date.now)
 * const session = cookies.readSession(req.headers.cookie, origin)
 * ```
 */
export interface SessionCookies {
  /** The session cookie's name for a request to `origin`. */
  nameFor(origin: Origin): string
  /** Whether cookies for `origin` carry `Secure` (all but plain http on loopback). */
  secureFor(origin: Origin): boolean
  /**
   * The session of the cookie, or `undefined`: absent, sent twice, forged, expired, sealed
   * for another host than `origin`'s, or signed out.
   */
  readSession(cookieHeader: string | readonly string[] | undefined, origin: Origin): GateSession | undefined
  /** The `Set-Cookie` value of a session bound to `origin`'s host, or `undefined` when the sealed cookie would exceed 4 KB. */
  writeSession(session: GateSession, origin: Origin): string | undefined
  clearSession(origin: Origin): string
  /**
   * Ends the session: its sealed value opens no more until it would have ended, on this
   * instance and (with `redis`) on every instance of the fleet.
   */
  signOut(session: GateSession): Promise<void>
  readSignIn(cookieHeader: string | readonly string[] | undefined, origin: Origin): SignInState | undefined
  writeSignIn(state: SignInState, origin: Origin): string | undefined
  clearSignIn(origin: Origin): string
}

function isString(value: unknown): value is string {
  return typeof value === 'string'
}

/** Creates the cookie reader and writer for the configured `cookie` settings; `ends` (default: this process's own) says which sessions ended. */
export function createSessionCookies(
  config: { readonly name: string | undefined; readonly secrets: readonly string[]; readonly maxAge: number },
  now: () => number,
  ends: GateSessionEnds = createGateSessionEnds({ maxAge: config.maxAge, now }),
): SessionCookies {
  const sessions = createCookieSealer(config.secrets, 'session')
  const signIns = createCookieSealer(config.secrets, 'signin')
  const secureFor = (origin: Origin) => !(origin.scheme === 'http' && isLoopbackHost(origin.host))
  const nameFor = (origin: Origin) => config.name ?? (secureFor(origin) ? '__Host-voot-gate' : 'voot-gate')
  const signInName = (origin: Origin) => `${nameFor(origin)}-signin`
  const maxAgeSeconds = Math.floor(config.maxAge / 1000)

  /** The parsed content of the cookie `name` opened with `sealer`, or `undefined` (absent, forged, unreadable). */
  function openCookie(sealer: typeof sessions, header: string | readonly string[] | undefined, name: string): unknown {
    const value = readCookie(header, name)
    const text = value === undefined ? undefined : sealer.open(name, value)
    if (text === undefined) return undefined
    try {
      return JSON.parse(text) as unknown
    } catch {
      return undefined
    }
  }

  /** Whether something made at `issuedAt` is still within `lifetime` ms (a minute of clock skew forgiven). */
  function fresh(issuedAt: unknown, lifetime: number): issuedAt is number {
    if (typeof issuedAt !== 'number') return false
    const age = now() - issuedAt
    return age >= -60_000 && age <= lifetime
  }

  function bounded(line: string): string | undefined {
    return Buffer.byteLength(line) <= MAX_COOKIE_BYTES ? line : undefined
  }

  return {
    nameFor,
    secureFor,
    readSession(header, origin) {
      const content = openCookie(sessions, header, nameFor(origin))
      if (!Array.isArray(content)) return undefined
      const [version, accessToken, expiresAt, refreshToken, sub, issuedAt, host, sid, service, issuer, providerSid] = content as unknown[]
      // Version 1 named no host: such a session signs in again rather than open on every host.
      if (version !== 2 || !isString(accessToken) || !isString(sub) || !fresh(issuedAt, config.maxAge)) return undefined
      if (expiresAt !== null && typeof expiresAt !== 'number') return undefined
      if (refreshToken !== null && !isString(refreshToken)) return undefined
      // Bound to the host it was made on: a copy taken to another host the gate serves opens nothing there.
      if (host !== origin.host || !isString(sid)) return undefined
      if (service !== undefined && service !== null && !isString(service)) return undefined
      if (issuer !== undefined && issuer !== null && !isString(issuer)) return undefined
      if (providerSid !== undefined && providerSid !== null && !isString(providerSid)) return undefined
      const ended = { sid, sub, issuedAt, issuer: issuer ?? undefined, providerSid: providerSid ?? undefined }
      if (ends.isEnded(ended)) return undefined
      return {
        accessToken,
        expiresAt: expiresAt ?? undefined,
        refreshToken: refreshToken ?? undefined,
        sub,
        issuedAt,
        sid,
        service: service ?? undefined,
        issuer: issuer ?? undefined,
        providerSid: providerSid ?? undefined,
      }
    },
    writeSession(session, origin) {
      const name = nameFor(origin)
      const text = JSON.stringify([
        2,
        session.accessToken,
        session.expiresAt ?? null,
        session.refreshToken ?? null,
        session.sub,
        session.issuedAt,
        origin.host,
        session.sid ?? randomBytes(16).toString('base64url'),
        session.service ?? null,
        session.issuer ?? null,
        session.providerSid ?? null,
      ])
      const left = Math.max(1, maxAgeSeconds - Math.floor((now() - session.issuedAt) / 1000))
      return bounded(setCookie(name, sessions.seal(name, text), { secure: secureFor(origin), maxAge: left }))
    },
    clearSession: (origin) => setCookie(nameFor(origin), '', { secure: secureFor(origin), maxAge: 0 }),
    signOut: (session) => ends.signOut(session),
    readSignIn(header, origin) {
      const state = openCookie(signIns, header, signInName(origin)) as Partial<SignInState> | null | undefined
      if (typeof state !== 'object' || state === null || !fresh(state.createdAt, SIGN_IN_LIFETIME)) return undefined
      if (!isString(state.state) || !isString(state.codeVerifier) || !isString(state.rd) || !isString(state.redirectUri)) return undefined
      if (state.service !== undefined && state.service !== null && !isString(state.service)) return undefined
      return state as SignInState
    },
    writeSignIn(state, origin) {
      const name = signInName(origin)
      return bounded(
        setCookie(name, signIns.seal(name, JSON.stringify(state)), { secure: secureFor(origin), maxAge: SIGN_IN_LIFETIME / 1000 }),
      )
    },
    clearSignIn: (origin) => setCookie(signInName(origin), '', { secure: secureFor(origin), maxAge: 0 }),
  }
}
