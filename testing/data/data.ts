/**
 * The data set an emulator serves: groups, group types, users with their memberships, and
 * the OAuth clients its authorization server knows; plus validation with error messages
 * that name the offending field (`users[2].memberships[0].groupId: unknown group "x"`).
 *
 * @module
 */
import { assertGroupId, type GroupType, InvalidArgumentError, type Membership, type Translatable } from '../../src/index.js'
import { parseLogo } from './logo-data-url.js'

/**
 * A group as the emulator stores and serves it; further attributes are served too.
 *
 * @example
 * ```ts
 * const g: EmulatorGroup = { id: 'fc:adhoc:1234', displayName: 'Book club', type: 'voot:ad-hoc', public: true }
 * ```
 */
export interface EmulatorGroup {
  /** Opaque id; may contain colons, slashes and percent signs. */
  id: string
  displayName: Translatable
  description?: Translatable
  /** Must be the id of one of the data set's `groupTypes`. */
  type?: string
  /** Public groups are visible without a token (and are served with `public: true`). */
  public?: boolean
  /** ISO timestamp; outside `notBefore`/`notAfter` every membership of the group is inactive. */
  notBefore?: string
  notAfter?: string
  /**
   * The group's logo as an image `data:` URL (`data:image/png;base64,...` or
   * `data:image/svg+xml,...`), served at `groups/{groupid}/logo` (Dataporten dialect) and
   * never inside the group's JSON. Groups without one answer 404 there.
   */
  logo?: string
  [attribute: string]: unknown
}

/**
 * One membership of a user. `membership` is served as it is written: an object
 * (`{ basic: 'member', ... }`), or a plain role string (`'manager'`), as some VOOT servers
 * send it.
 *
 * @example
 * ```ts
 * const m: EmulatorMembership = { groupId: 'fc:org:example.org', membership: { basic: 'member' } }
 * const s: EmulatorMembership = { groupId: 'urn:collab:group:example.org:staff', membership: 'manager' }
 * ```
 */
export interface EmulatorMembership {
  groupId: string
  membership: Membership | string
}

/**
 * A user of the emulated service.
 *
 * @example
 * ```ts
 * const u: EmulatorUser = { id: 'zoe', name: 'Zoe Zeta', memberships: [] }
 * ```
 */
export interface EmulatorUser {
  /** The user id (also the OIDC `sub` the authorization server reports). */
  id: string
  /** Display name; `groups/{id}/members` lists it. */
  name: string
  email?: string
  memberships: EmulatorMembership[]
  [attribute: string]: unknown
}

/**
 * An OAuth client registered with the emulated authorization server.
 *
 * @example
 * ```ts
 * const c: EmulatorClient = { clientId: 'my-app', clientSecret: 's3cret', redirectUris: ['http://127.0.0.1:3000/cb'] }
 * ```
 */
export interface EmulatorClient {
  clientId: string
  clientSecret: string
  redirectUris: string[]
  name?: string
  /** Scopes the client may be granted. */
  scopes?: string[]
  [attribute: string]: unknown
}

/**
 * A whole data set. Accepted as `startEmulator({ data })` or as a JSON file.
 *
 * @example
 * ```ts
 * const data: EmulatorData = {
 *   groups: [{ id: 'g1', displayName: 'Group one', type: 'voot:ad-hoc' }],
 *   groupTypes: [{ id: 'voot:ad-hoc', displayName: 'Ad-hoc group' }],
 *   users: [{ id: 'u1', name: 'User One', memberships: [{ groupId: 'g1', membership: { basic: 'owner' } }] }],
 *   clients: [],
 * }
 * ```
 */
export interface EmulatorData {
  groups: EmulatorGroup[]
  groupTypes: GroupType[]
  users: EmulatorUser[]
  clients: EmulatorClient[]
}

const TOP_LEVEL_FIELDS = ['groups', 'groupTypes', 'users', 'clients'] as const
const MEMBERSHIP_ENTRY_FIELDS = new Set(['groupId', 'membership'])
const ISO_TIMESTAMP = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/

/**
 * Checks a data set and returns a deep copy of it. `groupTypes` may be left out (it is
 * derived from the groups' types) and so may `clients` (none).
 *
 * The copy is what an emulator serves, so a caller can change `emulator.data` in a test
 * without touching the value it passed in (or {@link defaultData}).
 *
 * @throws {@link voot-guard!InvalidArgumentError} naming the bad field, such as
 *   `users[2].memberships[0].groupId: unknown group "x"`.
 * @example
 * ```ts
 * const data = validateEmulatorData(JSON.parse(await readFile('groups.json', 'utf8')))
 * ```
 */
