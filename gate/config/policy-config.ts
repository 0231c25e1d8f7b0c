/**
 * The policy tests a configuration carries: `fixtures` (who is in what, for tests only) and
 * `tests` (a request, who sends it, and the answer it must get), read and checked like the
 * rest of the file. Running them is `policy-tests.ts`.
 *
 * @module
 */
import { nearestKey } from '../../src/internal.js'
import type { GateConfigPath, ProblemList } from './problem.js'

/** One membership of a fixture user: a role, and whether it is active (default `true`). */
export interface GateFixtureMembership {
  /** The membership's `basic` role, as the group service would send it. */
  readonly role: string
  /** `false`: a passive or expired membership (not listed by `me/groups`, `active: false` from `me/groups/{id}`). */
  readonly active?: boolean
  /** The group's type; default: read from the id (`fc:fs:fs:emne:...` is `fc:fs:emne`, `fc:org:x` is `fc:org`). */
  readonly type?: string
  /** With several group services: the service the group is on, for an id that `groupPrefixes` does not assign. */
  readonly service?: string
}

/**
 * Fixture users: per user, per group id, a role or a {@link GateFixtureMembership}.
 *
 * @example
 * ```ts
 * const fixtures: GateFixtures = {
 *   alice: { 'fc:org:example.org': 'admin' },
 *   bob: { 'fc:org:example.org': 'member', 'fc:fs:fs:emne:example.org:INF1000:1': { role: 'member', active: false } },
 * }
 * ```
 */
export type GateFixtures = Readonly<Record<string, Readonly<Record<string, string | GateFixtureMembership>>>>

/**
 * One policy test: `request` (`"METHOD URL"`), `as` (a fixture user or `anonymous`), `expect`
 * (`allow`: 200; `deny`: 403; `signin`: 401 or the sign-in redirect) and, optionally, the
 * `rule` that must answer and a `name` to report it by.
 *
 * @example
 * ```ts
 * const test: GatePolicyTest = { request: 'GET https://wiki.example.org/admin/users', as: 'alice', expect: 'allow', rule: 'admins' }
 * ```
 */
export interface GatePolicyTest {
  readonly name?: string
  readonly request: string
  readonly as: string
  /**
   * With several group services: the service `as` signed in with (the test's request then
   * carries a session of it). Default: a bearer token, routed by the services' `hosts`,
   * `paths` and `issuers`.
   */
  readonly service?: string
  readonly expect: 'allow' | 'deny' | 'signin'
  readonly rule?: string
}

/** A fixture user's membership, read. */
export interface FixtureMembership {
  readonly groupId: string
  readonly role: string
  readonly active: boolean
  readonly type: string
  /** The service it names (`undefined`: by `groupPrefixes`). */
  readonly service?: string
  /** Where it was written, for a problem found later (an unknown role, an invalid id). */
  readonly path: GateConfigPath
}

/** A policy test, read: its request split the way a proxy sends it. */
export interface PolicyTest {
  /** 1-based, in the order of the file. */
  readonly number: number
  /** The test's `name`, else `"<request> as <user>"`. */
  readonly title: string
  readonly method: string
  readonly scheme: 'http' | 'https'
  /** Host and port as written. */
  readonly authority: string
  /** Path and query, as written. */
  readonly target: string
  /** A fixture user, or `undefined` for `anonymous`. */
  readonly as: string | undefined
  /** With several services: the one the user signed in with (`undefined`: a bearer token, routed as the gate routes it). */
  readonly service: string | undefined
  readonly expect: GatePolicyTest['expect']
  readonly rule: string | undefined
}

/** The fixtures and tests of a configuration, read. */
export interface PolicySettings {
  readonly fixtures: ReadonlyMap<string, readonly FixtureMembership[]>
  readonly tests: readonly PolicyTest[]
}

