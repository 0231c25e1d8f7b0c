/**
 * The group service's side of the emulator: one request on a path of the dialect's group
 * service (`/groups/...` for Dataporten, `/me/...` for OpenConext) goes through the rate
 * limit, the configured latency and the injected faults, and then gets the answer the real
 * service would give.
 *
 * @module
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import { writeAnswer } from '../answer.js'
import { identifyCaller } from '../bearer-auth.js'
import type { EmulatorData } from '../data/data.js'
import type { DialectRoutes } from './dialect-routes.js'
import { pause, replacementAnswer, resetConnection, writeOversized, writeSlowly, writeTruncated, wrongShape } from './fault-answers.js'
import type { FaultRegistry } from './faults.js'
import { decodePathname } from './group-routes.js'
import type { RateLimiter } from './rate-limiter.js'
import type { TokenStore } from '../token-store.js'

/**
 * Options of {@link createGroupService}.
 */
export interface GroupServiceOptions {
  /** The data served (live). */
  data: EmulatorData
  /** The dialect's routes. */
  routes: DialectRoutes
  tokens: TokenStore
  faults: FaultRegistry
  /** Milliseconds added to every answer. */
  latency: number
  /** The per-address limit in force now (the console can change it); none when it gives `undefined`. */
  limiter: () => RateLimiter | undefined
  /** Clock, in ms since the epoch. */
  now: () => number
}

/**
 * The group endpoints' request handler.
 */
export interface GroupService {
  /**
   * Answers one request. `entry` is the request's log entry (its `user` is filled in);
   * `signal` fires when the connection closes and cuts every wait short.
   */
  handle(
    req: IncomingMessage,
    res: ServerResponse,
    request: { readonly rawUrl: string; readonly entry: { user?: string }; readonly signal: AbortSignal },
  ): Promise<void>
}

/**
 * Creates the handler of the group endpoints.
 */
export function createGroupService(options: GroupServiceOptions): GroupService {
  const { data, routes, tokens, faults, latency, limiter, now } = options
  return {
    async handle(req, res, { rawUrl, entry, signal }) {
      const queryStart = rawUrl.indexOf('?')
      const pathname = queryStart === -1 ? rawUrl : rawUrl.slice(0, queryStart)
      const caller = identifyCaller(req.headers.authorization, tokens)
      if (caller.kind === 'token' && caller.record.userId !== undefined) entry.user = caller.record.userId
      const verdict = limiter()?.take(req.socket.remoteAddress ?? '')
      if (!(await pause(latency, signal))) return
      if (verdict?.allowed === false) {
        writeAnswer(res, { status: 429, headers: { 'retry-after': String(verdict.retryAfterSeconds) }, body: '' })
        return
      }

      const route = routes.match(pathname)
      const user = caller.kind === 'token' ? caller.record.userId : undefined
      const fault = faults.take({ token: caller.token, user, pathname, decodedPathname: decodePathname(pathname), route: route?.name })
      switch (fault?.kind) {
        case 'latency':
          if (!(await pause(fault.ms, signal))) return
          break
        case 'hang':
          return // The socket stays open, headers unsent, until the client gives up or close().
        case 'reset':
          resetConnection(req.socket)
          return
        case 'oversized':
          await writeOversized(res, fault.bytes, signal)
          return
      }
      const replacement = fault && replacementAnswer(fault)
      if (replacement !== undefined) {
        writeAnswer(res, replacement)
        return
      }

      const request = {
        method: req.method ?? 'GET',
        query: new URLSearchParams(queryStart === -1 ? '' : rawUrl.slice(queryStart + 1)),
        caller,
        data,
        now: now(),
        ...(fault?.kind === 'partial' ? { omit: new Set(fault.omit) } : {}),
      }
      const answer = route === undefined ? routes.unknownRoute(request) : route.answer(request)
      switch (fault?.kind) {
        case 'wrong-shape':
          writeAnswer(res, wrongShape(answer, route?.list === true))
          return
        case 'reset-mid-body':
          writeTruncated(res, answer)
          return
        case 'slow-body':
          await writeSlowly(res, answer, fault.bytesPerSecond, signal)
          return
      }
      writeAnswer(res, answer)
    },
  }
}