export function validateEmulatorData(input: unknown): EmulatorData {
  if (!isRecord(input)) fail('data', 'must be an object')
  for (const key of Object.keys(input)) {
    if (!(TOP_LEVEL_FIELDS as readonly string[]).includes(key)) {
      fail(key, `unknown field (expected ${TOP_LEVEL_FIELDS.join(', ')})`)
    }
  }

  const groups = arrayAt(input, 'groups', 'groups')
  const groupIds = new Map<string, number>()
  groups.forEach((group, index) => {
    const path = `groups[${index}]`
    if (!isRecord(group)) fail(path, 'must be an object')
    const id = nonEmptyString(group, 'id', path)
    try {
      assertGroupId(id)
    } catch (err) {
      fail(`${path}.id`, (err as Error).message)
    }
    const seen = groupIds.get(id)
    if (seen !== undefined) fail(`${path}.id`, `duplicate group id ${JSON.stringify(id)} (also groups[${seen}])`)
    groupIds.set(id, index)
    translatable(group, 'displayName', path, true)
    translatable(group, 'description', path, false)
    optionalString(group, 'type', path)
    if (group['public'] !== undefined && typeof group['public'] !== 'boolean') fail(`${path}.public`, 'must be a boolean')
    timestamp(group, 'notBefore', path)
    timestamp(group, 'notAfter', path)
    if (group['logo'] !== undefined && (typeof group['logo'] !== 'string' || parseLogo(group['logo']) === undefined)) {
      fail(`${path}.logo`, 'must be an image data: URL such as "data:image/png;base64,iVBORw0KGgo..."')
    }
    if ('membership' in group) fail(`${path}.membership`, 'not allowed on a group: memberships belong to users')
  })

  let groupTypes: GroupType[]
  if (input['groupTypes'] === undefined) {
    const typeIds = new Set(groups.map((group) => (group as Record<string, unknown>)['type']))
    groupTypes = [...typeIds].filter((type): type is string => typeof type === 'string').map((type) => ({ id: type, displayName: type }))
  } else {
    const typeIds = new Map<string, number>()
    groupTypes = arrayAt(input, 'groupTypes', 'groupTypes').map((groupType, index) => {
      const path = `groupTypes[${index}]`
      if (!isRecord(groupType)) fail(path, 'must be an object')
      const id = nonEmptyString(groupType, 'id', path)
      const seen = typeIds.get(id)
      if (seen !== undefined) fail(`${path}.id`, `duplicate group type id ${JSON.stringify(id)} (also groupTypes[${seen}])`)
      typeIds.set(id, index)
      translatable(groupType, 'displayName', path, true)
      return groupType as GroupType
    })
    groups.forEach((group, index) => {
      const type = (group as Record<string, unknown>)['type']
      if (typeof type === 'string' && !typeIds.has(type)) {
        fail(`groups[${index}].type`, `unknown group type ${JSON.stringify(type)} (not in groupTypes)`)
      }
    })
  }

  const users = arrayAt(input, 'users', 'users')
  const userIds = new Map<string, number>()
  users.forEach((user, index) => {
    const path = `users[${index}]`
    if (!isRecord(user)) fail(path, 'must be an object')
    const id = nonEmptyString(user, 'id', path)
    const seen = userIds.get(id)
    if (seen !== undefined) fail(`${path}.id`, `duplicate user id ${JSON.stringify(id)} (also users[${seen}])`)
    userIds.set(id, index)
    if (typeof user['name'] !== 'string') fail(`${path}.name`, 'must be a string')
    optionalString(user, 'email', path)
    const memberGroups = new Map<string, number>()
    arrayAt(user, 'memberships', `${path}.memberships`).forEach((entry, entryIndex) => {
      const entryPath = `${path}.memberships[${entryIndex}]`
      if (!isRecord(entry)) fail(entryPath, 'must be an object')
      for (const key of Object.keys(entry)) {
        if (!MEMBERSHIP_ENTRY_FIELDS.has(key)) fail(`${entryPath}.${key}`, 'unknown field (expected groupId, membership)')
      }
      const groupId = nonEmptyString(entry, 'groupId', entryPath)
      if (!groupIds.has(groupId)) fail(`${entryPath}.groupId`, `unknown group ${JSON.stringify(groupId)}`)
      const other = memberGroups.get(groupId)
      if (other !== undefined) {
        fail(`${entryPath}.groupId`, `duplicate membership of ${JSON.stringify(groupId)} (also memberships[${other}])`)
      }
      memberGroups.set(groupId, entryIndex)
      membership(entry['membership'], `${entryPath}.membership`)
    })
  })

  const clients = input['clients'] === undefined ? [] : arrayAt(input, 'clients', 'clients')
  const clientIds = new Map<string, number>()
  clients.forEach((client, index) => {
    const path = `clients[${index}]`
    if (!isRecord(client)) fail(path, 'must be an object')
    const id = nonEmptyString(client, 'clientId', path)
    const seen = clientIds.get(id)
    if (seen !== undefined) fail(`${path}.clientId`, `duplicate client id ${JSON.stringify(id)} (also clients[${seen}])`)
    clientIds.set(id, index)
    // Deliberately no value in the message: it is a secret.
    if (typeof client['clientSecret'] !== 'string') fail(`${path}.clientSecret`, 'must be a string')
    arrayAt(client, 'redirectUris', `${path}.redirectUris`).forEach((uri, uriIndex) => {
      if (typeof uri !== 'string' || !URL.canParse(uri)) fail(`${path}.redirectUris[${uriIndex}]`, 'must be an absolute URL')
    })
    optionalString(client, 'name', path)
    if (client['scopes'] !== undefined) {
      arrayAt(client, 'scopes', `${path}.scopes`).forEach((scope, scopeIndex) => {
        if (typeof scope !== 'string' || scope === '') fail(`${path}.scopes[${scopeIndex}]`, 'must be a non-empty string')
      })
    }
  })

  return structuredClone({
    groups: groups as EmulatorGroup[],
    groupTypes,
    users: users as EmulatorUser[],
    clients: clients as EmulatorClient[],
  })
}

