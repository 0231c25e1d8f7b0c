/**
 * The tracing channels' contexts hold no token and none of the user's groups. A subscriber
 * on every event of `voot-guard:authorize`, `voot-guard:resolve` and `voot-guard:upstream`
 * walks every property of every context as it is published (`result` and `error` included,
 * non-enumerable properties, symbols, prototype getters, Map and Set entries), while a real
 * resolver answers warm, cold, coalesced, stale and failing lookups from the emulator. Every
 * string of the user's own groups (ids and names) carries one random marker; the required
 * groups (configuration, which may appear) do not.
 *
 * Denials (issue #32) are walked too: every reason code on the authorize context, the
 * guard's refusal (the `ForbiddenError`, its JSON and problem-details answers, named and
 * generic), `resolver.explain`'s lookups, and the spans and metrics of `voot-guard/otel`.
 */
import { randomBytes } from 'node:crypto'
import { tracingChannel, type TracingChannelSubscribers } from 'node:diagnostics_channel'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { warmAllowed } from '../support/warm-check.js'
import { instrumentVootGuard } from 'voot-guard/otel'
import { createGuardCore } from '../../src/adapter-kit.js'
import {
  allOf,
  anyOf,
  createMembershipResolver,
  ForbiddenError,
  group,
  groupOfType,
  where,
  type MembershipResolver,
  type Requirement,
} from '../../src/index.js'
import { CHANNELS } from '../../src/tracing-channels.js'
import { defaultData, ORG_ID, startEmulator, type Emulator, type EmulatorData } from '../../testing/index.js'
import { startOtelHarness } from '../support/otel-harness.js'

const MARKER = `private${randomBytes(8).toString('hex')}`
const OWN_TYPE = 'voot:ad-hoc'
const OWN_GROUPS = [`fc:adhoc:${MARKER}-a`, `fc:adhoc:${MARKER}-b`, `fc:fs:fs:emne:example.org:${MARKER}:1`]
/** Required by a test but not held by the user: `me/groups/{id}` answers 404. */
const ELSEWHERE = 'fc:adhoc:configured-elsewhere'
/** Required by tests, held by the user with a membership that starts later, ended, or is off. */
const LATER = 'fc:adhoc:configured-later'
const ENDED = 'fc:adhoc:configured-ended'
const OFF = 'fc:adhoc:configured-off'
const USER = `user-${MARKER}`

const data: EmulatorData = {
  ...structuredClone(defaultData),
  groups: [
    ...structuredClone(defaultData.groups),
    ...OWN_GROUPS.map((id) => ({ id, displayName: `Group ${id}`, description: `About ${id}`, type: OWN_TYPE })),
    { id: ELSEWHERE, displayName: 'Elsewhere', type: OWN_TYPE },
    ...[LATER, ENDED, OFF].map((id) => ({ id, displayName: id, type: OWN_TYPE })),
  ],
  users: [
    ...structuredClone(defaultData.users),
    {
      id: USER,
      name: `Name ${MARKER}`,
      memberships: [
        { groupId: ORG_ID, membership: { basic: 'admin', displayName: 'Ansatt' } },
        ...OWN_GROUPS.map((groupId) => ({ groupId, membership: { basic: 'member', displayName: `Role in ${groupId}` } })),
        { groupId: LATER, membership: { basic: 'owner', notBefore: '2099-01-01T00:00:00Z', displayName: `Later ${MARKER}` } },
        { groupId: ENDED, membership: { basic: 'owner', notAfter: '2020-01-01T00:00:00Z', displayName: `Ended ${MARKER}` } },
        { groupId: OFF, membership: { basic: 'owner', active: false, displayName: `Off ${MARKER}` } },
      ],
    },
  ],
}

type Event = 'start' | 'end' | 'asyncStart' | 'asyncEnd' | 'error'
const EVENTS: readonly Event[] = ['start', 'end', 'asyncStart', 'asyncEnd', 'error']
const WALKED = [CHANNELS.authorize, CHANNELS.resolve, CHANNELS.upstream] as const

