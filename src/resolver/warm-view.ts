/**
 * The warm path's view: the decision rules (`../decision/evaluate.ts`) evaluated on the fresh
 * answers the store holds, synchronously, without a promise or a call. When they settle
 * the requirement, that is the decision `check` gives; when they cannot, the cold path
 * fetches what is missing.
 *
 * A decision the rules reach here is remembered on the token's `me/groups` entry
 * (`store/remembered-verdict.ts`) for as long as the answers it read stay fresh and their
 * dates do not change it: the next warm decision for the same token and requirement is
 * one map lookup, the entry's, and a comparison of instants.
 *
 * @module
 */
import type { DecisionObserver } from '../decision/decide.js'
import { evaluate, LookupFailure, Needs, UNKNOWN, type DecisionView } from '../decision/evaluate.js'
import { listChangeAfter, type GroupsIndex } from '../decision/groups-index.js'
import { nextChangeAfter } from '../decision/membership.js'
import type { Decision } from '../decision/types.js'
import type { Requirement } from '../decision/requirements.js'
import type { Membership } from '../types.js'
import type { AnswerStore } from './store/answer-store.js'
import type { CacheEntry } from './store/cache-entry.js'
import { recall, remember, type RememberedVerdict } from './store/remembered-verdict.js'
import type { Place, Telemetry } from './telemetry.js'

const LIST: Place = Object.freeze({ endpoint: 'me/groups' })
const MEMBERSHIP: Place = Object.freeze({ endpoint: 'me/groups/{groupid}' })
const NONE: readonly string[] = Object.freeze([])

/**
 * Evaluates requirements on cached answers for one resolver.
 */
export interface WarmView {
  /**
   * The decision fresh cached answers give, or `undefined` when they cannot settle it. An
   * `observer` (`resolver.explain`'s) watches the evaluation: it always runs the rules,
   * never a remembered verdict.
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
  /** The token's fresh `me/groups` entry, read once per decision. */
  let groups: CacheEntry | undefined
  /** Whether the rules read the list. */
  let listRead = false
  /** The earliest instant at which an answer the rules read stops being fresh, or changes by its dates. */
  let until = Infinity
  const memberships: string[] = []
  /** The verdict the last decision came from, when it was a remembered one. */
  let recalled: RememberedVerdict | undefined

  const view: DecisionView & { now: number } = {
    now: 0,
    roles,
    list() {
      listRead = true
      return groups === undefined ? UNKNOWN : (groups.value as GroupsIndex)
    },
    membership(groupId): Membership | null | typeof UNKNOWN {
      const entry = store.fresh(digest, 'membership', groupId, at)
      if (entry === undefined) return UNKNOWN
      memberships.push(groupId)
      const membership = entry.value as Membership | null
      until = Math.min(until, entry.freshUntil, membership === null ? Infinity : nextChangeAfter(membership, at))
      return membership
    },
    predicate: () => UNKNOWN,
  }

  /** Keeps the rules' decision on the `me/groups` entry, valid while what they read stays as it was. */
  function keep(entry: CacheEntry, requirement: Requirement, decision: Decision): void {
    const holdsUntil = Math.min(until, entry.freshUntil, listRead ? listChangeAfter(entry.value as GroupsIndex, at) : Infinity)
    const verdict: RememberedVerdict = {
      requirement,
      decision,
      since: at,
      until: holdsUntil,
      memberships: memberships.length === 0 ? NONE : memberships.slice(),
    }
    entry.verdicts = remember(entry.verdicts, verdict)
  }

  return {
    decide(tokenDigest, requirement, now, observer) {
      digest = tokenDigest
      at = now
      groups = store.fresh(tokenDigest, 'groups', undefined, now)
      if (observer === undefined && groups !== undefined) {
        recalled = recall(groups.verdicts, requirement, now)
        if (recalled !== undefined) return recalled.decision
      } else recalled = undefined
      view.now = now
      listRead = false
      until = Infinity
      // Set only when needed: a length store costs a call into the runtime even at 0.
      if (memberships.length !== 0) memberships.length = 0
      if (observer !== undefined) {
        const watched = evaluate(requirement, observer.watch(view), observer)
        return watched instanceof Needs || watched instanceof LookupFailure ? undefined : watched
      }
      const result = evaluate(requirement, view)
      if (result instanceof Needs || result instanceof LookupFailure) return undefined
      // Every requirement the warm path can settle reads the list, so the entry is there.
      if (groups !== undefined) keep(groups, requirement, result)
      return result
    },
    recordHits() {
      // A remembered verdict read the list: every decision the warm path reaches does.
      if ((recalled !== undefined || listRead) && groups !== undefined) {
        telemetry.hit(LIST)
        telemetry.traceWarmHit(LIST)
      }
      for (const groupId of recalled === undefined ? memberships : recalled.memberships) {
        telemetry.hit({ endpoint: 'me/groups/{groupid}', groupId })
        telemetry.traceWarmHit(MEMBERSHIP)
      }
    },
  }
}
