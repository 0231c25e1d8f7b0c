/**
 * The lookups one cold decision makes for one token: `me/groups` and `me/groups/{id}`
 * through the resolver's cached lookups, and the context `where` predicates receive.
 *
 * @module
 */
import type { GroupsClient } from '../client/groups-client.js'
import { affiliationHint } from '../decision/affiliation-hint.js'
import { decide, type DecisionLookups } from '../decision/decide.js'
import type { GroupsIndex } from '../decision/groups-index.js'
import { InvalidArgumentError } from '../errors.js'
import { assertGroupId } from '../group-id.js'
import { group, type RequirementContext } from '../decision/requirements.js'
import type { Membership } from '../types.js'
import type { Lookup, ResolveOptions, SlowestTier } from './lookups.js'
import { tokenExpiry } from './store/token-expiry.js'

/** What {@link createDecisionLookups} binds to one token. */
export interface TokenLookup {
  readonly token: string
  readonly digest: string
  readonly options: ResolveOptions | undefined
  readonly at: number
  /** Learns the slowest tier of the decision's lookups: the traced decision, when the authorize channel has subscribers. */
  readonly slowest?: SlowestTier | undefined
}

/**
 * Builds the {@link DecisionLookups} of one token.
 */
export function createDecisionLookups(
  client: GroupsClient,
  roles: readonly string[],
  lookup: (lookup: Lookup) => Promise<unknown>,
): (forToken: TokenLookup) => DecisionLookups {
  return ({ token, digest, options, at, slowest }) => {
    // A decision's lookups read the token's expiry once between them, not once each.
    let expiry: { readonly value: number | undefined } | undefined
    const jwtExpiry = (): number | undefined => (expiry ??= { value: tokenExpiry(token) }).value
    // And the shared tier's token id once, when the first of them asks the tier.
    const sharedId = {}
    const groups = (): Promise<GroupsIndex> =>
      lookup({
        token,
        digest,
        kind: 'groups',
        groupId: undefined,
        options,
        slowest,
        jwtExpiry,
        sharedId,
        // The caller's signal is not passed on: the call is shared with other waiters. The
        // signal here is the retry's share of the deadline.
        fetch: (signal) => client.myGroups(token, { signal }),
      }) as Promise<GroupsIndex>
    const membership = (groupId: string): Promise<Membership | null> =>
      lookup({
        token,
        digest,
        kind: 'membership',
        groupId,
        options,
        slowest,
        jwtExpiry,
        sharedId,
        fetch: (signal) => client.myMembership(token, groupId, { signal }),
      }) as Promise<Membership | null>
    let context: RequirementContext | undefined
    const lookups: DecisionLookups = {
      now: at,
      roles,
      groups,
      membership,
      context: () =>
        (context ??= {
          now: new Date(at),
          groups: async () => (await groups()).list,
          membership: (groupId) => {
            assertGroupId(groupId)
            return membership(groupId)
          },
          // The same rules as a `group()` requirement: decided by the one engine.
          isMember: async (groupId, role) => (await decide(checkedGroup(groupId, role, roles), lookups)).allowed,
        }),
    }
    return lookups
  }
}

function checkedGroup(groupId: string, role: string | undefined, roles: readonly string[]) {
  const requirement = group(groupId, role)
  if (role !== undefined && !roles.includes(role)) {
    // Thrown inside the predicate: the decision is unknown, never allowed.
    throw new InvalidArgumentError(`Unknown role ${JSON.stringify(role)}${affiliationHint(role)}`)
  }
  return requirement
}