/**
 * Where anything reachable from `value` holds a token or a string of the user's groups: the
 * paths of the findings, empty when there are none. Reads every own property (enumerable or
 * not, symbols too), every getter up the prototype chain, and Map and Set entries.
 */
function leaks(value: unknown, secrets: readonly string[], path = 'context', seen = new Set<object>()): string[] {
  if (typeof value === 'string') return secrets.some((secret) => value.includes(secret)) ? [path] : []
  if ((typeof value !== 'object' && typeof value !== 'function') || value === null || seen.has(value)) return []
  seen.add(value)
  const found: string[] = []
  if (value instanceof Map) {
    for (const [key, entry] of value)
      found.push(...leaks(key, secrets, `${path}<key>`, seen), ...leaks(entry, secrets, `${path}<${String(key)}>`, seen))
  }
  if (value instanceof Set) for (const entry of value) found.push(...leaks(entry, secrets, `${path}<entry>`, seen))
  const keys = new Set<string | symbol>()
  for (let at: object | null = value; at !== null && at !== Object.prototype && at !== Function.prototype; at = Object.getPrototypeOf(at)) {
    for (const key of Reflect.ownKeys(at)) {
      const descriptor = Reflect.getOwnPropertyDescriptor(at, key)
      if (at === value || descriptor?.get !== undefined) keys.add(key)
    }
  }
  for (const key of keys) {
    const name = `${path}.${String(key)}`
    if (typeof key === 'string' && secrets.some((secret) => key.includes(secret))) found.push(`${name} (the key)`)
    let entry: unknown
    try {
      entry = Reflect.get(value, key, value)
    } catch {
      continue
    }
    found.push(...leaks(entry, secrets, name, seen))
  }
  return found
}

let emulator: Emulator
beforeAll(async () => {
  emulator = await startEmulator({ data })
})
afterAll(async () => {
  await emulator.close()
})

/** Every context published, by channel and event, walked at the moment it was published. */
interface Seen {
  readonly channel: string
  readonly event: Event
  readonly keys: readonly string[]
  readonly leaks: readonly string[]
}
let seen: Seen[]
let tokens: string[]
let stops: (() => void)[]

beforeEach(() => {
  seen = []
  tokens = []
  stops = WALKED.map((name) => {
    const channel = tracingChannel<unknown, object>(name)
    const subscribers = Object.fromEntries(
      EVENTS.map((event) => [
        event,
        (context: object) => {
          seen.push({ channel: name, event, keys: Object.keys(context), leaks: leaks(context, [MARKER, ...tokens]) })
        },
      ]),
    ) as unknown as TracingChannelSubscribers<object>
    channel.subscribe(subscribers)
    return () => void channel.unsubscribe(subscribers)
  })
})
afterEach(() => {
  for (const stop of stops) stop()
})

/** A token of the user, known to the walk before it is used. */
function issue(): string {
  const token = emulator.issueToken(USER)
  tokens.push(token)
  return token
}

function resolverFor(options: Partial<Parameters<typeof createMembershipResolver>[0]> = {}): MembershipResolver {
  return createMembershipResolver({ baseUrl: emulator.baseUrl, retries: 0, circuitBreaker: false, ...options })
}

function expectNoLeaks(): void {
  expect(seen.length).toBeGreaterThan(0)
  expect(seen.filter((entry) => entry.leaks.length > 0)).toEqual([])
}

