/**
 * The decision rules, in ONE place: what a requirement comes to on what is known of one
 * user. Both paths use it: the warm path evaluates on what is cached and gets a
 * {@link Decision} back (or learns that something is missing); the cold path
 * (`decide.ts`) evaluates, fetches what is missing, and evaluates again.
 *
 * The rule that shapes this module is **absence is not denial**: `me/groups` can be
 * partial (a backend of the group service timed out, and it still answered 200), so a
 * group missing from it proves nothing. A group requirement may be *allowed* from the
 * list, but it is *denied* only after `me/groups/{id}` answered 404 or a membership that
 * fails the role or active test.
 *
 * Three outcomes, never two: allowed, denied, or unknown (a lookup failed). An allowed
 * alternative settles an `anyOf`, and a denied part settles an `allOf`, even when another
 * part's lookup failed; otherwise a failure makes the outcome unknown.
 *
 * @module
 */
import { membershipReason } from './membership.js'
import { describeRequirement, type PredicateRequirement, type Requirement } from './requirements.js'
import type { Membership } from '../types.js'
import { findListed, type GroupsIndex } from './groups-index.js'
import type { Decision, DecisionReason, DenialReason } from './types.js'

/**
 * Marks an answer that is not known yet (not cached, not fetched).
 */
export const UNKNOWN: unique symbol = Symbol('unknown')

/**
 * An answer whose lookup failed: the decision can only be unknown unless other answers
 * settle it.
 */
export class LookupFailure {
  constructor(readonly error: unknown) {}
}

/**
 * What an evaluation may read: the answers known so far for one user.
 */
export interface DecisionView {
  /** The instant the decision is made at (ms since the epoch), for dated memberships. */
  readonly now: number
  /** The resolver's role order. */
  readonly roles: readonly string[]
  /** `me/groups`. */
  list(): GroupsIndex | typeof UNKNOWN | LookupFailure
  /** `me/groups/{id}`: a membership, or `null` for a 404. */
  membership(groupId: string): Membership | null | typeof UNKNOWN | LookupFailure
  /** The result of a `where` predicate. */
  predicate(requirement: PredicateRequirement): boolean | typeof UNKNOWN | LookupFailure
}

/**
 * What an evaluation still needs before it can decide. The list comes first: which
 * memberships are needed is known only once the list is.
 */
export class Needs {
  list = false
  readonly memberships: string[] = []
  readonly predicates: PredicateRequirement[] = []
}

/**
 * Watches one evaluation, part by part, for `resolver.explain`: what each part of the
 * requirement came to, in the order the rules judged them. Parts the rules did not need
 * (an `anyOf` settled before them) are never entered.
 */
export interface EvaluationObserver {
  /** The rules start on `requirement` (the root first, then its parts, depth first). */
  enter(requirement: Requirement): void
  /**
   * The rules are done with `requirement`: its decision, the failure that leaves it
   * unknown, or `undefined` while an answer it needs is missing. A part's decision that is
   * the very object its parent decided (`===`) is the part that settled the parent.
   */
  leave(requirement: Requirement, verdict: Decision | LookupFailure | undefined): void
}

/**
 * Evaluates a requirement on a view: a {@link Decision} when the known answers settle it,
 * a {@link LookupFailure} when it is unknown because a lookup failed, or the {@link Needs}
 * it still has. An `observer` hears of every part the rules judge.
 */
export function evaluate(requirement: Requirement, view: DecisionView, observer?: EvaluationObserver): Decision | LookupFailure | Needs {
  needs = undefined
  // Set by every evaluation, so one that threw leaves nothing behind for the next.
  watching = observer
  const verdict = judge(requirement, view)
  watching = undefined
  if (verdict !== PENDING) return verdict
  const missing = needs as Needs | undefined
  needs = undefined
  return missing ?? new Needs()
}

const PENDING: unique symbol = Symbol('pending')
type Verdict = Decision | LookupFailure | typeof PENDING

// Evaluation is synchronous and never re-entered (views only read), so the needs of one
// evaluation are gathered here, and an evaluation that decides allocates nothing.
let needs: Needs | undefined
// The observer of the evaluation under way, if any (never on the warm path).
let watching: EvaluationObserver | undefined

function need(): Needs {
  return (needs ??= new Needs())
}

function judge(requirement: Requirement, view: DecisionView): Verdict {
  const observer = watching
  if (observer === undefined) return rule(requirement, view)
  observer.enter(requirement)
  const verdict = rule(requirement, view)
  observer.leave(requirement, verdict === PENDING ? undefined : verdict)
  return verdict
}

