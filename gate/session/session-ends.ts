/**
 * Sessions that end everywhere: a sign-out ends one session, a back-channel logout ends
 * every session of a provider session (`sid`) or of a user at an issuer (`sub`) that began
 * by then. The ends are kept in this instance's {@link SignOutList} (bounded), so reading a
 * session costs no network call; with `redis`, each end is also kept in Redis and published
 * on the shared tier's channel (`createSessionEnds` of `voot-guard/redis`), so every
 * instance, and every instance that starts later, refuses the session too.
 *
 * Redis only ever adds ends: an outage never opens a session this instance knows to be
 * ended. What Redis holds is a keyed hash of what ended, never a session id or a user.
 *
 * @module
 */
import { createSignOutList, type SignOutList } from './sign-out-list.js'

/** One end, as the fleet shares it (the shape of `voot-guard/redis`'s `SessionEnd`). */
export interface SharedSessionEnd {
  readonly id: string
  readonly endedAt: number
  readonly until: number
}

/** The fleet's side of the ends: `createSessionEnds` of `voot-guard/redis` fits it as it is. */
export interface SessionEndTier {
  idOf(kind: 'session' | 'sid' | 'sub', ...parts: string[]): string
  end(end: SharedSessionEnd): Promise<boolean>
  subscribe(listener: (end: SharedSessionEnd) => void): () => void
  close(): void
}

/** What a session must show to be checked against the ends. */
export interface EndableSession {
  readonly sid?: string | undefined
  readonly sub: string
  readonly issuedAt: number
  /** The issuer of the ID token the session came with. */
  readonly issuer?: string | undefined
  /** The `sid` claim of that ID token: the provider's session. */
  readonly providerSid?: string | undefined
}

/**
 * The ends of sessions, on this instance and (with a tier) the fleet.
 *
 * @example
 * ```ts
 * const ends = createGateSessionEnds({ maxAge: 28_800_000, now: Date.now })
 * await ends.signOut(session)
 * ends.isEnded(session) // true
 * ```
 */
export interface GateSessionEnds {
  /** Ends one session (a sign-out); resolves once the fleet was told, or telling it failed. */
  signOut(session: EndableSession): Promise<void>
  /** Ends every session of the provider session `sid`, else of the user `sub`, at `issuer`, that began by now. */
  endAtProvider(issuer: string, subject: { readonly sid?: string | undefined; readonly sub?: string | undefined }): Promise<void>
  /** Whether the session was ended. */
  isEnded(session: EndableSession): boolean
  /** Stops listening to the fleet. */
  close(): void
}

/** Margin past `maxAge` a session's end is kept: a minute, the clock skew a session's age forgives. */
const SKEW = 60_000

/**
 * Creates the ends of a gate's sessions; `tier` shares them with the fleet.
 *
 * @example
 * ```ts
 * const ends = createGateSessionEnds({ maxAge: settings.cookie.maxAge, now: Date.now, tier: createSessionEnds({ client, secret }) })
 * ```
 */
export function createGateSessionEnds(options: {
  readonly maxAge: number
  readonly now: () => number
  readonly tier?: SessionEndTier | undefined
  readonly log?: (message: string) => void
  readonly list?: SignOutList
}): GateSessionEnds {
  const { maxAge, now, tier, log } = options
  const list = options.list ?? createSignOutList(now)
  // Without a tier nothing leaves the process: the parts themselves name the entry.
  const idOf = tier === undefined ? (kind: string, ...parts: string[]) => JSON.stringify([kind, ...parts]) : tier.idOf.bind(tier)
  const unsubscribe = tier?.subscribe((end) => list.add(end.id, end.until, end.endedAt))

  async function share(id: string, endedAt: number, until: number): Promise<void> {
    list.add(id, until, endedAt)
    if (tier === undefined) return
    // This instance refuses the session whatever Redis does; the others hear of it when it answers.
    if (!(await tier.end({ id, endedAt: Number.isFinite(endedAt) ? endedAt : until, until }))) {
      log?.('gate: Redis did not take a session’s end; this instance refuses the session, the others hear of it when Redis is back')
    }
  }

  return {
    async signOut(session) {
      if (session.sid === undefined) return
      const until = session.issuedAt + maxAge + SKEW
      await share(idOf('session', session.sid), until, until)
    },
    async endAtProvider(issuer, subject) {
      const endedAt = now()
      const until = endedAt + maxAge + SKEW
      if (subject.sid !== undefined) await share(idOf('sid', issuer, subject.sid), endedAt, until)
      else if (subject.sub !== undefined) await share(idOf('sub', issuer, subject.sub), endedAt, until)
    },
    isEnded(session) {
      // Nothing ended: no hash computed.
      if (list.size === 0) return false
      if (session.sid !== undefined && list.has(idOf('session', session.sid))) return true
      if (session.issuer === undefined) return false
      if (session.providerSid !== undefined && list.has(idOf('sid', session.issuer, session.providerSid), session.issuedAt)) return true
      return list.has(idOf('sub', session.issuer, session.sub), session.issuedAt)
    },
    close() {
      unsubscribe?.()
      tier?.close()
    },
  }
}
