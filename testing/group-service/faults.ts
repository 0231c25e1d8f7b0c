/**
 * Faults a test can inject into the group endpoints: every way the real service (or the
 * network in front of it) misbehaves that the library must survive, and the registry that
 * decides which request gets which fault.
 *
 * @module
 */
import { InvalidArgumentError } from '../../src/index.js'

/**
 * One kind of misbehaviour.
 *
 * @example
 * ```ts
 * emulator.faults.add({ kind: 'status', status: 503 }, { times: 1 })
 * emulator.faults.add({ kind: 'partial', omit: ['fc:org:example.org'] })
 * ```
 */
export type Fault =
  /** Wait `ms`, then answer normally. */
  | { kind: 'latency'; ms: number }
  /** Answer with this status; `body` defaults to `{"message": <reason phrase>}`. */
  | { kind: 'status'; status: number; body?: string; headers?: Record<string, string> }
  /** Never send headers; the socket stays open until the client gives up or `close()`. */
  | { kind: 'hang' }
  /** The normal answer, with its body trickled at this rate. */
  | { kind: 'slow-body'; bytesPerSecond: number }
  /** Reset the connection (TCP RST) before answering. */
  | { kind: 'reset' }
  /** Send the normal headers (with the full `Content-Length`) and part of the body, then close. */
  | { kind: 'reset-mid-body' }
  /** 200, `application/json`, a body that does not parse. */
  | { kind: 'invalid-json' }
  /** 200, valid JSON of the wrong shape: an object where an array is due and vice versa. */
  | { kind: 'wrong-shape' }
  /** 200, a `text/html` maintenance page. */
  | { kind: 'non-json' }
  /** 200, a valid JSON array of exactly `bytes` bytes, streamed without `Content-Length`. */
  | { kind: 'oversized'; bytes: number }
  /** A redirect (default 302) to `location`. */
  | { kind: 'redirect'; location: string; status?: 301 | 302 | 307 | 308 }
  /** `me/groups` leaves out these group ids (a failed backend); `me/groups/{id}` still knows them. Applies to `me/groups` only. */
  | { kind: 'partial'; omit: string[] }

/**
 * Which requests a fault applies to. All given conditions must hold.
 *
 * @example
 * ```ts
 * emulator.faults.add({ kind: 'hang' }, { token, path: /\/me\/groups$/, times: 2 })
 * ```
 */
export interface FaultMatch {
  /** Only requests carrying this bearer token. */
  token?: string
  /** Only requests with a token of this user (any of their tokens). */
  user?: string
  /**
   * Only this pathname (no query). A string matches the pathname as received or decoded
   * segment by segment; a RegExp is tested against both.
   */
  path?: string | RegExp
  /** Remove the fault after it was applied this many times. Default: never. */
  times?: number
}

/**
 * Adds and removes faults on a running emulator.
 *
 * @example
 * ```ts
 * const id = emulator.faults.add({ kind: 'latency', ms: 200 })
 * emulator.faults.remove(id)
 * emulator.faults.clear()
 * ```
 */
export interface FaultController {
  /** Injects a fault; returns its id. Faults apply to group endpoints only, the oldest matching fault first. */
  add(fault: Fault, match?: FaultMatch): number
  /** Removes one fault; unknown ids are ignored. */
  remove(id: number): void
  /** Removes all faults. */
  clear(): void
  /** The faults in force, oldest first. */
  list(): readonly { readonly id: number; readonly fault: Fault; readonly match: Readonly<FaultMatch> }[]
}

/**
 * What the registry looks at to pick a fault for a request.
 */
export interface FaultCandidate {
  readonly token: string | undefined
  /** The user of the request's token, when it is a valid personal one. */
  readonly user: string | undefined
  readonly pathname: string
  readonly decodedPathname: string
  /** The matched route's name (`me/groups`, `me/groups/{groupid}`, ...). */
  readonly route: string | undefined
}

interface Entry {
  readonly id: number
  readonly fault: Fault
  readonly match: Readonly<FaultMatch>
  remaining: number
}

const REDIRECT_STATUSES = new Set([301, 302, 307, 308])

/**
 * The emulator's faults, in the order they were added.
 */
export class FaultRegistry implements FaultController {
  #entries: Entry[] = []
  #nextId = 1

