/**
 * The soak test (not part of `npm test`; `.ci/run` runs it):
 *
 *   node --expose-gc --import tsx test/soak/soak.ts [seconds]   (default 60, or SOAK_SECONDS)
 *
 * An Express 5 app guarded by voot-guard (retries, circuit breaker, short TTLs, a small
 * cache) runs here; a child process (`load.ts`) runs the emulator, switches faults on and
 * off, churns tokens and sends mixed traffic. Afterwards, in this process:
 *
 * - no unhandled rejection and no uncaught exception (here or in the child);
 * - no answer that contradicts a user's memberships, and no 500;
 * - no leaked sockets, servers or timers (`process.getActiveResourcesInfo()` back to its
 *   start);
 * - heap used back near its start (after a GC);
 * - none of the raw tokens in a heap snapshot (the child sends only their SHA-256; a canary
 *   token held on purpose proves the search finds what is there).
 *
 * With SOAK_REDIS=1 (`npm run soak:redis`), the guard also has the shared Redis tier on a
 * redis-server of its own that is frozen (SIGSTOP), stopped and restarted in turns during
 * the run: Redis faults must change no answer. SOAK_REDIS=cluster (`npm run
 * soak:redis-cluster`) does the same on a three-master Redis Cluster whose masters are
 * killed and restarted in turn, and SOAK_REDIS=sentinel (`npm run soak:redis-sentinel`)
 * behind Sentinel, its master killed (a failover) again and again.
 *
 * Exits 0 when all hold, 1 otherwise, printing a short report either way.
 */
import { fork } from 'node:child_process'
import { createHash, randomBytes } from 'node:crypto'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { writeHeapSnapshot } from 'node:v8'
import express from 'express'
import { createGuard } from '../../adapters/express/index.js'
import { where, type ResolverEvent } from '../../src/index.js'
import { ADHOC_GROUP_ID, ORG_ID } from '../../testing/index.js'
import { startSoakRedis } from './redis-faults.js'

const SECONDS = Number(process.argv[2] ?? process.env.SOAK_SECONDS ?? 60)
/** Heap growth tolerated between the warm start and the end (both after a GC, cache emptied). */
const HEAP_SLACK_BYTES = 8 * 1024 * 1024

const gc = (globalThis as { gc?: () => void }).gc
if (gc === undefined) {
  console.error('soak: run with node --expose-gc --import tsx test/soak/soak.ts')
  process.exit(2)
}

const failures: string[] = []
let unhandled = 0
let uncaught = 0
process.on('unhandledRejection', (reason) => {
  unhandled++
  console.error('soak: unhandled rejection', reason)
})
process.on('uncaughtException', (error) => {
  uncaught++
  console.error('soak: uncaught exception', error)
})

function resourceCounts(): Map<string, number> {
  const counts = new Map<string, number>()
  for (const type of process.getActiveResourcesInfo()) counts.set(type, (counts.get(type) ?? 0) + 1)
  return counts
}

/**
 * The active resources once whatever was closing has finished: a timer that a closing client
 * armed (a reconnect delay, a connect timeout of a Redis client torn down mid-failover) ends
 * on its own within the grace; a leak is what is still there after it.
 */
async function settledResourceCounts(graceMs: number): Promise<Map<string, number>> {
  const giveUpAt = Date.now() + graceMs
  let counts = resourceCounts()
  while (Date.now() < giveUpAt && [...counts].some(([type, count]) => count > (resourcesAtStart.get(type) ?? 0))) {
    await sleep(100)
    counts = resourceCounts()
  }
  return counts
}

async function fullGc(): Promise<number> {
  // Several rounds, with turns of the event loop between them, so finalizers and weak
  // references settle.
  for (let i = 0; i < 4; i++) {
    gc!()
    await sleep(50)
  }
  return process.memoryUsage().heapUsed
}

const resourcesAtStart = resourceCounts()

