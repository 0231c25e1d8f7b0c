/**
 * The provider's public signing keys (JWKS), fetched through the client's own HTTP layer
 * (so the dispatcher, deadline and size limit apply) and cached.
 *
 * A key rotation is picked up in two ways: the set is fetched again after `maxAge`, and
 * at once when a token names a key the cached set does not hold, unless such an
 * unknown-key refetch already happened less than `cooldown` ago (so a stream of tokens
 * with made-up key ids cannot turn into a stream of requests to the provider, while a
 * rotation right after the first fetch is still picked up).
 *
 * @module
 */
import { createLocalJWKSet, errors, type JSONWebKeySet, type JWSHeaderParameters, type FlattenedJWSInput } from 'jose'
import { OAuthValidationError } from './errors.js'
import { jsonObject, unexpectedStatus, type ProviderFetch } from './fetch.js'

/** A key resolver as `jose.jwtVerify` takes it. */
export type KeyResolver = ReturnType<typeof createLocalJWKSet>

/** Options of {@link createJwksCache}. */
export interface JwksCacheOptions {
  readonly fetch: ProviderFetch
  /** The JWKS address (resolved lazily, since it usually comes from discovery). */
  readonly uri: () => Promise<string>
  readonly now: () => number
  /** Refetch a set older than this, in ms. */
  readonly maxAge: number
  /** Never refetch for an unknown key id sooner than this after the last such refetch, in ms. */
  readonly cooldown: number
}

/** A cached JWKS with on-demand refresh. */
export interface JwksCache {
  /** Resolves the verification key for a JWS, refetching once for an unknown key id. */
  readonly resolve: (header: JWSHeaderParameters, token: FlattenedJWSInput) => ReturnType<KeyResolver>
}

interface Snapshot {
  readonly keys: KeyResolver
  readonly fetchedAt: number
}

/**
 * Creates a JWKS cache.
 *
 * @example
 * ```ts
 * const jwks = createJwksCache({ fetch, uri: async () => jwksUri, now: Date.now, maxAge: 600_000, cooldown: 5_000 })
 * await jwtVerify(idToken, jwks.resolve, { algorithms: ['RS256'] })
 * ```
 */
export function createJwksCache(options: JwksCacheOptions): JwksCache {
  let snapshot: Snapshot | undefined
  let inflight: Promise<Snapshot> | undefined
  let lastUnknownKeyFetch = Number.NEGATIVE_INFINITY

  // Concurrent verifications share one fetch; a failed fetch is not remembered.
  const fetchKeys = (): Promise<Snapshot> => {
    inflight ??= load().finally(() => {
      inflight = undefined
    })
    return inflight
  }

  const load = async (): Promise<Snapshot> => {
    const res = await options.fetch(await options.uri(), { headers: { accept: 'application/json' } })
    if (res.status !== 200) throw unexpectedStatus('jwks', res.status)
    const doc = await jsonObject(res)
    if (doc === undefined || !Array.isArray(doc['keys'])) {
      throw new OAuthValidationError('metadata', 'The JWKS is not a JSON object with a keys array', { status: 502 })
    }
    let keys: KeyResolver
    try {
      keys = createLocalJWKSet(doc as unknown as JSONWebKeySet)
    } catch {
      throw new OAuthValidationError('metadata', 'The JWKS is malformed', { status: 502 })
    }
    snapshot = { keys, fetchedAt: options.now() }
    return snapshot
  }

  const current = async (): Promise<Snapshot> => {
    if (snapshot === undefined || options.now() - snapshot.fetchedAt >= options.maxAge) return fetchKeys()
    return snapshot
  }

  return {
    resolve: async (header, token) => {
      const first = await current()
      try {
        return await first.keys(header, token)
      } catch (err) {
        if (!(err instanceof errors.JWKSNoMatchingKey)) throw err
        // Another call may have refreshed the set meanwhile; then that set decides.
        if (snapshot !== undefined && snapshot !== first) return snapshot.keys(header, token)
        const now = options.now()
        if (now - lastUnknownKeyFetch < options.cooldown) throw err
        lastUnknownKeyFetch = now
        return (await fetchKeys()).keys(header, token)
      }
    },
  }
}