describe('tracing contexts hold no token and none of the user groups', () => {
  it('the walk finds the user groups and the token where they are', async () => {
    const resolver = resolverFor()
    const token = issue()
    const groups = await resolver.groups(token)
    expect(leaks(groups, [MARKER])).not.toEqual([])
    expect(leaks({ nested: new Map([['k', { deep: [token] }]]) }, tokens)).toEqual(['context.nested<k>.deep.0'])
    expect(leaks(new Error('x', { cause: new Error(`about ${OWN_GROUPS[0]!}`) }), [MARKER])).toContain('context.cause.message')
  })

  it('answers: cold, warm, coalesced, 404, every kind of requirement, showAll and membership', async () => {
    const resolver = resolverFor()
    const token = issue()
    await Promise.all([resolver.groups(token), resolver.groups(token)]) // upstream + coalesced
    await resolver.groups(token) // l1 through the lookup
    await resolver.groups(token, { showAll: true })
    const staff = group(ORG_ID, 'admin')
    expect((await resolver.check(token, staff)).allowed).toBe(true) // warm
    expect((await resolver.check(token, groupOfType(OWN_TYPE))).allowed).toBe(true)
    expect((await resolver.check(token, group(ELSEWHERE))).allowed).toBe(false) // me/groups/{id} 404
    expect((await resolver.check(token, anyOf(group(ELSEWHERE, 'admin'), groupOfType(OWN_TYPE, 'member')))).allowed).toBe(true)
    const reads = where('reads the groups', async (context) => (await context.groups()).length > 1)
    expect((await resolver.check(token, reads)).allowed).toBe(true)
    expect(await resolver.membership(token, ORG_ID)).toMatchObject({ basic: 'admin' })
    // A cold decision on a fresh token: authorize around resolve around upstream.
    expect((await resolver.check(issue(), groupOfType(OWN_TYPE))).allowed).toBe(true)
    expect(warmAllowed(resolver, token, staff)?.allowed).toBe(true)

    expectNoLeaks()
    for (const channel of WALKED) {
      for (const event of EVENTS.filter((name) => name !== 'error')) {
        expect(seen.some((entry) => entry.channel === channel && entry.event === event)).toBe(true)
      }
    }
    // The finished traces still say they finished, as the otel subscriber needs.
    expect(seen.some((entry) => entry.channel === CHANNELS.resolve && entry.event === 'asyncEnd' && entry.keys.includes('result'))).toBe(
      true,
    )
    expect(seen.some((entry) => entry.channel === CHANNELS.authorize && entry.event === 'asyncEnd' && entry.keys.includes('result'))).toBe(
      true,
    )
  })

  it('failures: 401, 5xx and bad bodies that quote the user groups, a stale answer served', async () => {
    let clock = Date.now()
    const resolver = resolverFor({ now: () => clock, cache: { ttl: 1_000, staleIfError: 60_000 } })
    const quoting = `[{"id":"${OWN_GROUPS[0]!}","displayName":"x","membership":42}]`
    const cases = [
      { kind: 'status', status: 500, body: JSON.stringify({ message: `no ${OWN_GROUPS[1]!}` }) },
      { kind: 'status', status: 200, body: quoting },
      { kind: 'status', status: 200, body: quoting.slice(0, -3) },
      { kind: 'invalid-json' },
      { kind: 'wrong-shape' },
      { kind: 'reset-mid-body' },
    ] as const
    for (const fault of cases) {
      const token = issue()
      const added = emulator.faults.add(fault, { token })
      await expect(resolver.check(token, groupOfType(OWN_TYPE))).rejects.toMatchObject({ status: 503 })
      await expect(resolver.groups(token)).rejects.toMatchObject({ status: 503 })
      emulator.faults.remove(added)
    }
    const revoked = issue()
    emulator.revokeToken(revoked)
    await expect(resolver.check(revoked, group(ORG_ID))).rejects.toMatchObject({ status: 401 })

    const stale = issue()
    await resolver.groups(stale)
    clock += 2_000
    const added = emulator.faults.add({ kind: 'status', status: 500 }, { token: stale })
    expect((await resolver.groups(stale)).length).toBeGreaterThan(1) // served stale
    emulator.faults.remove(added)

    expectNoLeaks()
    expect(seen.some((entry) => entry.event === 'error' && entry.keys.includes('error'))).toBe(true)
  })
})

