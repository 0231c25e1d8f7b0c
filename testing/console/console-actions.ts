/**
 * What the emulator's console can change, and what it shows: memberships (add, set, remove),
 * faults for everyone or one user (slow, 500, 429, down) and the rate limit, each checked
 * here, once, for the page, its JSON endpoints and `voot-guard emulator members|fault`.
 *
 * Changes go to the emulator's live data (`emulator.data`) and fault registry: the next
 * request to the group endpoints sees them.
 *
 * @module
 */
import { InvalidArgumentError, type Membership } from '../../src/index.js'
import type { EmulatorData, EmulatorUser } from '../data/data.js'
import type { Fault, FaultMatch, FaultRegistry } from '../group-service/faults.js'
import type { RecordedRequest } from '../request-log.js'

/** The console's fault switches, as a person names them. */
export const CONSOLE_FAULTS = ['slow', '500', '429', 'down'] as const

/** One of {@link CONSOLE_FAULTS}. */
export type ConsoleFault = (typeof CONSOLE_FAULTS)[number]

/** How long `slow` makes each answer wait, unless given. */
export const SLOW_MS = 2000

/** What a membership change names: `add` and `set` give the role and dates, `remove` none. */
export interface MembershipChange {
  readonly action: 'add' | 'set' | 'remove'
  readonly user: string
  readonly group: string
  /** The role (`basic`); default `member` for `add`. */
  readonly role?: string
  /** `false` marks the membership inactive. */
  readonly active?: boolean
  /** ISO timestamps; an empty string removes the date. */
  readonly notBefore?: string
  readonly notAfter?: string
}

/** A fault switch: `set` one for everyone or one user, `clear` one (by id) or all. */
export type FaultChange =
  | { readonly action: 'set'; readonly fault: ConsoleFault; readonly user?: string; readonly ms?: number }
  | { readonly action: 'clear'; readonly id?: number }

/** The rate limit: per client address, `limit` requests per `windowMs`; `null` for none. */
export type RateLimitSetting = { readonly limit: number; readonly windowMs: number } | null

/** A fault as the console lists it. */
export interface ConsoleFaultEntry {
  readonly id: number
  /** One of {@link CONSOLE_FAULTS}, or the kind of a fault added another way (`faults.add`). */
  readonly fault: string
  readonly user?: string
}

/** Everything the console shows (the JSON of `GET /_emulator/api/state`). */
export interface ConsoleState {
  readonly users: readonly {
    readonly id: string
    readonly name: string
    readonly token: string
    readonly memberships: readonly {
      readonly group: string
      readonly role: string
      readonly active: boolean
      readonly notBefore?: string
      readonly notAfter?: string
    }[]
  }[]
  readonly groups: readonly { readonly id: string; readonly name: string; readonly type?: string }[]
  readonly roles: readonly string[]
  readonly faults: readonly ConsoleFaultEntry[]
  readonly rateLimit: RateLimitSetting
  /** The newest calls first, at most {@link RECENT_CALLS}. */
  readonly calls: readonly {
    readonly method: string
    readonly path: string
    readonly user?: string
    readonly status: number
    readonly at: string
  }[]
}

/** Calls the console lists. */
export const RECENT_CALLS = 25

/** What the console acts on: the emulator's own pieces. */
export interface ConsoleTarget {
  /** The service the console's page names (`Feide`, `SURFconext (surf)`). */
  readonly service: string
  readonly data: EmulatorData
  readonly faults: FaultRegistry
  readonly roles: readonly string[]
  /** The console's token of a user (one per user, issued when first asked for). */
  tokenOf(user: string): string
  readonly requests: () => readonly RecordedRequest[]
  rateLimit: RateLimitSetting
  /** Ends the user's sessions at the authorization server (its Logout Tokens sent); resolves what was done. */
  endSessions(user: string): Promise<{ readonly sessions: number; readonly notified: readonly { clientId: string; status: number }[] }>
}

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:\d{2})$/

