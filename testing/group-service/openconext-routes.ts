/**
 * The OpenConext dialect: SURFconext's OpenConext-voot as its own code serves it. Routes
 * sit at the service ROOT (`/me/groups`, `/me/groups/{groupId}`, and for client-credentials
 * clients `/internal/groups/{userId}`, `/internal/groups/{userId}/{groupId}`,
 * `/members/{groupId}`); a group is `{id, displayName, description, sourceID, membership}`;
 * `me/groups/{groupId}` answers the whole group, 404 when the user is not in it, and 400
 * for an id that is not a `urn:collab:group:` URN. Spring Security refuses bad tokens and
 * missing scopes with an empty body, and any other path without a valid token with a 401
 * (`anyRequest().authenticated()`); the application's errors are Spring's JSON error body.
 * Its actuator's health, `/internal/health`, is the one route it answers without a token
 * (`permitAll`): what tells its root from a path under it, such as a stray `/groups`.
 *
 * Pure: no I/O, no clock of its own.
 *
 * @module
 */
import { jsonAnswer, type Answer } from '../answer.js'
import type { EmulatorData, EmulatorUser } from '../data/data.js'
import type { DialectRoutes, MatchedRoute, ServiceRequest } from './dialect-routes.js'
import { decodeSegments } from './group-routes.js'
import { bearerRefusal, SPRING_JSON_CONTENT_TYPE, springError } from './spring-errors.js'
import type { TokenRecord } from '../token-store.js'
import { isActiveMembership, ownMemberships, userMemberships, type OwnMembership } from './visibility.js'

/** OpenConext's `UrnUtils.GROUP_PATTERN`: a fully qualified group name. */
const GROUP_URN = /^urn:collab:group:([^:]+):(.+)$/
/** OpenConext's `UrnUtils.PERSON_PATTERN`. */
const PERSON_URN = /^urn:collab:person:([^:]+):(.+)$/
/** The first path segments that belong to the group service (the rest is the authorization server's). */
const SERVICE_ROOTS = new Set(['me', 'internal', 'members'])

/**
 * The schacHomeOrganization of a user when the data names none: in person URNs
 * (`urn:collab:person:example.org:alice`) and member ids.
 */
export const DEFAULT_SCHAC_HOME = 'example.org'

/**
 * A user's person URN, as `members/{groupId}` lists it and `internal/groups/{userId}` takes
 * it: from the user's `schacHomeOrganization` field, else {@link DEFAULT_SCHAC_HOME}.
 */
export function personUrn(user: EmulatorUser): string {
  const home = typeof user['schacHomeOrganization'] === 'string' ? user['schacHomeOrganization'] : DEFAULT_SCHAC_HOME
  return `urn:collab:person:${home}:${user.id}`
}

/**
 * The routes of the OpenConext dialect, at the service root.
 */
export const openConextRoutes: DialectRoutes = {
  basePath: '',
  isServicePath(pathname) {
    return SERVICE_ROOTS.has(pathname.split('/')[1] ?? '')
  },
  match(pathname) {
    const segments = decodeSegments(pathname.slice(1))
    if (segments === undefined || segments.some((segment) => segment === '')) return undefined
    const [first, second, third, fourth, ...rest] = segments
    if (rest.length > 0) return undefined
    if (first === 'me' && second === 'groups' && fourth === undefined) {
      if (third === undefined) return route('me/groups', true, (request) => myGroups(request))
      return route('me/groups/{groupid}', false, (request) => myGroup(request, third))
    }
    if (first === 'internal' && second === 'health' && third === undefined) {
      return route('internal/health', false, (request) => health(request))
    }
    if (first === 'internal' && second === 'groups' && third !== undefined) {
      if (fourth === undefined) return route('internal/groups/{userid}', true, (request) => internalGroups(request, third))
      return route('internal/groups/{userid}/{groupid}', false, (request) => internalGroup(request, third, fourth))
    }
    if (first === 'members' && second !== undefined && third === undefined && fourth === undefined) {
      return route('members/{groupid}', true, (request) => members(request, second))
    }
    return undefined
  },
  unknownRoute(request) {
    // `anyRequest().authenticated()`: without a valid token even an unknown path is a 401.
    return (
      refusal(request) ??
      springError({ status: 404, exception: 'org.springframework.web.servlet.resource.NoResourceFoundException' }, request.now)
    )
  },
}

function route(name: string, list: boolean, answer: (request: ServiceRequest) => Answer): MatchedRoute {
  return { name, list, answer }
}

/** Spring Security's verdict on the token, or `undefined` when it lets the request through. */
function refusal(request: ServiceRequest, scope?: string): Answer | undefined {
  const { caller } = request
  if (caller.kind === 'anonymous') return bearerRefusal('missing')
  if (caller.kind === 'invalid') return bearerRefusal('invalid_token')
  if (scope !== undefined && !caller.record.scopes.includes(scope)) return bearerRefusal('insufficient_scope')
  return undefined
}

function ok(json: unknown): Answer {
  return jsonAnswer(200, json, { 'content-type': SPRING_JSON_CONTENT_TYPE })
}

