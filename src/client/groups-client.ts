/**
 * The groups client: the six endpoints of a VOOT group service, without caching. It is
 * the only module that calls the group service over the network.
 *
 * Every call has one deadline for the whole exchange (connect, headers and body), never
 * follows a redirect, reads at most `maxResponseBytes`, and always consumes or destroys
 * the response body so the connection pool never stalls. Failures become the error
 * classes of `../errors.js`; none of them carries the bearer token.
 *
 * @module
 */
import { createTransport } from '#transport'
import { InvalidArgumentError, TokenMalformedError } from '../errors.js'
import { encodeGroupId } from '../group-id.js'
import { resolveGroupsClientOptions } from './options.js'
import type { GroupsClientOptions } from './options.js'
import { parseGroup, parseGroups, parseGroupTypes, parseMembers, parseMyGroups, parseMyMembership } from './parse.js'
import { isWellFormedToken, MAX_TOKEN_LENGTH } from '../token.js'
import { isActuatorHealth, OPENCONEXT_HEALTH_PATH, pathAboveGroups, registerServiceRootProbe } from './service-root.js'
import { NOT_FOUND, parsed, send, type Call } from './upstream-call.js'

export type { GroupsEndpoint } from './upstream-call.js'
import type { Group, GroupType, GroupWithMembership, MemberEntry, Membership } from '../types.js'

export type { GroupsClientOptions } from './options.js'

/**
 * Options of every client call.
 *
 * @example
 * ```ts
 * await client.myGroups(token, { signal: req.signal })
 * ```
 */
export interface CallOptions {
  /** Gives up the call when it fires: the call rejects with `AbortedError`. */
  signal?: AbortSignal | undefined
}

/**
 * A client of the six group endpoints. Created by {@link createGroupsClient}.
 *
 * Tokens must be RFC 6750 `b64token` strings of at most `MAX_TOKEN_LENGTH` (4096) characters, else the call
 * rejects with `TokenMalformedError` before any request. Group ids are checked by
 * `assertGroupId` and sent as exactly one percent-encoded path segment.
 *
 * Rejections: `InvalidTokenError` (401), `InsufficientScopeError` (403), `AbortedError`
 * (the caller's signal), `InvalidGroupIdError`, `InvalidArgumentError`, and
 * `UpstreamError` for every failure of the service (network, timeout, redirect, 429,
 * other statuses, bad or oversized body), with `endpoint` set to the template.
 *
 * @example
 * ```ts
 * const client = createGroupsClient({ baseUrl: 'https://groups-api.dataporten.no/groups' })
 * const mine = await client.myGroups(token)
 * const m = await client.myMembership(token, 'fc:org:example.org') // null: not a member
 * await client.close()
 * ```
 */
export interface GroupsClient {
  /** The normalised base URL (no trailing slash). */
  readonly baseUrl: string
  /**
   * `GET me/groups`: the user's groups, each with its membership (`{}` when the service
   * sent none). The list may be partial (a failing backend is left out), so a missing
   * group proves nothing.
   */
  myGroups(token: string, options?: CallOptions & { showAll?: boolean | undefined }): Promise<GroupWithMembership[]>
  /** `GET me/groups/{groupid}`: the user's membership, or `null` on 404 (not a member). */
  myMembership(token: string, groupId: string, options?: CallOptions): Promise<Membership | null>
  /** `GET groups/{groupid}`: one group, or `null` on 404. */
  group(groupId: string, options?: CallOptions & { token?: string | undefined }): Promise<Group | null>
  /** `GET groups/{groupid}/members`: the members (names and memberships, no user ids). */
  members(groupId: string, options?: CallOptions & { token?: string | undefined; showAll?: boolean | undefined }): Promise<MemberEntry[]>
  /** `GET groups[?query=]`: groups the user may see, optionally matching `query`. */
  groups(options?: CallOptions & { token?: string | undefined; query?: string | undefined }): Promise<Group[]>
  /** `GET grouptypes`: the group types. */
  groupTypes(options?: CallOptions & { token?: string | undefined }): Promise<GroupType[]>
  /** Closes the connections the client opened itself; a caller-supplied dispatcher is left open. */
  close(): Promise<void>
}

// Error bodies are read only so the connection can be reused; a longer one costs the
// connection instead of the time.

