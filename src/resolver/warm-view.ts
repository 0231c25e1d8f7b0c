/**
 * The warm path's view: the decision rules (`../decision/evaluate.ts`) evaluated on the fresh
 * answers the store holds, synchronously, without a promise or a call. When they settle
 * the requirement, that is the decision `check` gives; when they cannot, the cold path
 * fetches what is missing.
 *
 * @module
 */
import type { DecisionObserver } from '../decision/decide.js'
import { evaluate, LookupFailure, Needs, UNKNOWN, type DecisionView } from '../decision/evaluate.js'
import type { GroupsIndex } from '../decision/groups-index.js'
import type { Decision } from '../decision/types.js'
import type { Requirement } from '../decision/requirements.js'
import type { Membership } from '../types.js'
import type { AnswerStore } from './store/answer-store.js'
import type { Place, Telemetry } from './telemetry.js'

const LIST: Place = Object.freeze({ endpoint: 'me/groups' })
const MEMBERSHIP: Place = Object.freeze({ endpoint: 'me/groups/{groupid}' })

/**
 * Evaluates requirements on cached answers for one resolver.
 */
export interface WarmView {
  /**
   * The decision fresh cached answers give, or `undefined` when they cannot settle it. An
   * `observer` (`resolver.explain`'s) watches the evaluation.
   */
  decide(digest: string, requirement: Requirement, at: number, observer?: DecisionObserver): Decision | undefined
  /** Counts the answers the last `decide` read as cache hits (call it when that decision is used). */
  recordHits(): void
}

/**
 * Creates the {@link WarmView} of one resolver. One view object serves every request:
 * evaluation is synchronous, so its per-request fields are simply overwritten.
 */
export function createWarmView(store: AnswerStore, telemetry: Telemetry, roles: readonly string[]): WarmView {
  let digest = ''
  let at = 0
  let list: GroupsIndex | typeof UNKNOWN | undefined
  const memberships: string[] = []

  const view: DecisionView & { now: number } = {
    now: 0,
    roles,
    list() {
      // Read once per decision: an `anyOf` of groups asks for it once per alternative.
      list ??= (store.fresh(digest, 'groups', undefined, at)?.value as GroupsIndex | undefined) ?? UNKNOWN
      return list
    },
    membership(groupId): Membership | null | typeof UNKNOWN {
      const entry = store.fresh(digest, 'membership', groupId, at)
      if (entry === undefined) return UNKNOWN
      memberships.push(groupId)
      return entry.value as Membership | null
    },
    predicate: () => UNKNOWN,
  }

  return {
    decide(tokenDigest, requirement, now, observer) {
      digest = tokenDigest
      at = now
      view.now = now
      list = undefined
      // Set only when needed: a length store costs a call into the runtime even at 0.
      if (memberships.length !== 0) memberships.length = 0
      const result = observer === undefined ? evaluate(requirement, view) : evaluate(requirement, observer.watch(view), observer)
      return result instanceof Needs || result instanceof LookupFailure ? undefined : result
    },
    recordHits() {
      if (list !== undefined && list !== UNKNOWN) {
        telemetry.hit(LIST)
        telemetry.traceWarmHit(LIST)
      }
      for (const groupId of memberships) {
        telemetry.hit({ endpoint: 'me/groups/{groupid}', groupId })
        telemetry.traceWarmHit(MEMBERSHIP)
      }
    },
  }
}