const ANONYMOUS = 'anonymous'
const EXPECTS = ['allow', 'deny', 'signin']
const TEST_KEYS = ['name', 'request', 'as', 'service', 'expect', 'rule']
const MEMBERSHIP_KEYS = ['role', 'active', 'type', 'service']
const USER = /^[A-Za-z0-9._@-]{1,64}$/
// A request as a proxy describes it: a method, then an absolute http(s) URL taken as written.
const REQUEST = /^([A-Za-z]{1,20}) +(https?):\/\/([^/?#\s]+)(\/\S*)?$/

/** A request line as a test or `--explain` writes it: the method and the URL's parts, as sent. */
export type RequestLine = Pick<PolicyTest, 'method' | 'scheme' | 'authority' | 'target'>

/**
 * Reads `"METHOD URL"` (an absolute http(s) URL, taken as written, not resolved), or
 * `undefined` when it is not one.
 *
 * @example
 * ```ts
 * parseRequestLine('get https://wiki.example.org/admin?x=1') // { method: 'GET', scheme: 'https', authority: 'wiki.example.org', target: '/admin?x=1' }
 * ```
 */
export function parseRequestLine(text: string): RequestLine | undefined {
  const parsed = REQUEST.exec(text.trim())
  if (parsed === null) return undefined
  const [, method, scheme, authority, target] = parsed as unknown as [string, string, string, string, string | undefined]
  return { method: method.toUpperCase(), scheme: scheme.toLowerCase() as 'http' | 'https', authority, target: target ?? '/' }
}

/**
 * The group type of a group id when a fixture does not give one, as the Feide groups API
 * names them (`fc:fs:fs:emne:...` is `fc:fs:emne`, `fc:org:example.org:unit:X` is
 * `fc:orgunit`, `fc:adhoc:...` is `voot:ad-hoc`); other ids: their first two parts.
 */
export function fixtureGroupType(groupId: string): string {
  const parts = groupId.split(':')
  if (parts[0] === 'fc' && parts[1] === 'fs' && parts[2] === 'fs' && parts[3] !== undefined) return `fc:fs:${parts[3]}`
  if (parts[0] === 'fc' && parts[1] === 'org') return parts[3] === 'unit' ? 'fc:orgunit' : 'fc:org'
  if (parts[0] === 'fc' && parts[1] === 'adhoc') return 'voot:ad-hoc'
  return parts.slice(0, 2).join(':')
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function readFixtures(problems: ProblemList, value: unknown): Map<string, FixtureMembership[]> {
  const fixtures = new Map<string, FixtureMembership[]>()
  if (value === undefined) return fixtures
  if (!isObject(value)) {
    problems.add(['fixtures'], 'must be a mapping of users to their memberships, such as alice: { "fc:org:example.org": admin }')
    return fixtures
  }
  for (const [user, groups] of Object.entries(value)) {
    const path = ['fixtures', user]
    if (user === ANONYMOUS) problems.add(path, `"${ANONYMOUS}" is the user without credentials: name fixture users otherwise`)
    else if (!USER.test(user)) problems.add(path, 'a user name is 1 to 64 letters, digits, ".", "_", "@" or "-"')
    const memberships: FixtureMembership[] = []
    if (groups !== null && !isObject(groups)) {
      problems.add(path, 'must be a mapping of group ids to roles (or {} for a user in no group)')
      continue
    }
    for (const [groupId, given] of Object.entries(groups ?? {})) {
      const at = [...path, groupId]
      if (typeof given === 'string' && given !== '') {
        memberships.push({ groupId, role: given, active: true, type: fixtureGroupType(groupId), path: at })
        continue
      }
      if (!isObject(given)) {
        problems.add(at, 'must be a role (such as member) or { role, active, type, service }')
        continue
      }
      for (const key of Object.keys(given)) {
        if (!MEMBERSHIP_KEYS.includes(key)) problems.add([...at, key], 'unknown key', nearestKey(key, MEMBERSHIP_KEYS))
      }
      const { role, active, type, service } = given
      if (typeof role !== 'string' || role === '') problems.add([...at, 'role'], 'is required: a role such as member')
      if (active !== undefined && typeof active !== 'boolean') problems.add([...at, 'active'], 'must be true or false')
      if (type !== undefined && (typeof type !== 'string' || type === ''))
        problems.add([...at, 'type'], 'must be a group type such as fc:fs:emne')
      if (service !== undefined && (typeof service !== 'string' || service === ''))
        problems.add([...at, 'service'], 'must be the name of one of the services')
      memberships.push({
        groupId,
        role: typeof role === 'string' ? role : '',
        active: active !== false,
        type: typeof type === 'string' && type !== '' ? type : fixtureGroupType(groupId),
        ...(typeof service === 'string' && service !== '' ? { service } : {}),
        path: at,
      })
    }
    fixtures.set(user, memberships)
  }
  return fixtures
}

function readTest(
  problems: ProblemList,
  path: GateConfigPath,
  value: unknown,
  known: { number: number; users: readonly string[]; rules: readonly string[]; services: readonly string[] | undefined },
): PolicyTest | undefined {
  const { number } = known
  if (!isObject(value)) {
    problems.add(path, 'must be a mapping: { request: "GET https://host/path", as: user, expect: allow | deny | signin }')
    return undefined
  }
  const before = problems.items.length
  for (const key of Object.keys(value)) {
    if (!TEST_KEYS.includes(key)) problems.add([...path, key], 'unknown key', nearestKey(key, TEST_KEYS))
  }
  const { name, request, as, service, expect, rule } = value
  if (name !== undefined && (typeof name !== 'string' || name === '')) problems.add([...path, 'name'], 'must be a non-empty string')
  const parsed = typeof request === 'string' ? parseRequestLine(request) : undefined
  if (parsed === undefined) problems.add([...path, 'request'], 'must be "METHOD URL", such as "GET https://wiki.example.org/admin"')
  const users = [ANONYMOUS, ...known.users]
  if (typeof as !== 'string' || !users.includes(as)) {
    const near = typeof as === 'string' ? nearestKey(as, users) : undefined
    problems.add([...path, 'as'], `must be "${ANONYMOUS}" or a user of "fixtures"`, near)
  }
  if (service !== undefined) {
    if (known.services === undefined) problems.add([...path, 'service'], 'names a group service, but the gate has one "service"')
    else if (typeof service !== 'string' || !known.services.includes(service)) {
      const near = typeof service === 'string' ? nearestKey(service, known.services) : undefined
      problems.add([...path, 'service'], `must name one of the services (${known.services.join(', ')})`, near)
    } else if (as === ANONYMOUS) problems.add([...path, 'service'], `"${ANONYMOUS}" has no credentials, so no service`)
  }
  if (typeof expect !== 'string' || !EXPECTS.includes(expect)) {
    const near = typeof expect === 'string' ? nearestKey(expect, EXPECTS) : undefined
    problems.add([...path, 'expect'], 'must be allow, deny or signin', near)
  }
  if (rule !== undefined && (typeof rule !== 'string' || !known.rules.includes(rule))) {
    const near = typeof rule === 'string' ? nearestKey(rule, known.rules) : undefined
    problems.add([...path, 'rule'], "must be a rule's id", near)
  }
  if (problems.items.length > before || parsed === undefined) return undefined
  return {
    number,
    title:
      typeof name === 'string' ? name : `${String(request).trim()} as ${String(as)}${typeof service === 'string' ? ` (${service})` : ''}`,
    ...parsed,
    as: as === ANONYMOUS ? undefined : (as as string),
    service: service as string | undefined,
    expect: expect as PolicyTest['expect'],
    rule: rule as string | undefined,
  }
}

/**
 * Reads `fixtures` and `tests`; `known.rules` are the ids a test's `rule` may name,
 * `known.services` the services its `service` may (`undefined`: a gate of one service).
 */
export function readPolicySettings(
  problems: ProblemList,
  fixturesIn: unknown,
  testsIn: unknown,
  known: { readonly rules: readonly string[]; readonly services: readonly string[] | undefined },
): PolicySettings {
  const fixtures = readFixtures(problems, fixturesIn)
  const tests: PolicyTest[] = []
  if (testsIn === undefined) return { fixtures, tests }
  if (!Array.isArray(testsIn) || testsIn.length === 0) {
    problems.add(['tests'], 'must be a non-empty list of tests (or left out)')
    return { fixtures, tests }
  }
  const users = [...fixtures.keys()]
  testsIn.forEach((value: unknown, index: number) => {
    const test = readTest(problems, ['tests', index], value, { number: index + 1, users, ...known })
    if (test !== undefined) tests.push(test)
  })
  return { fixtures, tests }
}
