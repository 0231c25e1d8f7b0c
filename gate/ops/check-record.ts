/**
 * One check, answered: the record a check hands to whoever observes it. It lives below the
 * check endpoints so that the decision log and the metrics, which read it, stand under them.
 *
 * @module
 */
import type { CompiledRule } from '../config/types.js'
import type { Answer } from '../http/answer.js'
import type { CheckProtocol, OriginalRequest, ProxyRequest } from '../http/original-request.js'

/**
 * One check, answered: what the decision log writes and the policy tests read.
 *
 * @example
 * ```ts
 * const observe = (record: CheckRecord) => console.log(record.answer.status, record.rule?.id, record.reason)
 * ```
 */
export interface CheckRecord {
  readonly protocol: CheckProtocol
  readonly req: ProxyRequest
  /** The original request, when the proxy's headers described one. */
  readonly original: OriginalRequest | undefined
  /** The rule that answered; `undefined` when the check was refused before a rule matched, or none did. */
  readonly rule: CompiledRule | undefined
  readonly answer: Answer
  /**
   * Why, as a code: `allowed`, `anyone`; a denial's reason (`not_member`, `role_too_low`,
   * `inactive`, ...); `no_rule`, `ambiguous_path`, `unknown_host`, `host_mismatch`; `untrusted_peer`, `no_original_request`;
   * `no_service` (a bearer token for a host no group service is routed to, sent nowhere);
   * `no_credentials`, `session_expired`; or the error's code (`ERR_TOKEN_INVALID`,
   * `ERR_UPSTREAM_TIMEOUT`, ...).
   */
  readonly reason: string
  /** The user's `sub` when known (a session, or userinfo with `oauth`); else empty. */
  readonly user: string
  /** Milliseconds the check took. */
  readonly ms: number
  /** With several group services: the one the check's token went to (`null`: none was chosen); `undefined` with one service. */
  readonly service?: string | null
}