describe('denials hold no token and none of the user groups (issue #32)', () => {
  /** Each reason code, from a requirement that names only configured groups. */
  const DENIALS: readonly (readonly [Requirement, string])[] = [
    [group(ELSEWHERE), 'not_member'],
    [group(OWN_GROUPS[0]!.replace(MARKER, 'x'), 'owner'), 'not_member'],
    [group(ORG_ID, 'owner'), 'role_too_low'],
    [group(LATER), 'not_yet_valid'],
    [group(ENDED), 'expired'],
    [group(OFF), 'inactive'],
    [groupOfType(OWN_TYPE, 'owner'), 'role_too_low'],
    [where('never', () => false), 'predicate'],
    [anyOf(group(ELSEWHERE), group(ORG_ID, 'owner')), 'role_too_low'],
    [allOf(group(ORG_ID), group(ENDED)), 'expired'],
  ]

  it('every reason code on the authorize context, cold and warm, with explain alongside', async () => {
    const resolver = resolverFor()
    const token = issue()
    for (const [requirement, reason] of DENIALS) {
      for (const round of ['cold', 'warm']) {
        expect(await resolver.check(token, requirement), `${reason} ${round}`).toMatchObject({ allowed: false, reason })
      }
      expect((await resolver.explain(token, requirement)).decision).toMatchObject({ allowed: false, reason })
    }
    // A cold explain on a fresh token: its lookups trace resolve and upstream.
    expect((await resolver.explain(issue(), group(ORG_ID, 'owner'))).decision.reason).toBe('role_too_low')

    expectNoLeaks()
    const reasons = seen.filter((entry) => entry.channel === CHANNELS.authorize && entry.keys.includes('reason'))
    expect(reasons.length).toBeGreaterThanOrEqual(DENIALS.length * 2)
  })

  it('the guard refusal: the error, its JSON and problem-details answers, named and generic', async () => {
    for (const denials of ['named', 'generic'] as const) {
      const core = createGuardCore({ baseUrl: emulator.baseUrl, denials, retries: 0 })
      const credentials = { authorization: `Bearer ${issue()}` }
      for (const [requirement, reason] of DENIALS) {
        for (const round of ['cold', 'warm']) {
          const error: unknown = await Promise.resolve(core.authorizeNow(credentials, core.prepare(requirement))).then(
            () => undefined,
            (e: unknown) => e,
          )
          expect(error, `${denials} ${reason} ${round}`).toBeInstanceOf(ForbiddenError)
          expect((error as ForbiddenError).reason).toBe(reason)
          const answers = [core.answer(error), core.answer(error, 'application/problem+json')]
          expect(leaks({ error, answers }, [MARKER, ...tokens])).toEqual([])
          expect(answers.map((answer) => answer?.text).join('')).not.toContain(MARKER)
        }
      }
      await core.resolver.close()
    }
    expectNoLeaks()
  })

  it('the spans and metrics of voot-guard/otel', async () => {
    const harness = startOtelHarness()
    const instrumentation = instrumentVootGuard({ tracerProvider: harness.tracerProvider, meterProvider: harness.meterProvider })
    try {
      const resolver = resolverFor()
      const token = issue()
      for (const [requirement] of DENIALS) {
        await resolver.check(token, requirement)
        await resolver.check(token, requirement)
      }
      await resolver.explain(issue(), groupOfType(OWN_TYPE, 'owner'))
      const exported = await harness.exportedText()
      for (const [, reason] of DENIALS) expect(exported).toContain(`"voot_guard.reason":"${reason}"`)
      expect(exported).not.toContain(MARKER)
      for (const token of tokens) expect(exported).not.toContain(token)
      await resolver.close()
    } finally {
      instrumentation.disable()
      await harness.shutdown()
    }
  })
})