function userOf(target: ConsoleTarget, id: string): EmulatorUser {
  const user = target.data.users.find((each) => each.id === id)
  if (user === undefined)
    throw new InvalidArgumentError(`user: no user ${JSON.stringify(id)} (users: ${target.data.users.map((each) => each.id).join(', ')})`)
  return user
}

function membershipOf(entry: EmulatorUser['memberships'][number]): Membership {
  return typeof entry.membership === 'string' ? { basic: entry.membership } : entry.membership
}

function dateField(name: 'notBefore' | 'notAfter', value: unknown): string | undefined {
  if (value === undefined || value === '') return undefined
  if (typeof value !== 'string' || !ISO.test(value) || Number.isNaN(Date.parse(value))) {
    throw new InvalidArgumentError(`${name}: must be an ISO timestamp such as 2026-12-01T00:00:00Z`)
  }
  return value
}

/** Applies a membership change to the live data; throws `InvalidArgumentError` naming the field. */
export function changeMembership(target: ConsoleTarget, change: MembershipChange): void {
  const user = userOf(target, change.user)
  if (!target.data.groups.some((group) => group.id === change.group)) {
    throw new InvalidArgumentError(`group: no group ${JSON.stringify(change.group)}`)
  }
  const at = user.memberships.findIndex((entry) => entry.groupId === change.group)
  if (change.action === 'remove') {
    if (at < 0) throw new InvalidArgumentError(`${change.user} is not a member of ${change.group}`)
    user.memberships.splice(at, 1)
    return
  }
  if (change.action === 'add' && at >= 0)
    throw new InvalidArgumentError(`${change.user} is already a member of ${change.group} (set changes it)`)
  if (change.action === 'set' && at < 0) throw new InvalidArgumentError(`${change.user} is not a member of ${change.group} (add makes one)`)
  const current = user.memberships[at]
  const before = current === undefined ? undefined : membershipOf(current)
  const role = change.role ?? before?.basic ?? 'member'
  if (!target.roles.includes(role)) throw new InvalidArgumentError(`role: must be one of ${target.roles.join(', ')}`)
  if (change.active !== undefined && typeof change.active !== 'boolean') throw new InvalidArgumentError('active: must be true or false')
  const active = change.active ?? before?.active ?? true
  const notBefore = 'notBefore' in change ? dateField('notBefore', change.notBefore) : before?.notBefore
  const notAfter = 'notAfter' in change ? dateField('notAfter', change.notAfter) : before?.notAfter
  // What the membership had besides these (a display name, an affiliation) stays.
  const { active: _active, notBefore: _from, notAfter: _until, ...kept } = before ?? {}
  const membership: Membership = {
    ...kept,
    basic: role,
    ...(active ? {} : { active: false }),
    ...(notBefore === undefined ? {} : { notBefore }),
    ...(notAfter === undefined ? {} : { notAfter }),
  }
  const entry = { groupId: change.group, membership }
  if (at < 0) user.memberships.push(entry)
  else user.memberships[at] = entry
}

/** The fault a switch stands for. */
export function faultOf(fault: ConsoleFault, ms: number | undefined): Fault {
  switch (fault) {
    case 'slow':
      return { kind: 'latency', ms: ms ?? SLOW_MS }
    case '500':
      return { kind: 'status', status: 500 }
    case '429':
      return { kind: 'status', status: 429, body: '', headers: { 'retry-after': '5' } }
    case 'down':
      return { kind: 'reset' }
  }
}

/** Which switch a registered fault is, for the list. */
function switchOf(fault: Fault): string {
  if (fault.kind === 'latency') return 'slow'
  if (fault.kind === 'reset') return 'down'
  if (fault.kind === 'status' && (fault.status === 500 || fault.status === 429)) return String(fault.status)
  return fault.kind
}