/**
 * Creates a {@link GroupsClient}. Options are validated here: an invalid one throws
 * `InvalidOptionError` naming it.
 *
 * @example
 * ```ts
 * import { MockAgent } from 'undici'
 * const mock = new MockAgent()
 * mock.disableNetConnect()
 * const client = createGroupsClient({ baseUrl: 'https://groups.example.org/groups', dispatcher: mock, timeout: 2000 })
 * ```
 */
export function createGroupsClient(options: GroupsClientOptions): GroupsClient {
  const settings = resolveGroupsClientOptions(options)
  // Node's undici or the runtime's fetch, as the package's `imports` conditions chose.
  const transport = createTransport(settings)
  const base = settings.basePath

  const call = (spec: Call): Promise<unknown> => send(settings, transport, spec)

  const client: GroupsClient = {
    baseUrl: settings.baseUrl,

    async myGroups(token, callOptions = {}) {
      assertToken(token)
      const body = await call({
        endpoint: 'me/groups',
        path: `${base}/me/groups${showAllQuery(callOptions.showAll)}`,
        token,
        signal: callOptions.signal,
        notFoundIsNull: false,
      })
      return parsed('me/groups', () => parseMyGroups(body))
    },

    async myMembership(token, groupId, callOptions = {}) {
      assertToken(token)
      const body = await call({
        endpoint: 'me/groups/{groupid}',
        path: `${base}/me/groups/${encodeGroupId(groupId)}`,
        token,
        signal: callOptions.signal,
        notFoundIsNull: true,
      })
      return body === NOT_FOUND ? null : parsed('me/groups/{groupid}', () => parseMyMembership(body))
    },

    async group(groupId, callOptions = {}) {
      const token = optionalToken(callOptions.token)
      const body = await call({
        endpoint: 'groups/{groupid}',
        path: `${base}/groups/${encodeGroupId(groupId)}`,
        token,
        signal: callOptions.signal,
        notFoundIsNull: true,
      })
      return body === NOT_FOUND ? null : parsed('groups/{groupid}', () => parseGroup(body))
    },

    async members(groupId, callOptions = {}) {
      const token = optionalToken(callOptions.token)
      const body = await call({
        endpoint: 'groups/{groupid}/members',
        path: `${base}/groups/${encodeGroupId(groupId)}/members${showAllQuery(callOptions.showAll)}`,
        token,
        signal: callOptions.signal,
        notFoundIsNull: false,
      })
      return parsed('groups/{groupid}/members', () => parseMembers(body))
    },

    async groups(callOptions = {}) {
      const token = optionalToken(callOptions.token)
      const body = await call({
        endpoint: 'groups',
        path: `${base}/groups${searchQuery(callOptions.query)}`,
        token,
        signal: callOptions.signal,
        notFoundIsNull: false,
      })
      return parsed('groups', () => parseGroups(body))
    },

    async groupTypes(callOptions = {}) {
      const token = optionalToken(callOptions.token)
      const body = await call({
        endpoint: 'grouptypes',
        path: `${base}/grouptypes`,
        token,
        signal: callOptions.signal,
        notFoundIsNull: false,
      })
      return parsed('grouptypes', () => parseGroupTypes(body))
    },

    close() {
      return transport.close()
    },
  }
  const root = pathAboveGroups(base)
  if (root !== undefined) {
    registerServiceRootProbe(client, async (signal) => {
      const body = await call({
        endpoint: 'internal/health',
        path: `${root}${OPENCONEXT_HEALTH_PATH}`,
        token: undefined,
        signal,
        notFoundIsNull: false,
      })
      return isActuatorHealth(body) ? settings.origin + root : undefined
    })
  }
  return client
}

function assertToken(token: unknown): asserts token is string {
  // A fixed message: the token itself is never echoed.
  if (!isWellFormedToken(token)) {
    throw new TokenMalformedError(`The bearer token must be 1 to ${MAX_TOKEN_LENGTH} characters of RFC 6750 b64token syntax`)
  }
}

function optionalToken(token: unknown): string | undefined {
  if (token === undefined) return undefined
  assertToken(token)
  return token
}

function showAllQuery(showAll: unknown): string {
  return showAll === true ? '?showAll=true' : ''
}

function searchQuery(query: unknown): string {
  if (query === undefined || query === '') return ''
  if (typeof query !== 'string') throw new InvalidArgumentError('groups({ query }): query must be a string')
  try {
    return `?query=${encodeURIComponent(query)}`
  } catch {
    // encodeURIComponent throws on a lone surrogate.
    throw new InvalidArgumentError('groups({ query }): query must be well-formed Unicode')
  }
}