function membership(value: unknown, path: string): void {
  if (typeof value === 'string') {
    if (value === '') fail(path, 'must be an object or a non-empty role string')
    return
  }
  if (!isRecord(value)) fail(path, 'must be an object or a role string')
  optionalString(value, 'basic', path)
  translatable(value, 'displayName', path, false)
  if (value['active'] !== undefined && typeof value['active'] !== 'boolean') fail(`${path}.active`, 'must be a boolean')
  timestamp(value, 'notBefore', path)
  timestamp(value, 'notAfter', path)
}

function fail(path: string, message: string): never {
  throw new InvalidArgumentError(`${path}: ${message}`)
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function arrayAt(container: Record<string, unknown>, key: string, path: string): unknown[] {
  const value = container[key]
  if (!Array.isArray(value)) fail(path, value === undefined ? 'missing (must be an array)' : 'must be an array')
  return value
}

function nonEmptyString(container: Record<string, unknown>, key: string, path: string): string {
  const value = container[key]
  if (typeof value !== 'string' || value === '') {
    fail(`${path}.${key}`, value === undefined ? 'missing (must be a non-empty string)' : 'must be a non-empty string')
  }
  return value
}

function optionalString(container: Record<string, unknown>, key: string, path: string): void {
  const value = container[key]
  if (value !== undefined && typeof value !== 'string') fail(`${path}.${key}`, 'must be a string')
}

function translatable(container: Record<string, unknown>, key: string, path: string, required: boolean): void {
  const value = container[key]
  if (value === undefined) {
    if (required) fail(`${path}.${key}`, 'missing (must be a string or an object of language tags to strings)')
    return
  }
  if (typeof value === 'string') return
  if (!isRecord(value) || Object.keys(value).length === 0) {
    fail(`${path}.${key}`, 'must be a string or a non-empty object of language tags to strings')
  }
  for (const [lang, text] of Object.entries(value)) {
    if (typeof text !== 'string') fail(`${path}.${key}.${lang}`, 'must be a string')
  }
}

function timestamp(container: Record<string, unknown>, key: string, path: string): void {
  const value = container[key]
  if (value === undefined) return
  if (typeof value !== 'string' || !ISO_TIMESTAMP.test(value) || !Number.isFinite(Date.parse(value))) {
    fail(`${path}.${key}`, 'must be an ISO 8601 timestamp such as "2027-06-30T00:00:00Z"')
  }
}
