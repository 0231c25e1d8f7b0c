/**
 * The soak test's other half, run in a child process by `test/soak/soak.ts`: the group
 * service emulator with faults switching on and off, and a load generator against the
 * guarded app in the parent. It holds the raw tokens, so that the parent's heap holds
 * none but what the library itself kept (which must be nothing).
 *
 * Protocol (IPC): → `{ type: 'ready', baseUrl }`; ← `{ type: 'start', url, seconds }`;
 * → `{ type: 'warm' }` after a warm-up; → `{ type: 'done', report }`; ← `{ type: 'exit' }`.
 */
import { createHash, randomBytes } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { ADHOC_GROUP_ID, ORG_ID, startEmulator, type Fault } from '../../testing/index.js'

/** What each user may get from each route when the service works (503 is always possible under faults). */
const EXPECTED: Record<string, Record<string, number>> = {
  alice: { '/staff': 200, '/member': 200, '/any': 200, '/me': 200, '/owner': 200, '/custom': 200 },
  bob: { '/staff': 403, '/member': 200, '/any': 200, '/me': 200, '/owner': 403, '/custom': 200 },
  carol: { '/staff': 403, '/member': 403, '/any': 403, '/me': 200, '/owner': 403, '/custom': 403 },
  // Dave's organisation membership starts in 2099; his course membership has ended.
  dave: { '/staff': 403, '/member': 403, '/any': 403, '/me': 200, '/owner': 403, '/custom': 403 },
  erin: { '/staff': 403, '/member': 403, '/any': 403, '/me': 200, '/owner': 403, '/custom': 403 },
}
const USERS = Object.keys(EXPECTED)
const ROUTES = Object.keys(EXPECTED.alice!)

/** Fault scenarios the service goes through; each lasts a random while. */
const SCENARIOS: readonly (readonly Fault[])[] = [
  [],
  [],
  [{ kind: 'status', status: 500 }],
  [{ kind: 'status', status: 503 }],
  [{ kind: 'hang' }],
  [{ kind: 'reset' }],
  [{ kind: 'reset-mid-body' }],
  [{ kind: 'status', status: 429, body: '', headers: { 'retry-after': '1' } }],
  [{ kind: 'latency', ms: 120 }],
  [{ kind: 'slow-body', bytesPerSecond: 2000 }],
  [{ kind: 'invalid-json' }],
  [{ kind: 'wrong-shape' }],
  [{ kind: 'non-json' }],
  [{ kind: 'oversized', bytes: 256 * 1024 }],
  [{ kind: 'redirect', location: '/v1/groups/me/groups' }],
  [{ kind: 'partial', omit: [ORG_ID, ADHOC_GROUP_ID] }],
]

interface Report {
  requests: number
  statuses: Record<string, number>
  /** Answers that contradict the user's memberships (an allow that should be a deny, or the reverse). */
  violations: string[]
  /** SHA-256 (hex) of every raw token sent, valid or not: the parent searches its heap for them. */
  tokenHashes: string[]
  scenarios: number
  unhandled: number
}

const send = (message: unknown): void => {
  process.send!(message)
}

let unhandled = 0
process.on('unhandledRejection', () => unhandled++)

const emulator = await startEmulator()
send({ type: 'ready', baseUrl: emulator.baseUrl })

const start = await new Promise<{ url: string; seconds: number }>((resolve) => {
  process.on('message', function onMessage(message: { type: string; url: string; seconds: number }) {
    if (message.type === 'start') {
      process.off('message', onMessage)
      resolve(message)
    }
  })
})

const hashes = new Set<string>()
const remember = (token: string): string => {
  hashes.add(createHash('sha256').update(token).digest('hex'))
  return token
}

// A pool of live tokens per user, renewed as the run goes on (old ones revoked).
const pool: { user: string; token: string }[] = []
const issue = (): void => {
  const user = USERS[Math.floor(Math.random() * USERS.length)]!
  pool.push({ user, token: remember(emulator.issueToken(user)) })
}
for (let i = 0; i < 150; i++) issue()
const revoked = new Set<string>()

const report: Report = { requests: 0, statuses: {}, violations: [], tokenHashes: [], scenarios: 0, unhandled: 0 }
let stopping = false

async function one(url: string): Promise<void> {
  const route = ROUTES[Math.floor(Math.random() * ROUTES.length)]!
  const dice = Math.random()
  const headers: Record<string, string> = {}
  let pick: { user: string; token: string } | undefined
  if (dice < 0.04) {
    headers.authorization = `Bearer ${remember(randomBytes(32).toString('base64url'))}` // unknown token
  } else if (dice < 0.06) {
    headers.authorization = `Bearer ${remember(randomBytes(32).toString('base64url'))} extra` // malformed
  } else if (dice < 0.07) {
    // no header
  } else {
    pick = pool[Math.floor(Math.random() * pool.length)]!
    headers.authorization = `Bearer ${pick.token}`
  }
  // Some callers give up early, so the server sees disconnects mid-request.
  const signal = AbortSignal.timeout(Math.random() < 0.05 ? 20 : 3000)
  let status: number
  try {
    const res = await fetch(`${url}${route}`, { headers, signal })
    await res.arrayBuffer()
    status = res.status
  } catch {
    status = 0 // gave up
  }
  report.requests++
  report.statuses[status] = (report.statuses[status] ?? 0) + 1
  if (status === 0 || status === 503) return
  if (pick === undefined) {
    if (status !== 400 && status !== 401) report.violations.push(`${route} without a valid token answered ${status}`)
    return
  }
  if (revoked.has(pick.token)) {
    // A revoked token may still be served from the cache until its entries expire (ttl).
    if (status !== 401 && status !== EXPECTED[pick.user]![route])
      report.violations.push(`${route} revoked token of ${pick.user}: ${status}`)
    return
  }
  if (status !== EXPECTED[pick.user]![route]) report.violations.push(`${route} for ${pick.user}: ${status}`)
}

async function worker(url: string): Promise<void> {
  while (!stopping) await one(url)
}

async function faults(): Promise<void> {
  while (!stopping) {
    emulator.faults.clear()
    const scenario = SCENARIOS[Math.floor(Math.random() * SCENARIOS.length)]!
    for (const fault of scenario) {
      // Half the time the fault hits everyone, else a third of the tokens.
      const some = Math.random() < 0.5 ? pool.filter((_, i) => i % 3 === 0) : undefined
      if (some === undefined) emulator.faults.add(fault)
      else for (const { token } of some) emulator.faults.add(fault, { token })
    }
    report.scenarios++
    // Token churn: revoke a few, issue a few.
    for (let i = 0; i < 5; i++) {
      const victim = pool[Math.floor(Math.random() * pool.length)]!
      emulator.revokeToken(victim.token)
      revoked.add(victim.token)
      issue()
    }
    await sleep(300 + Math.random() * 1500)
  }
  emulator.faults.clear()
}

const WORKERS = 24
stopping = false
const warmUntil = Date.now() + 3000
const running = [...Array.from({ length: WORKERS }, () => worker(start.url)), faults()]
while (Date.now() < warmUntil) await sleep(100)
send({ type: 'warm' })
await sleep(start.seconds * 1000)
stopping = true
await Promise.all(running)
// A quiet end: the service healthy, one last pass of every token so that the cache is
// full of live answers when the parent measures.
emulator.faults.clear()

report.tokenHashes = [...hashes]
report.unhandled = unhandled
send({ type: 'done', report })

await new Promise<void>((resolve) => {
  process.on('message', (message: { type: string }) => {
    if (message.type === 'exit') resolve()
  })
})
await emulator.close()
process.disconnect()
