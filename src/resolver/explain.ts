/**
 * `resolver.explain`: a decision with the tree of how it came about. The decision is made by
 * the one engine (`decide.ts`, `evaluate.ts`), which this module only watches: which parts
 * of the requirement the rules judged, what each came to, which answers each read, and
 * where each answer came from (cached or fetched). It decides nothing itself.
 *
 * The tree holds the user's own memberships: it is for the person who holds the token (the
 * command line's `check --explain`), never for a response, a log line, a span or a metric.
 *
 * @module
 */
import type { GroupsClient } from '../client/groups-client.js'
import { decide, type DecisionLookups, type DecisionObserver } from '../decision/decide.js'
import { LookupFailure, UNKNOWN, type DecisionView } from '../decision/evaluate.js'
import { findListed, type GroupsIndex } from '../decision/groups-index.js'
import { activityAt, type Activity } from '../decision/membership.js'
import { describeRequirement, type Requirement } from '../decision/requirements.js'
import type { Decision, DecisionReason } from '../decision/types.js'
import type { CacheTier } from '../tracing-channels.js'
import type { Group, Membership } from '../types.js'
import { createDecisionLookups, type TokenLookup } from './decision-lookups.js'
import type { Lookup, SlowestTier } from './lookups.js'

/**
 * What `resolver.explain` resolves to: the decision `check` would give, and how it came
 * about.
 *
 * @example
 * ```ts
 * const { decision, tree } = await resolver.explain(token, group('fc:org:example.org', 'admin'))
 * ```
 */
export interface Explanation {
  readonly decision: Decision
  readonly tree: ExplainedNode
}

/**
 * One part of the requirement in an {@link Explanation}: an `anyOf` or `allOf` with its
 * parts, or a leaf with the answers it read.
 *
 * @example
 * ```ts
 * const leaves = (node: ExplainedNode): ExplainedLeaf[] => ('parts' in node ? node.parts.flatMap(leaves) : [node])
 * ```
 */
export type ExplainedNode = ExplainedBranch | ExplainedLeaf

/**
 * What every part of an {@link Explanation}'s tree says.
 *
 * @example
 * ```ts
 * const node: ExplainedPart = { kind: 'group', requirement: 'group fc:adhoc:1', outcome: 'denied', reason: 'not_member', settled: true }
 * ```
 */
export interface ExplainedPart {
  readonly kind: Requirement['kind']
  /** The part's description, as in `Decision.requirement`. */
  readonly requirement: string
  /**
   * What the rules made of the part: `allowed`, `denied`, `unknown` (a lookup it needed
   * failed, and another part settled the decision anyway), or `skipped` (not needed:
   * another part settled its `anyOf` or `allOf` first; the answers it had read are listed).
   */
  readonly outcome: 'allowed' | 'denied' | 'unknown' | 'skipped'
  /** The part's own reason, when allowed or denied. */
  readonly reason?: DecisionReason
  /**
   * Whether the decision rests on this part: the alternative that held for an allowed
   * `anyOf`, the part that failed for a denied `allOf`, every part of a denied `anyOf` and
   * of an allowed `allOf` (each was needed), and the requirement itself.
   */
  readonly settled: boolean
}

/**
 * An `anyOf` or `allOf` in an {@link Explanation}'s tree.
 *
 * @example
 * ```ts
 * if (tree.kind === 'anyOf') console.info(tree.parts.length)
 * ```
 */
export interface ExplainedBranch extends ExplainedPart {
  readonly kind: 'anyOf' | 'allOf'
  readonly parts: readonly ExplainedNode[]
}

/**
 * A `group`, `groupOfType`, `where` or `authenticated` requirement in an
 * {@link Explanation}'s tree, with the answers it read.
 *
 * @example
 * ```ts
 * for (const answer of leaf.answers) console.info(answer.endpoint, answer.source)
 * ```
 */
export interface ExplainedLeaf extends ExplainedPart {
  readonly kind: 'group' | 'groupOfType' | 'where' | 'authenticated'
  readonly answers: readonly ExplainedAnswer[]
}

/**
 * One answer a leaf read: `me/groups` (for a `group`, the entry of its group; for a
 * `groupOfType`, one entry per group of the type), `me/groups/{id}`, or a `where`
 * predicate's result.
 *
 * @example
 * ```ts
 * const answer: ExplainedAnswer = { endpoint: 'me/groups/{groupid}', groupId: 'fc:adhoc:1', source: 'fetched', tier: 'upstream', membership: null }
 * ```
 */
