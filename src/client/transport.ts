/**
 * What the upstream call needs from whatever carries it over the network: one request, and
 * its response read under a byte limit. Two transports implement it and the package's
 * `imports` conditions choose one (`#transport`): undici's pool on Node
 * (`transport-undici.ts`), the runtime's global `fetch` everywhere else
 * (`transport-fetch.ts`). The rules of a call (deadline, redirects refused, statuses, body
 * checks, errors without the token) live once, in `upstream-call.ts`, above both.
 *
 * @module
 */
import type { ResolvedGroupsClientOptions } from './options.js'

/**
 * One response, before its body is read.
 */
export interface UpstreamResponse {
  readonly status: number
  /** The value of a header (lower-case name), or `undefined` when it is absent or repeated. */
  header(name: string): string | undefined
  /** Whether the transport already undid a `Content-Encoding` (fetch does; undici does not). */
  readonly decodesContent: boolean
  /** Reads the whole body, rejecting with `tooLarge()` as soon as more than `limit` bytes arrived. */
  read(limit: number, tooLarge: () => Error): Promise<Uint8Array>
  /** Reads or drops an error body so the connection can serve the next call; never rejects. */
  drain(): Promise<void>
  /** Releases a body that was not read to its end; never throws. */
  discard(): void
}

/**
 * Carries the calls of one groups client.
 */
export interface Transport {
  /**
   * One `GET`; rejects on a network failure or when `signal` fires. A redirect is returned,
   * never followed. A call that must wait for a slot is sent no later than `sendBy` (on the
   * clock of `performance.now()`), else refused with `SendExpiredError`; its slot is held
   * until the request has finished at the connection, not only until the caller gave up.
   */
  request(url: string, headers: Readonly<Record<string, string>>, signal: AbortSignal, sendBy: number): Promise<UpstreamResponse>
  /** Releases what the transport opened itself. */
  close(): Promise<void>
}

/**
 * What each transport module exports as `createTransport`. Throws `InvalidOptionError` for
 * an option the transport cannot honour.
 */
export type CreateTransport = (settings: ResolvedGroupsClientOptions) => Transport

/**
 * Most calls one client has open at the group service at once; callers above it queue
 * (within their deadline). Both transports count them with `call-slots.ts`; undici's pool
 * holds as many connections, so that it never queues a request of its own.
 */
export const MAX_CONCURRENT_CALLS = 64
