/**
 * Figure 7 in its own process (started with `--expose-gc`): a million distinct tokens
 * through one resolver with `cache.max` 100 000. The groups client is replaced by one that
 * parses a real `me/groups` body from the emulator for every token (fresh objects, as the
 * real client makes), so that a million calls take seconds instead of an hour of HTTP.
 * Usage: `memory.ts <tokens> <max> <user> <shared|distinct>`: with `shared`, every token gets
 * the same answer (the user's, as the students of one class share their groups); with
 * `distinct`, each token's membership carries a title of its own, so that no part of one
 * answer equals another's (the worst case for the resolver's answer pool).
 *
 * @module
 */
import { randomBytes } from 'node:crypto'
import { createMembershipResolver, group, type GroupsClient } from '../../src/index.js'
import { parseJson, parseMyGroups } from '../../src/client/parse.js'
import { ORG_ID, SCHOOL_GROUP_ID, startEmulator } from '../../testing/index.js'
import { serveParent } from './ipc.js'

const tokens = Number(process.argv[2] ?? '1000000')
const max = Number(process.argv[3] ?? '100000')
const user = process.argv[4] ?? 'carol'
const variety = process.argv[5] === 'distinct' ? 'distinct' : 'shared'
const gc = (globalThis as { gc?: () => void }).gc
if (gc === undefined) throw new Error('memory.ts needs --expose-gc')

const emulator = await startEmulator()
const answer = await fetch(`${emulator.baseUrl}/me/groups`, { headers: { authorization: `Bearer ${emulator.issueToken(user)}` } })
const body = await answer.text()
await emulator.close()

const unsupported = (): never => {
  throw new Error('not used by this benchmark')
}
let served = 0
// Splits the body where a title of the token's own goes in.
const [head, tail] = body.split('"membership":{')
if (tail === undefined) throw new Error(`memory: ${user}'s answer has no membership to vary`)
const bodyOfNext = variety === 'shared' ? () => body : () => `${head}"membership":{"title":["Lektor ${++served}"],${tail}`
const client: GroupsClient = {
  baseUrl: 'http://groups.invalid/groups',
  myGroups: () => Promise.resolve().then(() => parseMyGroups(parseJson(bodyOfNext()))),
  myMembership: unsupported,
  group: unsupported,
  members: unsupported,
  groups: unsupported,
  groupTypes: unsupported,
  close: () => Promise.resolve(),
}
const requirement = user === 'alice' ? group(ORG_ID, 'admin') : group(SCHOOL_GROUP_ID)

function heapUsed(): number {
  gc?.()
  gc?.()
  return process.memoryUsage().heapUsed
}

// The byte bound (cache.maxBytes, 64 MiB by default) is lifted so that the figure measures
// the heap per entry at `max` entries, comparable across versions; the bound itself is tested.
const resolver = createMembershipResolver({ client, cache: { max, maxBytes: 1 << 30 } })
const heapStart = heapUsed()
let heapFull = Number.NaN
let largestSize = 0
const batch = 200 // below maxInflight (256): every token gets its own upstream call
const started = performance.now()
for (let done = 0; done < tokens; done += batch) {
  const pending: Promise<unknown>[] = []
  for (let i = 0; i < batch && done + i < tokens; i++) {
    pending.push(resolver.check(randomBytes(32).toString('base64url'), requirement))
  }
  const decisions = await Promise.all(pending)
  if (!decisions.every((d) => (d as { allowed: boolean }).allowed)) throw new Error('memory: a decision was not allowed')
  largestSize = Math.max(largestSize, resolver.stats().size)
  if (Number.isNaN(heapFull) && done + batch >= max) heapFull = heapUsed()
}
const seconds = (performance.now() - started) / 1000
const heapEnd = heapUsed()
const stats = resolver.stats()

/** What the memory child measured. */
export interface MemoryResult {
  readonly tokens: number
  readonly max: number
  readonly user: string
  readonly variety: 'shared' | 'distinct'
  readonly bodyBytes: number
  readonly finalSize: number
  readonly largestSize: number
  readonly upstreamCalls: number
  readonly heapStartMiB: number
  readonly heapFullMiB: number
  readonly heapEndMiB: number
  readonly rssMiB: number
  /** Memory outside the JS heap held by ArrayBuffers (lru-cache's typed arrays among them). */
  readonly arrayBuffersMiB: number
  readonly seconds: number
}

const MiB = 1024 * 1024
serveParent({}, {
  tokens,
  max,
  user,
  variety,
  bodyBytes: Buffer.byteLength(body),
  finalSize: stats.size,
  largestSize,
  upstreamCalls: stats.upstreamCalls,
  heapStartMiB: heapStart / MiB,
  heapFullMiB: heapFull / MiB,
  heapEndMiB: heapEnd / MiB,
  rssMiB: process.memoryUsage().rss / MiB,
  arrayBuffersMiB: process.memoryUsage().arrayBuffers / MiB,
  seconds,
} satisfies MemoryResult)