/** OpenConext's `Group`: exactly these five fields, `null` where the data has none. */
function servedGroup(entry: OwnMembership): Record<string, unknown> {
  const { group, membership } = entry
  return {
    id: group.id,
    displayName: group.displayName,
    description: group.description ?? null,
    sourceID: group['sourceID'] ?? null,
    membership,
  }
}

/**
 * A user's groups as OpenConext sees them: active ones only (it has no `showAll`). A
 * client-credentials token has no user: its `me/*` finds no groups, as the real service's
 * providers find none for a missing user id.
 */
function activeGroups(request: ServiceRequest, record: TokenRecord): OwnMembership[] {
  return ownMemberships(request.data, record).filter((entry) => isActiveMembership(entry.membership, entry.group, request.now))
}

function myGroups(request: ServiceRequest): Answer {
  const refused = refusal(request, 'groups')
  if (refused !== undefined || request.caller.kind !== 'token') return refused ?? bearerRefusal('missing')
  const entries = activeGroups(request, request.caller.record).filter((entry) => request.omit?.has(entry.group.id) !== true)
  return ok(entries.map(servedGroup))
}

function myGroup(request: ServiceRequest, groupId: string): Answer {
  const refused = refusal(request, 'groups')
  if (refused !== undefined || request.caller.kind !== 'token') return refused ?? bearerRefusal('missing')
  if (!GROUP_URN.test(groupId)) return illegalArgument(groupId, request.now)
  const found = activeGroups(request, request.caller.record).find((entry) => entry.group.id === groupId)
  return found === undefined ? notFound(request.now) : ok(servedGroup(found))
}

function internalGroups(request: ServiceRequest, userId: string): Answer {
  const refused = refusal(request, 'groups') ?? clientOnly(request)
  if (refused !== undefined) return refused
  // `getSchacHomeFromPersonUrn(userId)`: anything but a person URN is an IllegalArgumentException.
  if (!PERSON_URN.test(userId)) return illegalArgument(userId, request.now)
  const user = userByUrn(request.data, userId)
  return ok(user === undefined ? [] : userGroups(request, user).map(servedGroup))
}

function internalGroup(request: ServiceRequest, userId: string, groupId: string): Answer {
  const refused = refusal(request, 'groups') ?? clientOnly(request)
  if (refused !== undefined) return refused
  const user = userByUrn(request.data, userId) ?? request.data.users.find((candidate) => candidate.id === userId)
  const found = user === undefined ? undefined : userGroups(request, user).find((entry) => entry.group.id === groupId)
  return found === undefined ? notFound(request.now) : ok(servedGroup(found))
}

function members(request: ServiceRequest, groupId: string): Answer {
  const refused = refusal(request, 'members') ?? clientOnly(request)
  if (refused !== undefined) return refused
  const group = request.data.groups.find((candidate) => candidate.id === groupId)
  if (group === undefined) return ok([])
  return ok(
    request.data.users
      .filter((user) =>
        user.memberships.some((entry) => entry.groupId === group.id && isActiveMembership(entry.membership, group, request.now)),
      )
      .map((user) => ({ id: personUrn(user), name: user.name, email: user.email ?? null })),
  )
}

/** The media type of Spring Boot's actuator answers. */
const ACTUATOR_CONTENT_TYPE = 'application/vnd.spring-boot.actuator.v3+json'

/**
 * `GET /internal/health`, Spring Boot's actuator under OpenConext's `management.endpoints.web.base-path`:
 * `permitAll`, so a request without a token is answered; a token Spring cannot accept is
 * still refused before it, as on every path.
 */
function health(request: ServiceRequest): Answer {
  if (request.caller.kind === 'invalid') return bearerRefusal('invalid_token')
  return jsonAnswer(200, { status: 'UP' }, { 'content-type': ACTUATOR_CONTENT_TYPE })
}

/** `assertClientCredentialsClient`: a token with a user may not use the internal routes. */
function clientOnly(request: ServiceRequest): Answer | undefined {
  if (request.caller.kind !== 'token' || request.caller.record.userId === undefined) return undefined
  return springError(
    {
      status: 403,
      exception: 'voot.AccessDeniedException',
      message: `ClientCredentials grant type required. Unspecified ID is ${request.caller.record.userId}`,
    },
    request.now,
  )
}

function userByUrn(data: EmulatorData, urn: string): EmulatorUser | undefined {
  return data.users.find((user) => personUrn(user) === urn)
}

function userGroups(request: ServiceRequest, user: EmulatorUser): OwnMembership[] {
  return userMemberships(request.data, user).filter((entry) => isActiveMembership(entry.membership, entry.group, request.now))
}

function notFound(now: number): Answer {
  return springError({ status: 404, exception: 'voot.ResourceNotFoundException' }, now)
}

/**
 * OpenConext's error controller answers an `IllegalArgumentException` with 400, while
 * the body keeps the status Spring recorded for the unhandled exception: 500.
 */
function illegalArgument(value: string, now: number): Answer {
  return springError({ status: 400, bodyStatus: 500, exception: 'java.lang.IllegalArgumentException', message: value }, now)
}