/** Switches a fault on or off; throws `InvalidArgumentError` naming the field. */
export function changeFault(target: ConsoleTarget, change: FaultChange): number | undefined {
  if (change.action === 'clear') {
    if (change.id === undefined) target.faults.clear()
    else target.faults.remove(change.id)
    return undefined
  }
  if (!(CONSOLE_FAULTS as readonly string[]).includes(change.fault)) {
    throw new InvalidArgumentError(`fault: must be one of ${CONSOLE_FAULTS.join(', ')}`)
  }
  if (change.ms !== undefined && (!Number.isInteger(change.ms) || change.ms < 0 || change.ms > 600_000)) {
    throw new InvalidArgumentError('ms: must be a whole number of milliseconds from 0 to 600000')
  }
  const match: FaultMatch = change.user === undefined || change.user === '' ? {} : { user: userOf(target, change.user).id }
  return target.faults.add(faultOf(change.fault, change.ms), match)
}

/** Sets or removes the rate limit; throws `InvalidArgumentError` naming the field. */
export function changeRateLimit(target: ConsoleTarget, setting: RateLimitSetting): void {
  if (setting !== null) {
    if (!Number.isInteger(setting.limit) || setting.limit < 1) throw new InvalidArgumentError('limit: must be a whole number of at least 1')
    if (!Number.isInteger(setting.windowMs) || setting.windowMs < 1)
      throw new InvalidArgumentError('windowMs: must be a whole number of ms of at least 1')
  }
  target.rateLimit = setting === null ? null : { limit: setting.limit, windowMs: setting.windowMs }
}

/** Everything the console shows. */
export function consoleState(target: ConsoleTarget): ConsoleState {
  const requests = target.requests()
  return {
    users: target.data.users.map((user) => ({
      id: user.id,
      name: user.name,
      token: target.tokenOf(user.id),
      memberships: user.memberships.map((entry) => {
        const membership = membershipOf(entry)
        return {
          group: entry.groupId,
          role: typeof membership.basic === 'string' ? membership.basic : '',
          active: membership.active !== false,
          ...(membership.notBefore === undefined ? {} : { notBefore: membership.notBefore }),
          ...(membership.notAfter === undefined ? {} : { notAfter: membership.notAfter }),
        }
      }),
    })),
    groups: target.data.groups.map((group) => ({
      id: group.id,
      name: typeof group.displayName === 'string' ? group.displayName : (Object.values(group.displayName)[0] ?? group.id),
      ...(group.type === undefined ? {} : { type: group.type }),
    })),
    roles: target.roles,
    faults: target.faults
      .list()
      .map(({ id, fault, match }) => ({ id, fault: switchOf(fault), ...(match.user === undefined ? {} : { user: match.user }) })),
    rateLimit: target.rateLimit,
    calls: requests
      .slice(-RECENT_CALLS)
      .reverse()
      .map((request) => ({
        method: request.method,
        path: request.path,
        ...(request.user === undefined ? {} : { user: request.user }),
        status: request.status,
        at: new Date(request.at).toISOString(),
      })),
  }
}

/**
 * Ends a user's sessions at the authorization server: each client registered with a
 * `backchannelLogoutUri` gets a Logout Token. Throws `InvalidArgumentError` for an unknown user.
 *
 * @example
 * ```ts
 * const text = await endUserSessions(target, 'alice') // 'Ended 1 session of alice; told voot-gate (200).'
 * ```
 */
export async function endUserSessions(target: ConsoleTarget, user: string): Promise<string> {
  userOf(target, user)
  const { sessions, notified } = await target.endSessions(user)
  const told = notified.map((each) => `${each.clientId} (${each.status === 0 ? 'no answer' : each.status})`)
  return `Ended ${sessions} session${sessions === 1 ? '' : 's'} of ${user}; ${told.length === 0 ? 'no client registered a backchannelLogoutUri' : `told ${told.join(', ')}`}.`
}