export interface ExplainedAnswer {
  readonly endpoint: 'me/groups' | 'me/groups/{groupid}' | 'where'
  /** The group the answer is about. */
  readonly groupId?: string
  /** `cached` (from `l1` or `l2`) or `fetched` (`upstream`, or another caller's call: `coalesced`). */
  readonly source?: 'cached' | 'fetched'
  readonly tier?: CacheTier
  /** The membership the answer gives: `null` for none (a 404, or not listed in `me/groups`). */
  readonly membership?: ExplainedMembership | null
  /** For `authenticated`: how many groups `me/groups` listed. */
  readonly listed?: number
  /** For `where`: what the predicate returned (true or not). */
  readonly result?: boolean
  /** The code of the failure, when the lookup failed. */
  readonly error?: string
}

/**
 * A membership as the rules saw it at the decision's instant.
 *
 * @example
 * ```ts
 * const m: ExplainedMembership = { role: 'member', activity: 'expired', notAfter: '2020-06-30T22:00:00Z' }
 * ```
 */
export interface ExplainedMembership {
  /** `basic`, when it is a string. */
  readonly role: string | undefined
  /** `active`, or why not: the membership's own `active` and dates, then its group's. */
  readonly activity: Activity
  readonly notBefore?: string
  readonly notAfter?: string
}

/** What one part of the requirement came to in the last round, as the observer saw it. */
interface Frame {
  readonly requirement: Requirement
  readonly parts: Frame[]
  readonly reads: Read[]
  verdict: Decision | LookupFailure | undefined
}

type Read =
  | { readonly kind: 'list'; readonly value: GroupsIndex | LookupFailure }
  | { readonly kind: 'membership'; readonly groupId: string; readonly value: Membership | null | LookupFailure }
  | { readonly kind: 'predicate'; readonly value: boolean | LookupFailure }

/** Watches the rounds of one decision and keeps the last: the one that decided. */
class Recorder implements DecisionObserver {
  root: Frame | undefined
  private readonly stack: Frame[] = []

  watch(view: DecisionView): DecisionView {
    const note = (read: Read): void => {
      this.stack.at(-1)?.reads.push(read)
    }
    return {
      now: view.now,
      roles: view.roles,
      list() {
        const value = view.list()
        if (value !== UNKNOWN) note({ kind: 'list', value })
        return value
      },
      membership(groupId) {
        const value = view.membership(groupId)
        if (value !== UNKNOWN) note({ kind: 'membership', groupId, value })
        return value
      },
      predicate(requirement) {
        const value = view.predicate(requirement)
        if (value !== UNKNOWN) note({ kind: 'predicate', value })
        return value
      },
    }
  }

  enter(requirement: Requirement): void {
    const frame: Frame = { requirement, parts: [], reads: [], verdict: undefined }
    const parent = this.stack.at(-1)
    if (parent === undefined) this.root = frame
    else parent.parts.push(frame)
    this.stack.push(frame)
  }

  leave(_requirement: Requirement, verdict: Decision | LookupFailure | undefined): void {
    const frame = this.stack.pop()
    if (frame !== undefined) frame.verdict = verdict
  }
}

/** Where an answer came from: its tier, by lookup. */
type TierOf = (kind: 'list' | 'membership', groupId?: string) => CacheTier | undefined

const tierKey = (kind: 'list' | 'membership', groupId?: string): string => (kind === 'list' ? 'list' : `membership ${groupId ?? ''}`)

/** What the fresh cached answers decide, watched: the resolver's warm path. */
export type WarmDecision = (forToken: TokenLookup, requirement: Requirement, observer: DecisionObserver) => Decision | undefined

/**
 * Builds the `explain` of one resolver. It decides as `check` does: on the fresh cached
 * answers when they settle it (the warm path), else through the lookups a cold `check`
 * makes (L1, the shared tier, the group service), each watched for the tier it came from.
 */
export function createExplainer(
  client: GroupsClient,
  roles: readonly string[],
  lookup: (lookup: Lookup) => Promise<unknown>,
  warm: WarmDecision,
): (forToken: TokenLookup, requirement: Requirement) => Promise<Explanation> {
  return async (forToken, requirement) => {
    const cached = new Recorder()
    const quick = warm(forToken, requirement, cached)
    if (quick !== undefined) return { decision: quick, tree: explainNode(requirement, cached.root, true, () => 'l1', forToken.at) }

    const tiers = new Map<string, CacheTier | undefined>()
    const watched = async (wanted: Lookup): Promise<unknown> => {
      // The lookup marks the tier it used on `probe`.
      const probe: SlowestTier = {}
      const answer = await lookup({ ...wanted, slowest: probe })
      if (wanted.kind === 'groups') tiers.set(tierKey('list'), probe.tier)
      else if (wanted.kind === 'membership') tiers.set(tierKey('membership', wanted.groupId), probe.tier)
      return answer
    }
    const lookups: DecisionLookups = createDecisionLookups(client, roles, watched)(forToken)
    const recorder = new Recorder()
    const decision = await decide(requirement, lookups, recorder)
    const tierOf: TierOf = (kind, groupId) => tiers.get(tierKey(kind, groupId))
    return { decision, tree: explainNode(requirement, recorder.root, true, tierOf, forToken.at) }
  }
}

