/**
 * The sessions signed out before their end: a sealed session value is a bearer credential
 * that a copy (a shared computer, a proxy log, malware) would keep opening until
 * `cookie.maxAge`; sign-out lists its id until then, and a listed session opens no more.
 *
 * The list lives in the instance's memory; with `redis`, `session-ends.ts` shares it with
 * the fleet (and with instances that start later). It is bounded; when full, the entries
 * that end first are dropped first.
 *
 * An entry may also end every session that began by a time (`endedAt`): a back-channel
 * logout names a provider session or a user, not one of the gate's sessions.
 *
 * @module
 */

/** The signed-out session ids, each until the session would have ended anyway. */
export interface SignOutList {
  /**
   * Lists `sid` until `until` (ms since the epoch); with `endedAt`, only sessions that began
   * by then are ended by it. Listed twice, the entry ends the later and lasts the longer.
   */
  add(sid: string, until: number, endedAt?: number): void
  /** Whether `sid` was signed out (for a session that began at `issuedAt`, when given). */
  has(sid: string, issuedAt?: number): boolean
  /** How many ids are listed (expired ones may still count until the next `add`). */
  readonly size: number
}

/** The most ids kept: about 100 bytes each. */
export const SIGN_OUT_LIST_MAX = 100_000

/**
 * A sign-out list in this process's memory.
 *
 * @example
 * ```ts
 * const signedOut = createSignOutList(Date.now)
 * signedOut.add(session.sid, session.issuedAt + maxAge)
 * signedOut.has(session.sid) // true
 * ```
 */
export function createSignOutList(now: () => number, max = SIGN_OUT_LIST_MAX): SignOutList {
  /** Per id: until when it is listed, and when it ended. */
  const until = new Map<string, { end: number; endedAt: number }>()

  function prune(): void {
    const time = now()
    for (const [sid, entry] of until) if (entry.end <= time) until.delete(sid)
    if (until.size < max) return
    // Still full: the ids whose sessions end first matter least, and go first.
    const ordered = [...until].sort((a, b) => a[1].end - b[1].end)
    for (const [sid] of ordered.slice(0, until.size - max + 1)) until.delete(sid)
  }

  return {
    add(sid, end, endedAt = Number.POSITIVE_INFINITY) {
      if (end <= now()) return
      const known = until.get(sid)
      if (known !== undefined) {
        until.set(sid, { end: Math.max(end, known.end), endedAt: Math.max(endedAt, known.endedAt) })
        return
      }
      if (until.size >= max) prune()
      until.set(sid, { end, endedAt })
    },
    has(sid, issuedAt = Number.NEGATIVE_INFINITY) {
      const entry = until.get(sid)
      return entry !== undefined && entry.end > now() && issuedAt <= entry.endedAt
    },
    get size() {
      return until.size
    },
  }
}
