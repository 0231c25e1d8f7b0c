/**
 * The emulator's record of the requests it received (group endpoints and authorization
 * server alike), and per-path counters, so a test can assert how often the library
 * really went upstream.
 *
 * No raw token is ever recorded: the log holds the user id a token belonged to, and query
 * parameters that may carry credentials are redacted.
 *
 * @module
 */
import type { ServerResponse } from 'node:http'
import { decodePathname } from './group-service/group-routes.js'

/**
 * One received request.
 *
 * @example
 * ```ts
 * const last = emulator.requests.at(-1)
 * expect(last).toMatchObject({ method: 'GET', path: '/groups/me/groups', status: 200, user: 'alice' })
 * ```
 */
export interface RecordedRequest {
  readonly method: string
  /** Pathname and query as received (credential-like query values redacted). */
  readonly path: string
  /** Status sent; 0 while no headers have been sent (and for `hang` and `reset` faults). */
  readonly status: number
  /** Arrival time by the emulator's clock, in ms since the epoch. */
  readonly at: number
  /** The user of a valid bearer token, if the request carried one. */
  readonly user?: string
}

interface MutableRecordedRequest {
  method: string
  path: string
  status: number
  at: number
  user?: string
}

/**
 * The log keeps the newest entries only, so a benchmark of a million requests does not
 * hold a million objects; the counters stay exact regardless.
 */
const MAX_ENTRIES = 50_000

const REDACTED_PARAMETERS = /^(?:access_token|refresh_token|id_token|id_token_hint|token|code|client_secret|code_verifier|password)$/i

/**
 * Request log and counters.
 */
export class RequestLog {
  #entries: MutableRecordedRequest[] = []
  #counts = new Map<string, number>()
  #total = 0

  /** Entries in arrival order (the newest 50 000). */
  get entries(): readonly RecordedRequest[] {
    return this.#entries
  }

  /**
   * Records a request on arrival and keeps its `status` in step with what `res` sends.
   * Returns the entry so the caller can fill in `user` once the token is looked up.
   */
  start(method: string, rawUrl: string, at: number, res: ServerResponse): { user?: string } {
    const queryStart = rawUrl.indexOf('?')
    const pathname = queryStart === -1 ? rawUrl : rawUrl.slice(0, queryStart)
    const search = queryStart === -1 ? '' : rawUrl.slice(queryStart)
    const entry: MutableRecordedRequest = { method, path: pathname + redactQuery(search), status: 0, at }
    if (this.#entries.length >= MAX_ENTRIES) this.#entries.splice(0, MAX_ENTRIES / 10)
    this.#entries.push(entry)
    this.#total += 1
    for (const key of new Set([pathname, decodePathname(pathname)])) this.#counts.set(key, (this.#counts.get(key) ?? 0) + 1)

    // Every path to the wire (explicit writeHead, or an implicit one from write/end) goes
    // through writeHead, so the status is known before the first byte can reach a client.
    const writeHead = res.writeHead.bind(res) as (...a: unknown[]) => ServerResponse
    res.writeHead = function (this: ServerResponse, ...args: unknown[]) {
      entry.status = typeof args[0] === 'number' ? args[0] : this.statusCode
      return writeHead(...args)
    }
    return entry
  }

  /**
   * Requests whose pathname (without query) equals `path`, either as received or decoded
   * segment by segment (`/groups/me/groups/fc:org:example.org` counts requests for
   * `/groups/me/groups/fc%3Aorg%3Aexample.org`); all requests without `path`.
   */
  count(path?: string): number {
    return path === undefined ? this.#total : (this.#counts.get(path) ?? 0)
  }

  /** Forgets all entries and counters. */
  reset(): void {
    this.#entries = []
    this.#counts = new Map()
    this.#total = 0
  }
}

function redactQuery(search: string): string {
  if (search.length <= 1) return search
  return (
    '?' +
    search
      .slice(1)
      .split('&')
      .map((pair) => {
        const equals = pair.indexOf('=')
        const name = equals === -1 ? pair : pair.slice(0, equals)
        let decoded = name
        try {
          decoded = decodeURIComponent(name.replaceAll('+', ' '))
        } catch {
          // Keep the raw name: it cannot be one of the redacted ones then.
        }
        return equals !== -1 && REDACTED_PARAMETERS.test(decoded) ? `${name}=[redacted]` : pair
      })
      .join('&')
  )
}
