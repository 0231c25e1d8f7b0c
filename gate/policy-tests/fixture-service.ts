/**
 * The group service of the policy tests: the fixtures of a configuration answered in
 * process, as the real service answers (`me/groups` lists active memberships, each group with
 * its type and membership; `me/groups/{id}` gives the membership, or 404 for a non-member;
 * an unknown token is 401). It is an undici `MockAgent` with the network disabled, handed to
 * the resolver as its `dispatcher`: the tests reach no group service and no network, and the
 * resolver, its parser and the decision engine run as they do in production.
 *
 * @module
 */
import { randomBytes } from 'node:crypto'
import { MockAgent } from 'undici'
import type { FixtureMembership } from '../config/policy-config.js'

/** The fixtures as a group service. */
export interface FixtureService {
  /** The resolver's `dispatcher`. */
  readonly dispatcher: MockAgent
  /** The bearer token that stands for a fixture user (random per run; never a real token). */
  tokenOf(user: string): string
  close(): Promise<void>
}

const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8' }
const NOT_FOUND = { statusCode: 404, data: '{"message":"Requested resource was not found"}', responseOptions: { headers: JSON_HEADERS } }

function authorizationOf(headers: unknown): string | undefined {
  if (Array.isArray(headers)) {
    for (let i = 0; i + 1 < headers.length; i += 2) if (String(headers[i]).toLowerCase() === 'authorization') return String(headers[i + 1])
    return undefined
  }
  if (typeof headers === 'object' && headers !== null) {
    if (typeof (headers as Headers).get === 'function') return (headers as Headers).get('authorization') ?? undefined
    for (const [name, value] of Object.entries(headers)) if (name.toLowerCase() === 'authorization') return String(value)
  }
  return undefined
}

/** The fixtures' answer to one request of the group service whose base path is one of `bases`. */
function answer(
  users: ReadonlyMap<string, readonly FixtureMembership[]>,
  bases: readonly string[],
  request: { readonly path: string; readonly method: string; readonly headers: unknown },
): { statusCode: number; data: string; responseOptions: { headers: Record<string, string> } } {
  const { path, method, headers } = request
  const bearer = /^Bearer (\S+)$/.exec(authorizationOf(headers) ?? '')?.[1]
  const memberships = bearer === undefined ? undefined : users.get(bearer)
  if (memberships === undefined) {
    return {
      statusCode: 401,
      data: '{"message":"Token is invalid"}',
      responseOptions: { headers: { ...JSON_HEADERS, 'www-authenticate': 'Bearer realm="fixtures", error="invalid_token"' } },
    }
  }
  const mark = path.indexOf('?')
  const full = mark === -1 ? path : path.slice(0, mark)
  const base = bases.find((each) => full.startsWith(`${each}/`)) ?? ''
  const route = full.slice(base.length).replace(/^\/v1\//, '/')
  const showAll = mark !== -1 && new URLSearchParams(path.slice(mark + 1)).get('showAll') === 'true'
  if (method !== 'GET') return { statusCode: 405, data: '{"message":"Method not allowed"}', responseOptions: { headers: JSON_HEADERS } }
  if (route === '/me/groups') {
    const listed = memberships
      .filter((membership) => membership.active || showAll)
      .map((membership) => ({
        id: membership.groupId,
        displayName: membership.groupId,
        type: membership.type,
        membership: membershipOf(membership),
      }))
    return { statusCode: 200, data: JSON.stringify(listed), responseOptions: { headers: JSON_HEADERS } }
  }
  const one = /^\/me\/groups\/([^/]+)$/.exec(route)
  if (one !== null) {
    let id: string
    try {
      id = decodeURIComponent(one[1] as string)
    } catch {
      return NOT_FOUND
    }
    const membership = memberships.find((each) => each.groupId === id)
    if (membership === undefined) return NOT_FOUND
    return { statusCode: 200, data: JSON.stringify(membershipOf(membership)), responseOptions: { headers: JSON_HEADERS } }
  }
  return NOT_FOUND
}

function membershipOf(membership: FixtureMembership): Record<string, unknown> {
  return membership.active ? { basic: membership.role } : { basic: membership.role, active: false }
}

/**
 * Serves `fixtures` at each of `baseUrls` (with its path prefix, such as `/groups`): one
 * for a gate's `service`, one per service of its `services` (each user the same everywhere;
 * the gate asks each service only of the groups that are its own).
 *
 * @example
 * ```ts
 * const service = createFixtureService(['https://groups-api.dataporten.no/groups'], settings.policy.fixtures)
 * const resolver = createMembershipResolver({ baseUrl, dispatcher: service.dispatcher })
 * await resolver.check(service.tokenOf('alice'), group('fc:org:example.org', 'admin'))
 * ```
 */
export function createFixtureService(
  baseUrls: readonly string[],
  fixtures: ReadonlyMap<string, readonly FixtureMembership[]>,
): FixtureService {
  const tokens = new Map<string, string>()
  const users = new Map<string, readonly FixtureMembership[]>()
  for (const [user, memberships] of fixtures) {
    const token = `fixture.${randomBytes(12).toString('hex')}`
    tokens.set(user, token)
    users.set(token, memberships)
  }
  const agent = new MockAgent()
  agent.disableNetConnect()
  // Each origin's base paths (several services may share an origin), longest first.
  const bases = new Map<string, string[]>()
  for (const baseUrl of baseUrls) {
    const url = new URL(baseUrl)
    const list = bases.get(url.origin) ?? []
    list.push(url.pathname.replace(/\/+$/, ''))
    bases.set(
      url.origin,
      list.sort((a, b) => b.length - a.length),
    )
  }
  for (const [origin, paths] of bases) {
    agent
      .get(origin)
      .intercept({ path: () => true, method: () => true })
      .reply(({ path, method, headers }) => answer(users, paths, { path, method, headers }))
      .persist()
  }
  return {
    dispatcher: agent,
    tokenOf(user) {
      const token = tokens.get(user)
      if (token === undefined) throw new Error(`no fixture user ${user}`)
      return token
    },
    close: () => agent.close(),
  }
}
