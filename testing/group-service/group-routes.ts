/**
 * The Dataporten dialect's group endpoints (the six of the spec and `groups/{groupid}/logo`,
 * under `/groups` and `/groups/v1`): matching a request path to one of them, and computing
 * its answer as the real service would.
 *
 * Pure: no I/O, no clock of its own. Faults, latency and rate limits live elsewhere.
 *
 * @module
 */
import type { Membership } from '../../src/index.js'
import { jsonAnswer, messageAnswer, NOT_FOUND, type Answer } from '../answer.js'
import { challenge, type Caller } from '../bearer-auth.js'
import type { EmulatorData, EmulatorGroup } from '../data/data.js'
import { logoAnswer, servedGroup } from './group-logo.js'
import { isActiveMembership, meAccess, ownMemberships, type OwnMembership } from './visibility.js'

/**
 * The path prefixes the group endpoints live under: the real service serves every path
 * also with `v1/` right after its `/groups` prefix (there is no `/v1/groups`). The longer
 * prefix comes first, so that `/groups/v1/me/groups` is not read as `/groups` + `v1/...`.
 */
export const GROUP_PREFIXES: readonly string[] = ['/groups/v1', '/groups']

/** Group types whose member lists the real service does not give out (they are huge). */
const TYPES_WITHOUT_MEMBER_LIST = new Set(['fc:org'])

/**
 * One matched group endpoint, with the group id decoded from its single path segment.
 */
export type GroupRoute =
  | { readonly name: 'me/groups' }
  | { readonly name: 'me/groups/{groupid}'; readonly groupId: string }
  | { readonly name: 'groups/{groupid}'; readonly groupId: string }
  | { readonly name: 'groups/{groupid}/members'; readonly groupId: string }
  | { readonly name: 'groups/{groupid}/logo'; readonly groupId: string }
  | { readonly name: 'groups' }
  | { readonly name: 'grouptypes' }

/**
 * Routes whose answer is a JSON array.
 */
export const LIST_ROUTES: ReadonlySet<GroupRoute['name']> = new Set(['me/groups', 'groups/{groupid}/members', 'groups', 'grouptypes'])

/**
 * Whether a raw pathname belongs to the group service rather than the authorization server.
 */
export function isGroupServicePath(pathname: string): boolean {
  return GROUP_PREFIXES.some((prefix) => pathname === prefix || pathname.startsWith(`${prefix}/`))
}

/**
 * Matches a raw (still percent-encoded) pathname. Each segment is decoded on its own, so
 * `%2F` inside an id stays inside the id. Bad percent-encoding, an empty id or an unknown
 * shape give `undefined` (a 404).
 */
export function matchGroupRoute(pathname: string): GroupRoute | undefined {
  const prefix = GROUP_PREFIXES.find((candidate) => pathname.startsWith(`${candidate}/`))
  if (prefix === undefined) return undefined
  const segments = decodeSegments(pathname.slice(prefix.length + 1))
  if (segments === undefined) return undefined
  const [first, second, third, ...rest] = segments
  if (rest.length > 0) return undefined
  if (first === 'me' && second === 'groups') {
    if (third === undefined) return { name: 'me/groups' }
    return third === '' ? undefined : { name: 'me/groups/{groupid}', groupId: third }
  }
  if (first === 'groups') {
    if (second === undefined) return { name: 'groups' }
    if (second === '') return undefined
    if (third === undefined) return { name: 'groups/{groupid}', groupId: second }
    if (third === 'members') return { name: 'groups/{groupid}/members', groupId: second }
    return third === 'logo' ? { name: 'groups/{groupid}/logo', groupId: second } : undefined
  }
  if (first === 'grouptypes' && second === undefined) return { name: 'grouptypes' }
  return undefined
}

/**
 * Decodes a raw pathname segment by segment and joins the result with `/`: a readable
 * form for matching fault and counter paths. Falls back to the raw pathname.
 */
export function decodePathname(pathname: string): string {
  return decodeSegments(pathname)?.join('/') ?? pathname
}

/**
 * Everything {@link answerGroupRequest} needs to know about one request.
 */