  add(fault: Fault, match: FaultMatch = {}): number {
    const copy = checkFault(fault)
    const { token, user, path, times } = match
    if (token !== undefined && (typeof token !== 'string' || token === '')) {
      throw new InvalidArgumentError('faults.add: match.token must be a non-empty string')
    }
    if (user !== undefined && (typeof user !== 'string' || user === '')) {
      throw new InvalidArgumentError('faults.add: match.user must be a non-empty string')
    }
    if (path !== undefined && typeof path !== 'string' && !(path instanceof RegExp)) {
      throw new InvalidArgumentError('faults.add: match.path must be a string or a RegExp')
    }
    if (times !== undefined && (!Number.isInteger(times) || times < 1)) {
      throw new InvalidArgumentError('faults.add: match.times must be a positive integer')
    }
    const id = this.#nextId++
    this.#entries.push({
      id,
      fault: copy,
      match: {
        ...(token === undefined ? {} : { token }),
        ...(user === undefined ? {} : { user }),
        ...(path === undefined ? {} : { path }),
      },
      remaining: times ?? Number.POSITIVE_INFINITY,
    })
    return id
  }

  remove(id: number): void {
    this.#entries = this.#entries.filter((entry) => entry.id !== id)
  }

  clear(): void {
    this.#entries = []
  }

  list(): readonly { readonly id: number; readonly fault: Fault; readonly match: Readonly<FaultMatch> }[] {
    return this.#entries.map(({ id, fault, match }) => ({ id, fault, match }))
  }

  /** The fault for this request, counting one use of it; `undefined` when none matches. */
  take(candidate: FaultCandidate): Fault | undefined {
    const entry = this.#entries.find((each) => matches(each, candidate))
    if (entry === undefined) return undefined
    entry.remaining -= 1
    if (entry.remaining <= 0) this.remove(entry.id)
    return entry.fault
  }
}

function matches(entry: Entry, candidate: FaultCandidate): boolean {
  const { token, user, path } = entry.match
  // A partial result only exists on the list of the user's groups; elsewhere it would
  // silently use up `times` without any effect.
  if (entry.fault.kind === 'partial' && candidate.route !== 'me/groups') return false
  if (token !== undefined && token !== candidate.token) return false
  if (user !== undefined && user !== candidate.user) return false
  if (typeof path === 'string') return path === candidate.pathname || path === candidate.decodedPathname
  if (path instanceof RegExp) {
    path.lastIndex = 0
    if (path.test(candidate.pathname)) return true
    path.lastIndex = 0
    return path.test(candidate.decodedPathname)
  }
  return true
}

function checkFault(fault: Fault): Fault {
  const bad = (field: string, message: string): never => {
    throw new InvalidArgumentError(`faults.add: fault.${field} ${message}`)
  }
  if (typeof fault !== 'object' || fault === null) throw new InvalidArgumentError('faults.add: fault must be an object')
  switch (fault.kind) {
    case 'latency':
      if (!isNonNegative(fault.ms)) bad('ms', 'must be a non-negative number of milliseconds')
      return { kind: fault.kind, ms: fault.ms }
    case 'status': {
      if (!Number.isInteger(fault.status) || fault.status < 100 || fault.status > 599) bad('status', 'must be an HTTP status (100-599)')
      if (fault.body !== undefined && typeof fault.body !== 'string') bad('body', 'must be a string')
      if (fault.headers !== undefined && (typeof fault.headers !== 'object' || fault.headers === null)) bad('headers', 'must be an object')
      for (const value of Object.values(fault.headers ?? {})) if (typeof value !== 'string') bad('headers', 'values must be strings')
      return {
        kind: fault.kind,
        status: fault.status,
        ...(fault.body === undefined ? {} : { body: fault.body }),
        ...(fault.headers === undefined ? {} : { headers: { ...fault.headers } }),
      }
    }
    case 'slow-body':
      if (!isNonNegative(fault.bytesPerSecond) || fault.bytesPerSecond === 0) bad('bytesPerSecond', 'must be a positive number')
      return { kind: fault.kind, bytesPerSecond: fault.bytesPerSecond }
    case 'oversized':
      if (!Number.isInteger(fault.bytes) || fault.bytes < 2) bad('bytes', 'must be an integer of at least 2')
      return { kind: fault.kind, bytes: fault.bytes }
    case 'redirect':
      if (typeof fault.location !== 'string' || fault.location === '') bad('location', 'must be a non-empty string')
      if (fault.status !== undefined && !REDIRECT_STATUSES.has(fault.status)) bad('status', 'must be 301, 302, 307 or 308')
      return { kind: fault.kind, location: fault.location, ...(fault.status === undefined ? {} : { status: fault.status }) }
    case 'partial':
      if (!Array.isArray(fault.omit) || !fault.omit.every((id) => typeof id === 'string')) bad('omit', 'must be an array of group ids')
      return { kind: fault.kind, omit: [...fault.omit] }
    case 'hang':
    case 'reset':
    case 'reset-mid-body':
    case 'invalid-json':
    case 'wrong-shape':
    case 'non-json':
      return { kind: fault.kind }
    default:
      throw new InvalidArgumentError(`faults.add: unknown fault kind ${JSON.stringify((fault as { kind?: unknown }).kind)}`)
  }
}

function isNonNegative(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0
}
