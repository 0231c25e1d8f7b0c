/**
 * One shared cache tier (L2) under several group services: each service sees the tier
 * through a view whose token ids are its own, so that two services never read each other's
 * answers, even for the same token string and group id.
 *
 * A tier names every entry of a token (its answers, its `invalid` marker, its locks, its
 * generation, its membership keys) by the token's id, a keyed hash (`tokenId`), and binds
 * each value to its entry's name. The view hashes the service's name with the token, so
 * each service's token ids, and with them all of its keys and values, are apart by
 * construction, in any tier that keeps {@link SharedCache}'s contract and whatever the
 * service's answers are. An invalidation names one service's token id: the other services'
 * resolvers find no token of theirs under it (one map lookup).
 *
 * @module
 */
import type { SharedCache } from '../shared-cache.js'

/**
 * The view of `tier` that the resolver of `service` uses. A service's name is a letter then
 * letters, digits, `-` or `_` (`SERVICE_NAME`), and a bearer token has no NUL character
 * (RFC 6750's characters: a guard or `check()` refuses any other before a lookup), so
 * `service` + NUL + token is a different input of the keyed hash for each service, and no
 * token of a resolver without a service that shares the tier.
 */
export function serviceTier(tier: SharedCache, service: string): SharedCache {
  const scope = `${service}\0`
  return {
    // Only the cold path computes it (a warm decision reads no tier): the concatenation costs nothing per warm request.
    tokenId: (token) => tier.tokenId(scope + token),
    get: (key) => tier.get(key),
    set: (key, value, ttlMs) => tier.set(key, value, ttlMs),
    acquire: (key) => tier.acquire(key),
    waitFor: (key, signal) => tier.waitFor(key, signal),
    invalidate: (tokenId) => tier.invalidate(tokenId),
    subscribe: (listener) => tier.subscribe(listener),
    health: () => tier.health(),
    stats: () => tier.stats(),
    // The tier is every service's: `ServiceResolvers.close()` closes it, once, after all of them.
    close: () => Promise.resolve(),
  }
}
