/**
 * The cold path of a decision: evaluate on what is known, fetch what is missing (the list
 * first, then the memberships and `where` predicates in parallel), evaluate again. The
 * rules themselves live in `evaluate.ts` only.
 *
 * @module
 */
import type { PredicateRequirement, Requirement, RequirementContext } from './requirements.js'
import type { Membership } from '../types.js'
import { evaluate, LookupFailure, Needs, UNKNOWN, type DecisionView, type EvaluationObserver } from './evaluate.js'
import type { GroupsIndex } from './groups-index.js'
import type { Decision } from './types.js'

/**
 * The lookups a cold decision may make, bound to one token by the resolver (cached,
 * coalesced, and so on).
 */
export interface DecisionLookups {
  readonly now: number
  readonly roles: readonly string[]
  groups(): Promise<GroupsIndex>
  membership(groupId: string): Promise<Membership | null>
  /** What `where` predicates receive. */
  context(): RequirementContext
}

/**
 * Watches a cold decision for `resolver.explain`: every round's evaluation, part by part,
 * and every answer each part reads (through the view it returns).
 */
export interface DecisionObserver extends EvaluationObserver {
  /** The view the rules read in a round: `view` itself, or one that notes each read. */
  watch(view: DecisionView): DecisionView
}

/**
 * Decides a requirement completely, fetching what it needs. Rejects (with the lookup's
 * error) when the outcome depends on an answer that failed: unknown is never turned into
 * allowed or denied. An `observer` watches every round; the last one is the decision's.
 */
export async function decide(requirement: Requirement, lookups: DecisionLookups, observer?: DecisionObserver): Promise<Decision> {
  const known = createKnownView(lookups)
  for (;;) {
    const result = observer === undefined ? evaluate(requirement, known.view) : evaluate(requirement, observer.watch(known.view), observer)
    if (result instanceof LookupFailure) throw result.error
    if (!(result instanceof Needs)) return result
    await known.fetch(result)
  }
}

type Known<T> = T | LookupFailure

/** The answers fetched so far for one decision, as a {@link DecisionView}. */
function createKnownView(lookups: DecisionLookups) {
  let list: Known<GroupsIndex> | typeof UNKNOWN = UNKNOWN
  const memberships = new Map<string, Known<Membership | null>>()
  const predicates = new Map<PredicateRequirement, Known<boolean>>()

  const view: DecisionView = {
    now: lookups.now,
    roles: lookups.roles,
    list: () => list,
    // `has` first: a stored `null` is an answer (a 404), not a missing one.
    membership: (groupId) => (memberships.has(groupId) ? (memberships.get(groupId) as Known<Membership | null>) : UNKNOWN),
    predicate: (requirement) => predicates.get(requirement) ?? UNKNOWN,
  }

  async function fetch(needs: Needs): Promise<void> {
    // Every round learns at least one answer, so a decision takes a bounded number of rounds.
    if (!needs.list && needs.memberships.length === 0 && needs.predicates.length === 0) {
      throw new Error('voot-guard: a decision needed nothing it did not know (a bug)')
    }
    if (needs.list) {
      list = await settle(lookups.groups())
      return
    }
    await Promise.all([
      ...needs.memberships.map(async (groupId) => {
        memberships.set(groupId, await settle(lookups.membership(groupId)))
      }),
      ...needs.predicates.map(async (requirement) => {
        const result = await settle(runPredicate(requirement, lookups))
        predicates.set(requirement, result instanceof LookupFailure ? result : result === true)
      }),
    ])
  }

  return { view, fetch }
}

function runPredicate(requirement: PredicateRequirement, lookups: DecisionLookups): Promise<unknown> {
  try {
    return Promise.resolve(requirement.predicate(lookups.context()))
  } catch (error) {
    return Promise.reject(error)
  }
}

function settle<T>(promise: Promise<T>): Promise<Known<T>> {
  return promise.then(
    (value) => value,
    (error: unknown) => new LookupFailure(error),
  )
}
