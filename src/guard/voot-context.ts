/**
 * The {@link VootContext} a guard leaves on an allowed request: its public shape and the
 * one class that implements it.
 *
 * @module
 */
import type { Decision } from '../decision/types.js'
import type { Requirement } from '../decision/requirements.js'
import type { MembershipResolver, ResolveOptions } from '../resolver/index.js'
import type { GroupWithMembership, Membership } from '../types.js'

/**
 * What a request carries after a guard allowed it (`req.voot` in Express,
 * `ctx.state.voot` in Koa). The token is not part of it; the lookups are bound to it.
 *
 * @example
 * ```ts
 * app.get('/me', guard.authenticate(), async (req, res) => {
 *   res.json((await req.voot!.groups()).map((g) => g.id))
 * })
 * ```
 */
export interface VootContext {
  /** The decision that let the request through. */
  readonly decision: Decision
  /** The user's active groups (`me/groups`, cached). */
  groups(): Promise<readonly GroupWithMembership[]>
  /** The user's membership of one group (`me/groups/{id}`, cached), or `null`. */
  membership(groupId: string): Promise<Membership | null>
  /** Decides a further requirement for the same user. */
  check(requirement: Requirement): Promise<Decision>
}

/**
 * One allowed request's context: the decision, and the lookups bound to the request's token.
 *
 * One object per request with its methods on the prototype, rather than an object and three
 * closures: an allowed request on a warm cache allocates this and nothing else. The token
 * and the resolver are private fields, so neither `JSON.stringify` nor `util.inspect` of a
 * context shows the token; the context lives as long as the request that holds it.
 *
 * @example
 * ```ts
 * const voot = new RequestContext(resolver, token, {}, decision)
 * await voot.groups()
 * ```
 */
export class RequestContext implements VootContext {
  readonly #resolver: MembershipResolver
  readonly #token: string
  readonly #options: ResolveOptions
  readonly decision: Decision

  constructor(resolver: MembershipResolver, token: string, options: ResolveOptions, decision: Decision) {
    this.#resolver = resolver
    this.#token = token
    this.#options = options
    this.decision = decision
  }

  groups(): Promise<readonly GroupWithMembership[]> {
    return this.#resolver.groups(this.#token, this.#options)
  }

  membership(groupId: string): Promise<Membership | null> {
    return this.#resolver.membership(this.#token, groupId, this.#options)
  }

  check(requirement: Requirement): Promise<Decision> {
    return this.#resolver.check(this.#token, requirement, this.#options)
  }
}
