/**
 * The sessions signed out before their end: a sealed session value is a bearer credential
 * that a copy (a shared computer, a proxy log, malware) would keep opening until
 * `cookie.maxAge`; sign-out lists its id until then, and a listed session opens no more.
 *
 * The list lives in the instance's memory: an instance restarted, or another instance of a
 * fleet, does not know it (docs/gate.md, Security). It is bounded; when full, the entries
 * that end first are dropped first.
 *
 * @module
 */

/** The signed-out session ids, each until the session would have ended anyway. */
export interface SignOutList {
  /** Lists `sid` until `until` (ms since the epoch). */
  add(sid: string, until: number): void
  /** Whether `sid` was signed out. */
  has(sid: string): boolean
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
  const until = new Map<string, number>()

  function prune(): void {
    const time = now()
    for (const [sid, end] of until) if (end <= time) until.delete(sid)
    if (until.size < max) return
    // Still full: the ids whose sessions end first matter least, and go first.
    const ordered = [...until].sort((a, b) => a[1] - b[1])
    for (const [sid] of ordered.slice(0, until.size - max + 1)) until.delete(sid)
  }

  return {
    add(sid, end) {
      if (end <= now()) return
      if (until.size >= max) prune()
      until.set(sid, end)
    },
    has(sid) {
      const end = until.get(sid)
      return end !== undefined && end > now()
    },
    get size() {
      return until.size
    },
  }
}