export interface GroupRequest {
  readonly method: string
  readonly route: GroupRoute
  readonly query: URLSearchParams
  readonly caller: Caller
  readonly data: EmulatorData
  /** The emulator clock's time, in ms since the epoch. */
  readonly now: number
  /** Group ids `me/groups` leaves out (the `partial` fault). */
  readonly omit?: ReadonlySet<string>
}

/**
 * The real service's answer to one request on a matched route.
 */
export function answerGroupRequest(request: GroupRequest): Answer {
  const { method, route, query, caller, data, now } = request
  if (method !== 'GET') return messageAnswer(405, 'Method not allowed', { allow: 'GET' })
  if (caller.kind === 'invalid') {
    return messageAnswer(401, 'Token is invalid', { 'www-authenticate': challenge('invalid_token') })
  }
  const showAll = query.get('showAll') === 'true'

  switch (route.name) {
    case 'me/groups':
    case 'me/groups/{groupid}': {
      if (caller.kind === 'anonymous') {
        return messageAnswer(401, 'This resource requires a token', { 'www-authenticate': challenge() })
      }
      const access = meAccess(caller.record)
      if (access === 'personal-token-required') return messageAnswer(403, 'This resource requires a personal token')
      if (access === 'scope-required') {
        return messageAnswer(403, 'This resource requires the groups scope', { 'www-authenticate': challenge('invalid_scope') })
      }
      const own = ownMemberships(data, caller.record)
      if (route.name === 'me/groups/{groupid}') {
        const found = own.find((entry) => entry.group.id === route.groupId)
        return found === undefined ? NOT_FOUND : jsonAnswer(200, found.membership)
      }
      return jsonAnswer(
        200,
        own
          .filter((entry) => showAll || isActiveMembership(entry.membership, entry.group, now))
          .filter((entry) => request.omit?.has(entry.group.id) !== true)
          .map((entry) => ({ ...servedGroup(entry.group), membership: entry.membership })),
      )
    }
    case 'groups/{groupid}':
    case 'groups/{groupid}/members':
    case 'groups/{groupid}/logo': {
      const group = visibleGroups(data, caller).find((candidate) => candidate.id === route.groupId)
      if (group === undefined) return NOT_FOUND
      if (route.name === 'groups/{groupid}') return jsonAnswer(200, servedGroup(group))
      if (route.name === 'groups/{groupid}/logo') return logoAnswer(group) ?? NOT_FOUND
      if (group.type !== undefined && TYPES_WITHOUT_MEMBER_LIST.has(group.type)) return jsonAnswer(200, [])
      const members: { name: string; membership: Membership | string }[] = []
      for (const user of data.users) {
        const entry = user.memberships.find((candidate) => candidate.groupId === group.id)
        if (entry === undefined) continue
        if (showAll || isActiveMembership(entry.membership, group, now)) members.push({ name: user.name, membership: entry.membership })
      }
      return jsonAnswer(200, members)
    }
    case 'groups': {
      const needle = (query.get('query') ?? '').toLowerCase()
      return jsonAnswer(
        200,
        visibleGroups(data, caller)
          .filter((group) => needle === '' || matchesQuery(group, needle))
          .map(servedGroup),
      )
    }
    case 'grouptypes':
      return jsonAnswer(200, data.groupTypes)
  }
}

/** Public groups plus the caller's own (any membership, active or not), in data order. */
function visibleGroups(data: EmulatorData, caller: Caller): EmulatorGroup[] {
  const own: OwnMembership[] = caller.kind === 'token' ? ownMemberships(data, caller.record) : []
  const ownIds = new Set(own.map((entry) => entry.group.id))
  return data.groups.filter((group) => group.public === true || ownIds.has(group.id))
}

function matchesQuery(group: EmulatorGroup, needle: string): boolean {
  return [group.displayName, group.description].some((text) => {
    if (text === undefined) return false
    const values = typeof text === 'string' ? [text] : Object.values(text)
    return values.some((value) => value.toLowerCase().includes(needle))
  })
}

/**
 * Splits a raw path at `/` and percent-decodes each segment on its own (so `%2F` stays
 * inside its segment); `undefined` for bad percent-encoding.
 */
export function decodeSegments(path: string): string[] | undefined {
  try {
    return path.split('/').map((segment) => decodeURIComponent(segment))
  } catch {
    return undefined
  }
}
