/**
 * A test-only publisher on voot-guard's tracing channels, driving them exactly as the TSDoc
 * of src/tracing-channels.ts says the resolver does: `tracePromise` around a decision and
 * around each lookup (the upstream call, a real undici request, runs inside the traced
 * function), `traceSync` for a warm decision, fields "at the end" set before the end
 * events, nothing published without subscribers. It stands in for the resolver until the
 * resolver publishes; it decides `group(id)` from a `me/groups` list only.
 */
import { channel, tracingChannel } from 'node:diagnostics_channel'
import { request } from 'undici'
import { InvalidTokenError, UpstreamError } from '../../src/errors.js'
import {
  CHANNELS,
  type AuthorizeContext,
  type CircuitContext,
  type ResolveContext,
  type UpstreamContext,
} from '../../src/tracing-channels.js'

const authorizeChannel = tracingChannel<unknown, AuthorizeContext>(CHANNELS.authorize)
const resolveChannel = tracingChannel<unknown, ResolveContext>(CHANNELS.resolve)
const upstreamChannel = tracingChannel<unknown, UpstreamContext>(CHANNELS.upstream)
const circuitChannel = channel(CHANNELS.circuit)

interface Decided {
  readonly allowed: boolean
}

export interface TestPublisher {
  /** A cold decision: `me/groups` from the group service at `baseUrl`, then cached. */
  check(token: string, groupId: string): Promise<Decided>
  /** A warm decision from the cache, synchronous; `undefined` when the cache has nothing. */
  checkCached(token: string, groupId: string): Decided | undefined
  circuitChanged(state: CircuitContext['state']): void
}

export function createTestPublisher(baseUrl: string): TestPublisher {
  const cache = new Map<string, readonly string[]>()

  async function call(token: string, resolving: ResolveContext): Promise<readonly string[]> {
    const started = performance.now()
    const fetchList = async (): Promise<readonly string[]> => {
      let status: number
      let body: unknown
      try {
        const response = await request(`${baseUrl}/me/groups`, { headers: { authorization: `Bearer ${token}` } })
        status = response.statusCode
        body = status === 200 ? await response.body.json() : await response.body.dump()
      } catch (cause) {
        resolving.upstreamDurationMs = performance.now() - started
        throw new UpstreamError('ERR_UPSTREAM_NETWORK', 'The group service could not be reached', { endpoint: 'me/groups', cause })
      }
      resolving.upstreamDurationMs = performance.now() - started
      resolving.upstreamStatus = status
      if (status === 401) throw new InvalidTokenError()
      if (status !== 200) throw new UpstreamError('ERR_UPSTREAM_STATUS', `The group service answered ${status}`, { upstreamStatus: status })
      return (body as { id: string }[]).map((group) => group.id)
    }
    return upstreamChannel.hasSubscribers ? upstreamChannel.tracePromise(fetchList, { endpoint: 'me/groups' }) : fetchList()
  }

  function lookup(token: string): Promise<readonly string[]> {
    const resolving: ResolveContext = { endpoint: 'me/groups' }
    const run = async (): Promise<readonly string[]> => {
      const cached = cache.get(token)
      if (cached !== undefined) {
        resolving.tier = 'l1'
        return cached
      }
      try {
        const list = await call(token, resolving)
        resolving.tier = 'upstream'
        cache.set(token, list)
        return list
      } catch (error) {
        resolving.errorCode = (error as UpstreamError).code
        throw error
      }
    }
    return resolveChannel.hasSubscribers ? resolveChannel.tracePromise(run, resolving) : run()
  }

  const describe = (groupId: string): string => `group ${groupId}`

  return {
    check(token, groupId) {
      const deciding: AuthorizeContext = { requirement: describe(groupId) }
      const run = async (): Promise<Decided> => {
        const warm = cache.has(token)
        try {
          const list = await lookup(token)
          const allowed = list.includes(groupId)
          deciding.outcome = allowed ? 'allowed' : 'denied'
          deciding.reason = allowed ? 'member' : 'not_member'
          deciding.tier = warm ? 'l1' : 'upstream'
          return { allowed }
        } catch (error) {
          deciding.outcome = 'error'
          deciding.reason = (error as UpstreamError).code
          throw error
        }
      }
      return authorizeChannel.hasSubscribers ? authorizeChannel.tracePromise(run, deciding) : run()
    },
    checkCached(token, groupId) {
      if (!cache.has(token)) return undefined
      const decide = (): Decided => {
        const resolving: ResolveContext = { endpoint: 'me/groups' }
        const list = resolveChannel.hasSubscribers
          ? resolveChannel.traceSync(() => {
              resolving.tier = 'l1'
              return cache.get(token) ?? []
            }, resolving)
          : (cache.get(token) ?? [])
        return { allowed: list.includes(groupId) }
      }
      if (!authorizeChannel.hasSubscribers) return decide()
      const deciding: AuthorizeContext = { requirement: describe(groupId) }
      return authorizeChannel.traceSync(() => {
        const decided = decide()
        deciding.outcome = decided.allowed ? 'allowed' : 'denied'
        deciding.reason = decided.allowed ? 'member' : 'not_member'
        deciding.tier = 'l1'
        return decided
      }, deciding)
    },
    circuitChanged(state) {
      if (circuitChannel.hasSubscribers) circuitChannel.publish({ state } satisfies CircuitContext)
    },
  }
}