// eslint-disable-next-line max-params -- one node of a recursive walk: what it is, what it came to, its place, and the facts
function explainNode(requirement: Requirement, frame: Frame | undefined, settled: boolean, tiers: TierOf, now: number): ExplainedNode {
  const verdict = frame?.verdict
  const part = {
    kind: requirement.kind,
    requirement: describeRequirement(requirement),
    outcome: outcomeOf(frame, verdict),
    ...(verdict === undefined || verdict instanceof LookupFailure ? {} : { reason: verdict.reason }),
    settled,
  } as const
  if (requirement.kind === 'anyOf' || requirement.kind === 'allOf') {
    const frames = frame?.parts ?? []
    // The part whose decision is the branch's own settled it; when none is (every part came
    // out the other way), the branch rests on all of them.
    const decisive = frames.find((inner) => inner.verdict !== undefined && inner.verdict === verdict)
    return {
      ...part,
      kind: requirement.kind,
      parts: requirement.requirements.map((inner, index) => {
        const innerFrame = frames[index]
        const rests = settled && innerFrame !== undefined && (decisive === undefined ? verdict !== undefined : innerFrame === decisive)
        return explainNode(inner, innerFrame, rests, tiers, now)
      }),
    }
  }
  return { ...part, kind: requirement.kind, answers: frame === undefined ? [] : answersOf(requirement, frame.reads, tiers, now) }
}

function outcomeOf(frame: Frame | undefined, verdict: Decision | LookupFailure | undefined): ExplainedPart['outcome'] {
  // Not judged, or still waiting for an answer when another part settled the decision.
  if (frame === undefined || verdict === undefined) return 'skipped'
  if (verdict instanceof LookupFailure) return 'unknown'
  return verdict.allowed ? 'allowed' : 'denied'
}

function answersOf(requirement: Requirement, reads: readonly Read[], tierOf: TierOf, now: number): ExplainedAnswer[] {
  const answers: ExplainedAnswer[] = []
  for (const read of reads) {
    if (read.kind === 'predicate') {
      answers.push(
        read.value instanceof LookupFailure ? { endpoint: 'where', error: codeOf(read.value) } : { endpoint: 'where', result: read.value },
      )
      continue
    }
    const from = origin(read.kind === 'list' ? tierOf('list') : tierOf('membership', read.groupId))
    if (read.value instanceof LookupFailure) {
      const endpoint = read.kind === 'list' ? 'me/groups' : 'me/groups/{groupid}'
      answers.push({ endpoint, ...(read.kind === 'membership' ? { groupId: read.groupId } : {}), ...from, error: codeOf(read.value) })
    } else if (read.kind === 'membership') {
      answers.push({
        endpoint: 'me/groups/{groupid}',
        groupId: read.groupId,
        ...from,
        membership: read.value === null ? null : seen(read.value, now),
      })
    } else if (requirement.kind === 'group') {
      const listed = findListed(read.value, requirement.groupId)
      answers.push({
        endpoint: 'me/groups',
        groupId: requirement.groupId,
        ...from,
        membership: listed === undefined ? null : seen(listed.membership, now, listed),
      })
    } else if (requirement.kind === 'groupOfType') {
      for (const listed of read.value.list) {
        if (listed.type === requirement.groupType)
          answers.push({ endpoint: 'me/groups', groupId: listed.id, ...from, membership: seen(listed.membership, now, listed) })
      }
    } else {
      answers.push({ endpoint: 'me/groups', ...from, listed: read.value.list.length })
    }
  }
  return answers
}

/** A membership as the rules judged it: its own activity first, then its group's (`activityAt`, the rules' own). */
function seen(membership: Membership, now: number, group?: Group): ExplainedMembership {
  const own = activityAt(membership, now)
  const activity = own === 'active' && group !== undefined ? activityAt(group, now) : own
  return {
    role: typeof membership.basic === 'string' ? membership.basic : undefined,
    activity,
    ...(typeof membership.notBefore === 'string' ? { notBefore: membership.notBefore } : {}),
    ...(typeof membership.notAfter === 'string' ? { notAfter: membership.notAfter } : {}),
  }
}

function origin(tier: CacheTier | undefined): { source?: 'cached' | 'fetched'; tier?: CacheTier } {
  if (tier === undefined) return {}
  return { source: tier === 'l1' || tier === 'l2' ? 'cached' : 'fetched', tier }
}

function codeOf(failure: LookupFailure): string {
  const code = (failure.error as { code?: unknown } | null)?.code
  return typeof code === 'string' ? code : 'ERR_INTERNAL'
}