const child = fork(new URL('./load.ts', import.meta.url), [], {
  execArgv: ['--import', 'tsx'],
  stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
})
const messages: { type: string; [key: string]: unknown }[] = []
const waiters: (() => void)[] = []
child.on('message', (message: { type: string }) => {
  messages.push(message)
  for (const wake of waiters.splice(0)) wake()
})
const childExit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))

async function receive<T>(type: string): Promise<T> {
  for (;;) {
    const index = messages.findIndex((m) => m.type === type)
    if (index >= 0) return messages.splice(index, 1)[0] as T
    await new Promise<void>((resolve) => waiters.push(resolve))
  }
}

const { baseUrl } = await receive<{ baseUrl: string }>('ready')
const soakRedisKind = process.env.SOAK_REDIS ?? ''
const soakRedis = soakRedisKind === '' || soakRedisKind === '0' ? undefined : await startSoakRedis(soakRedisKind)

const eventCounts = new Map<string, number>()
const guard = createGuard({
  baseUrl,
  timeout: 300,
  // Below the `oversized` fault's 256 KiB, so that fault is a failure here. (Its body is a
  // valid list of groups: under the default 1 MiB limit it would be a real answer, for any
  // token, and the run would count the allows it causes as wrong.)
  maxResponseBytes: 128 * 1024,
  retries: 1,
  retryDelay: 20,
  maxInflight: 64,
  cache: { max: 300, ttl: 1500, negativeTtl: 1000, staleIfError: 1000 },
  circuitBreaker: { failureThreshold: 20, cooldown: 500 },
  onEvent: (event: ResolverEvent) => eventCounts.set(event.type, (eventCounts.get(event.type) ?? 0) + 1),
  ...(soakRedis === undefined ? {} : { sharedCache: soakRedis.tier }),
})
const app = express()
const ok = (_req: express.Request, res: express.Response): void => {
  res.json({ ok: true })
}
app.get('/staff', guard.requireGroup(ORG_ID, 'admin'), ok)
app.get('/member', guard.requireGroup(ORG_ID), ok)
app.get('/any', guard.requireAnyGroup([ADHOC_GROUP_ID, 'fc:fs:fs:emne:example.org:INF1000:1']), ok)
app.get('/owner', guard.requireGroup(ADHOC_GROUP_ID, 'owner'), ok)
app.get('/custom', guard.require(where('member of the organisation', (ctx) => ctx.isMember(ORG_ID))), ok)
app.get('/me', guard.authenticate(), async (req, res) => {
  const groups = await req.voot!.groups()
  res.json({ count: groups.length })
})
// A route's own lookups (req.voot.groups()) can fail too: answer them as the guard would.
app.use(
  (
    error: { status?: number; headers?: Record<string, string> },
    _req: express.Request,
    res: express.Response,
    _next: express.NextFunction,
  ) => {
    res
      .status(error.status ?? 500)
      .set(error.headers ?? {})
      .json({ error: 'route failed' })
  },
)
const server = createServer(app)
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`

const started = Date.now()
child.send({ type: 'start', url, seconds: SECONDS })
await receive('warm')
await guard.resolver.invalidate()
soakRedis?.startFaults()
const heapAtStart = await fullGc()
let heapPeak = heapAtStart
const sampler = setInterval(() => {
  heapPeak = Math.max(heapPeak, process.memoryUsage().heapUsed)
}, 250)

const { report } = await receive<{
  report: {
    requests: number
    statuses: Record<string, number>
    violations: string[]
    tokenHashes: string[]
    scenarios: number
    unhandled: number
  }
}>('done')
clearInterval(sampler)
const statsAtEnd = guard.resolver.stats()
const redisFaults = await soakRedis?.stopFaults()

// Wind down this side completely: no server, no pool, no cache.
server.closeAllConnections()
await new Promise<void>((resolve) => server.close(() => resolve()))
await guard.resolver.close()
await guard.resolver.invalidate()
await soakRedis?.close()
const heapAtEnd = await fullGc()

// The heap snapshot. The canary is held on purpose: the search must find it.
const canary = randomBytes(32).toString('base64url')
const wanted = new Set(report.tokenHashes)
const canaryHash = createHash('sha256').update(canary).digest('hex')
wanted.add(canaryHash)
const snapshotFile = writeHeapSnapshot(join(tmpdir(), `voot-guard-soak-${process.pid}.heapsnapshot`))
const found = searchSnapshot(snapshotFile, wanted)
rmSync(snapshotFile, { force: true })
if (canary.length !== 43) failures.push('the canary was not kept alive') // keeps `canary` reachable until here

child.send({ type: 'exit' })
const childCode = await childExit
const resourcesAtEnd = await settledResourceCounts(3_000)

// ---- Verdicts ----
if (unhandled > 0) failures.push(`${unhandled} unhandled rejection(s) in the guard process`)
if (uncaught > 0) failures.push(`${uncaught} uncaught exception(s) in the guard process`)
if (report.unhandled > 0) failures.push(`${report.unhandled} unhandled rejection(s) in the load process`)
if (childCode !== 0) failures.push(`the load process exited with ${childCode}`)
if (report.violations.length > 0)
  failures.push(`${report.violations.length} wrong answers, e.g. ${report.violations.slice(0, 5).join('; ')}`)
if ((report.statuses['500'] ?? 0) > 0) failures.push(`${report.statuses['500']} answers with status 500`)
const answered = report.requests - (report.statuses['0'] ?? 0)
if (answered < SECONDS * 50) failures.push(`only ${answered} answered requests: the load did not run`)
if ((report.statuses['200'] ?? 0) === 0 || (report.statuses['503'] ?? 0) === 0) failures.push('expected both allowed answers and 503s')
if (!found.has(canaryHash)) failures.push('the heap snapshot search did not find the canary: the search is broken')
found.delete(canaryHash)
if (found.size > 0) failures.push(`${found.size} raw token(s) found in the heap snapshot`)
if (heapAtEnd - heapAtStart > HEAP_SLACK_BYTES) {
  failures.push(`heap grew by ${mb(heapAtEnd - heapAtStart)} (start ${mb(heapAtStart)}, end ${mb(heapAtEnd)})`)
}
for (const [type, count] of resourcesAtEnd) {
  const before = resourcesAtStart.get(type) ?? 0
  if (count > before) failures.push(`leaked ${count - before} active ${type} resource(s)`)
}

console.log(
  JSON.stringify(
    {
      seconds: Math.round((Date.now() - started) / 1000),
      node: process.version,
      requests: report.requests,
      statuses: report.statuses,
      faultScenarios: report.scenarios,
      tokensSearched: report.tokenHashes.length,
      resolver: statsAtEnd,
      ...(redisFaults === undefined ? {} : { redis: redisFaults }),
      events: Object.fromEntries(eventCounts),
      heap: { start: mb(heapAtStart), peak: mb(heapPeak), end: mb(heapAtEnd) },
      resources: { start: Object.fromEntries(resourcesAtStart), end: Object.fromEntries(resourcesAtEnd) },
      failures,
    },
    null,
    2,
  ),
)
process.exit(failures.length === 0 ? 0 : 1)

function mb(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`
}

/**
 * The hashes in `wanted` whose token occurs in any string of the snapshot. Tokens are
 * base64url; every run of 43 such characters inside a string is a candidate. (V8 keeps
 * at most the first 1024 characters of a string in a snapshot.)
 */
function searchSnapshot(file: string, wantedHashes: ReadonlySet<string>): Set<string> {
  const snapshot = JSON.parse(readFileSync(file, 'utf8')) as { strings: string[] }
  const hits = new Set<string>()
  const run = /[A-Za-z0-9_-]{43,}/g
  for (const text of snapshot.strings) {
    if (text.length < 43) continue
    run.lastIndex = 0
    for (let match = run.exec(text); match !== null; match = run.exec(text)) {
      const candidate = match[0]
      for (let offset = 0; offset + 43 <= candidate.length && offset < 4096; offset++) {
        const hash = createHash('sha256')
          .update(candidate.slice(offset, offset + 43))
          .digest('hex')
        if (wantedHashes.has(hash)) hits.add(hash)
      }
    }
  }
  return hits
}