function rule(requirement: Requirement, view: DecisionView): Verdict {
  switch (requirement.kind) {
    case 'group': {
      const list = view.list()
      if (list === UNKNOWN) return needList()
      if (list instanceof LookupFailure) return list
      const { groupId, role } = requirement
      const listed = findListed(list, groupId)
      if (listed !== undefined && membershipReason(listed.membership, role, view.roles, view.now, listed) === 'ok') {
        return allowed(requirement, 'member', groupId)
      }
      const membership = view.membership(groupId)
      if (membership === UNKNOWN) {
        const missing = need()
        if (!missing.memberships.includes(groupId)) missing.memberships.push(groupId)
        return PENDING
      }
      if (membership instanceof LookupFailure) return membership
      if (membership === null) return denied(requirement, 'not_member', groupId)
      const verdict = membershipReason(membership, role, view.roles, view.now, listed)
      return verdict === 'ok' ? allowed(requirement, 'member', groupId) : denied(requirement, verdict, groupId)
    }
    case 'groupOfType': {
      const list = view.list()
      if (list === UNKNOWN) return needList()
      if (list instanceof LookupFailure) return list
      const { groupType, role } = requirement
      // `me/groups` alone decides here (it may be partial: see groupOfType()); with no
      // group of the type listed, the user is not a member of one as far as it shows.
      let reason: DenialReason = 'not_member'
      for (const g of list.list) {
        if (g.type !== groupType) continue
        const verdict = membershipReason(g.membership, role, view.roles, view.now, g)
        if (verdict === 'ok') return allowed(requirement, 'member')
        reason = closer(reason, verdict)
      }
      return denied(requirement, reason)
    }
    case 'authenticated': {
      // A `me/groups` answer proves a valid personal token with the groups scope.
      const list = view.list()
      if (list === UNKNOWN) return needList()
      return list instanceof LookupFailure ? list : allowed(requirement, 'authenticated')
    }
    case 'where': {
      const result = view.predicate(requirement)
      if (result === UNKNOWN) {
        need().predicates.push(requirement)
        return PENDING
      }
      if (result instanceof LookupFailure) return result
      return result ? allowed(requirement, 'predicate') : denied(requirement, 'predicate')
    }
    case 'anyOf': {
      const verdict = combine(requirement.requirements, view, true)
      // Every alternative was denied: the reason is the one closest to being met.
      return verdict instanceof EveryPart ? denied(requirement, verdict.closest ?? 'not_member') : verdict
    }
    case 'allOf': {
      const verdict = combine(requirement.requirements, view, false)
      return verdict instanceof EveryPart ? allowed(requirement, 'member') : verdict
    }
  }
}

/**
 * How close a denial is to being met, closest first: a membership with a lower role, one
 * not yet or no longer valid, an inactive one, a predicate, no membership at all. Of the
 * parts of a requirement that were all denied, the decision names the closest.
 */
const CLOSENESS: readonly DenialReason[] = ['role_too_low', 'not_yet_valid', 'expired', 'inactive', 'predicate', 'not_member']

function closer(a: DenialReason, b: DenialReason): DenialReason {
  return CLOSENESS.indexOf(b) < CLOSENESS.indexOf(a) ? b : a
}

/**
 * No part settled an `anyOf` or `allOf`: every part came out the other way. For an `anyOf`,
 * `closest` is the denial closest to being met.
 */
class EveryPart {
  constructor(readonly closest: DenialReason | undefined) {}
}

// One per reason, made once: combining allocates nothing.
const EVERY_PART = new Map<DenialReason | undefined, EveryPart>(
  [undefined, ...CLOSENESS].map((closest) => [closest, new EveryPart(closest)] as const),
)

/**
 * The parts of an `anyOf` (settled by the first part allowed) or an `allOf` (by the first
 * part denied): that part's decision; else PENDING while a part could still settle it;
 * else the first failure (unknown); else {@link EveryPart}: every part came out the other way.
 */
function combine(parts: readonly Requirement[], view: DecisionView, settledBy: boolean): Verdict | EveryPart {
  let pending = false
  let failure: LookupFailure | undefined
  let reason: DenialReason | undefined
  for (const inner of parts) {
    const verdict = judge(inner, view)
    if (verdict === PENDING) pending = true
    else if (verdict instanceof LookupFailure) failure ??= verdict
    else if (verdict.allowed === settledBy) return verdict
    else if (settledBy) reason = reason === undefined ? (verdict.reason as DenialReason) : closer(reason, verdict.reason as DenialReason)
  }
  if (pending) return PENDING
  if (failure !== undefined) return failure
  return EVERY_PART.get(reason) as EveryPart
}

function needList(): typeof PENDING {
  need().list = true
  return PENDING
}

// Requirements are frozen and built once per route, so what depends on them alone is
// computed once too, instead of a string and an object on every request.
const allowedDecisions = new WeakMap<Requirement, Decision>()

/** An allowed decision: frozen and shared by every request that meets the requirement the same way. */
function allowed(requirement: Requirement, reason: DecisionReason, groupId?: string): Decision {
  const shared = allowedDecisions.get(requirement)
  if (shared !== undefined && shared.reason === reason && shared.groupId === groupId) return shared
  const decision: Decision = Object.freeze(
    groupId === undefined
      ? { allowed: true, reason, requirement: describeRequirement(requirement) }
      : { allowed: true, reason, requirement: describeRequirement(requirement), groupId },
  )
  allowedDecisions.set(requirement, decision)
  return decision
}

function denied(requirement: Requirement, reason: DenialReason, groupId?: string): Decision {
  return Object.freeze(
    groupId === undefined
      ? { allowed: false, reason, requirement: describeRequirement(requirement) }
      : { allowed: false, reason, requirement: describeRequirement(requirement), groupId },
  )
}
