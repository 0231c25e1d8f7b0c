/**
 * The gate's whole path under load and faults: the emulator (group service and OAuth) ←
 * two gate processes sharing one redis-server ← real nginx (examples/gate/nginx.conf, both
 * gates in `upstream voot_gate`) ← keep-alive load → a plain echo app.
 *
 * Load: bearer tokens and sealed session cookies of a member (alice, admin of the org: rule
 * `admin`), a non-member (bob) and tokens of alice revoked at the emulator mid-run; a session
 * of alice signed out mid-run (`POST /_gate/signout` through nginx), and one ended mid-run by
 * a back-channel logout (the emulator ends alice's sessions: its Logout Token, posted to
 * nginx's `/_gate/backchannel-logout`, names her at its issuer).
 * Phases in turn: up, service slow below and above the gate's timeout, 500s, 429 with
 * Retry-After, service down (hang), Redis frozen, Redis stopped and restarted.
 *
 * Rules (each request judged by its kind and the phase it was sent and answered in):
 * - never a 200 for the non-member, never a 403 or 401 for the member, never a 200 for a
 *   revoked token later than `ttl + GRACE_SLACK_MS` after its revocation (in between,
 *   either answer); never a 200 for an ended session (signed out, or logged out by the
 *   provider) sent more than ENDED_GRACE_MS (one second) after its end, on either gate;
 *   a 200 must carry the right X-Voot-User to the app;
 * - 503 only while the group service is at fault or within SETTLE_MS after a fault phase
 *   ends (answers cached before and requests under way); Redis faults are not service
 *   faults: a 503 then is a failure;
 * - any other status (500, 502, a socket error) is a failure;
 * - each gate's RSS (VmRSS) may grow at most RSS_BOUND_MB from the end of a 5 s warm-up
 *   (service up) to the end;
 * - SETTLE_MS is 2.5 s: the 429's Retry-After (1 s) plus the gate's timeout (1 s, a check
 *   that hung on the service) plus 0.5 s; the circuit breaker is off (the default).
 *
 * `SOAK_SECONDS` (default 60).
 */
import { fork, type ChildProcess } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { Agent, request } from 'node:http'
import { setTimeout as sleep } from 'node:timers/promises'
import { startRedisServer } from '../../demo/redis-server.js'
import { createSessionCookies } from '../../gate/session/session.js'
import type { GateConfig } from '../../gate/index.js'
import type { Fault } from '../../testing/index.js'
import { COOKIE_SECRETS, startGateEmulator, testGateConfig } from '../gate/support/gate-harness.js'
import { startEchoApp, startNginx } from '../gate/support/proxies.js'

const SECONDS = Number(process.env.SOAK_SECONDS ?? 60)
const TTL_MS = 2_000
const TIMEOUT_MS = 1_000
const GRACE_SLACK_MS = 1_000
/** The contract: a session ended on one instance is refused by every instance within a second. */
const ENDED_GRACE_MS = 1_000
const SETTLE_MS = 2_500
const RSS_BOUND_MB = 64
const WARM_UP_MS = 5_000
const CONCURRENCY = 8
const started = Date.now()
const failures: string[] = []

type Phase = 'up' | 'slow-below' | 'slow-above' | 'status-500' | 'status-429' | 'down' | 'redis-frozen' | 'redis-stopped'
const SERVICE_FAULTS: ReadonlySet<Phase> = new Set(['slow-above', 'status-500', 'status-429', 'down'])
const PLAN: readonly Phase[] = [
  'up',
  'slow-below',
  'up',
  'slow-above',
  'up',
  'status-500',
  'up',
  'status-429',
  'up',
  'down',
  'up',
  'redis-frozen',
  'up',
  'redis-stopped',
  'up',
]
const PHASE_MS = Math.max(1_000, Math.floor((SECONDS * 1000) / PLAN.length))

const emulator = await startGateEmulator()
const redis = await startRedisServer()
const app = await startEchoApp()
const config: GateConfig = testGateConfig(emulator, {
  service: {
    baseUrl: emulator.baseUrl,
    allowInsecureHttp: true,
    timeout: `${TIMEOUT_MS}ms`,
    retries: 0,
    cache: { ttl: `${TTL_MS}ms`, staleIfError: 0 },
  },
  redis: { url: redis.url, secret: 'gate-soak-shared-secret-0123456789abcdef', prefix: 'gate-soak:' },
})
const baseOAuth = config.oauth as NonNullable<GateConfig['oauth']>
const fullConfig: GateConfig = { ...config, oauth: { ...baseOAuth, backchannelLogout: true } }

interface GateChild {
  readonly child: ChildProcess
  readonly url: string
}
async function startGateChild(): Promise<GateChild> {
  const child = fork(new URL('./gate-child.ts', import.meta.url), [], {
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, VOOT_SOAK_GATE_CONFIG: JSON.stringify(fullConfig) },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  })
  const url = await new Promise<string>((resolve, reject) => {
    child.once('message', (message: { url: string }) => resolve(message.url))
    child.once('exit', (code) => reject(new Error(`a gate exited with ${code} before it was ready`)))
  })
  return { child, url }
}
const gates = [await startGateChild(), await startGateChild()]
const ports = gates.map((gate) => Number(new URL(gate.url).port))
// nginx's error log outlives it: its tail is printed when the soak fails.
const nginxErrorLog = join(mkdtempSync(join(tmpdir(), 'voot-gate-soak-')), 'nginx-error.log')
const nginx = await startNginx({ gatePort: ports[0]!, moreGatePorts: ports.slice(1), appPort: app.port }, { errorLog: nginxErrorLog })
// The provider tells the gates (through nginx, as it would from outside) when alice's sessions end.
emulator.replaceData({
  ...emulator.data,
  clients: emulator.data.clients.map((client) =>
    client.clientId === baseOAuth.clientId ? { ...client, backchannelLogoutUri: `${nginx.url}/_gate/backchannel-logout` } : client,
  ),
})

// ---- Who asks ----
const cookies = createSessionCookies({ name: undefined, secrets: COOKIE_SECRETS, maxAge: 8 * 3_600_000 }, Date.now)
function cookieFor(user: string, token = emulator.issueToken(user), issuer?: string): string {
  const line = cookies.writeSession(
    { accessToken: token, expiresAt: Date.now() + 3_600_000, refreshToken: undefined, sub: user, issuedAt: Date.now(), issuer },
    { scheme: 'http', host: '127.0.0.1' },
  ) as string
  return line.split(';')[0]!
}
type Kind =
  | 'member-bearer'
  | 'member-cookie'
  | 'nonmember-bearer'
  | 'nonmember-cookie'
  | 'revoked-bearer'
  | 'revoked-cookie'
  | 'signedout-cookie'
  | 'logout-cookie'
const revokedTokens = [emulator.issueToken('alice'), emulator.issueToken('alice')]
const credentials: Record<Kind, Record<string, string>> = {
  'member-bearer': { authorization: `Bearer ${emulator.issueToken('alice')}` },
  'member-cookie': { cookie: cookieFor('alice') },
  'nonmember-bearer': { authorization: `Bearer ${emulator.issueToken('bob')}` },
  'nonmember-cookie': { cookie: cookieFor('bob') },
  'revoked-bearer': { authorization: `Bearer ${revokedTokens[0]!}` },
  'revoked-cookie': { cookie: cookieFor('alice', revokedTokens[1]) },
  'signedout-cookie': { cookie: cookieFor('alice') },
  // The only session that names the emulator as its issuer: the back-channel logout of alice ends it, not the others.
  'logout-cookie': { cookie: cookieFor('alice', emulator.issueToken('alice'), emulator.authUrl) },
}
/** When the end of each ended session was asked for, by kind: from then on, a 401 or 302 is right. */
const endingFrom: Partial<Record<Kind, number>> = {}
/** When each ended session ended (the end's answer received), by kind. */
const endedAt: Partial<Record<Kind, number>> = {}
/** The latest an ended session was still let through, in ms after its end (sent time). */
const endedAllowedUpTo: Partial<Record<Kind, number>> = {}
const KINDS = Object.keys(credentials) as Kind[]
let revokedAt: number | undefined
/** The latest a revoked token was still let through, in ms after its revocation (sent time). */
let revokedAllowedUpTo: number | undefined

// ---- Phases ----
let phase: Phase = 'up'
let lastServiceFaultEnd = 0
let redisFaults = 0
async function runPhases(): Promise<void> {
  for (const [index, next] of PLAN.entries()) {
    if (SERVICE_FAULTS.has(phase) && !SERVICE_FAULTS.has(next)) lastServiceFaultEnd = Date.now()
    emulator.faults.clear()
    phase = next
    const faults: Record<string, Fault | undefined> = {
      'slow-below': { kind: 'latency', ms: Math.floor(TIMEOUT_MS / 3) },
      'slow-above': { kind: 'latency', ms: TIMEOUT_MS * 2 },
      'status-500': { kind: 'status', status: 500 },
      'status-429': { kind: 'status', status: 429, headers: { 'retry-after': '1' } },
      down: { kind: 'hang' },
    }
    const fault = faults[next]
    if (fault !== undefined) emulator.faults.add(fault)
    // Revoked in the third phase (up, the service well): from then on, after the grace, never 200.
    if (index === 2) {
      for (const token of revokedTokens) emulator.revokeToken(token)
      revokedAt = Date.now()
    }
    // Sessions ended in later healthy phases: a sign-out through nginx, then the provider's back-channel logout.
    if (index === 4) await endSession('signedout-cookie', () => signOutThroughNginx(credentials['signedout-cookie'].cookie!))
    if (index === 6) {
      await endSession('logout-cookie', async () => {
        const { notified } = await emulator.oauth.endSessions('alice')
        return notified.every((each) => each.status === 200) && notified.length > 0
      })
    }
    if (next === 'redis-frozen') {
      redisFaults++
      redis.freeze()
      await sleep(PHASE_MS)
      redis.thaw()
    } else if (next === 'redis-stopped') {
      redisFaults++
      await redis.stop()
      await sleep(PHASE_MS)
      await redis.start()
    } else await sleep(PHASE_MS)
  }
  emulator.faults.clear()
}

async function endSession(kind: Kind, end: () => Promise<boolean>): Promise<void> {
  endingFrom[kind] = Date.now()
  if (!(await end())) failures.push(`ending the ${kind} session failed`)
  endedAt[kind] = Date.now()
}

function signOutThroughNginx(cookie: string): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request(`${nginx.url}/_gate/signout`, { method: 'POST', headers: { cookie, origin: nginx.url } }, (res) => {
      res.resume()
      resolve(res.statusCode === 303)
    })
    req.on('error', () => resolve(false))
    req.end()
  })
}

// ---- Verdicts per request ----
const counts = { requests: 0, byKind: {} as Record<string, Record<string, number>>, byPhase: {} as Record<string, Record<string, number>> }
const wrong = new Map<string, string>() // the first example of each kind of wrong answer
let wrongCount = 0
function bump(table: Record<string, Record<string, number>>, key: string, status: string): void {
  const row = (table[key] ??= {})
  row[status] = (row[status] ?? 0) + 1
}
function judge(kind: Kind, sentPhase: Phase, sentAt: number, status: number, user: string | undefined): string | undefined {
  const now = Date.now() // the answer's time
  const serviceFault = SERVICE_FAULTS.has(sentPhase) || SERVICE_FAULTS.has(phase) || now - lastServiceFaultEnd < SETTLE_MS
  if (status === 503) return serviceFault ? undefined : '503 while the group service was up'
  // A revoked kind answered before the revocation is a member; sent before and answered after, either answer.
  const member = kind.startsWith('member') || (kind.startsWith('revoked') && (revokedAt === undefined || now < revokedAt))
  const revokedLong = kind.startsWith('revoked') && revokedAt !== undefined && sentAt > revokedAt + TTL_MS + GRACE_SLACK_MS
  const revokedRecent = kind.startsWith('revoked') && revokedAt !== undefined && !revokedLong && !member
  const signInAgain = status === 401 || status === 302
  const ended = endedAt[kind]
  if (ended !== undefined || kind === 'signedout-cookie' || kind === 'logout-cookie') {
    // Ended: a 200 sent more than a second after the end is the failure; sent before it, the member's answers.
    if (status === 200) {
      if (ended !== undefined && sentAt > ended + ENDED_GRACE_MS) return `200 for a session ended ${sentAt - ended} ms before`
      return user === 'alice' ? undefined : `200 with X-Voot-User ${JSON.stringify(user)}`
    }
    if (signInAgain) return endingFrom[kind] !== undefined ? undefined : `${status} for a session not ended`
    return status === 403 ? '403 for a member' : `unexpected status ${status}`
  }
  if (status === 200) {
    if (kind.startsWith('nonmember')) return '200 for a non-member'
    if (!member && !revokedRecent) return `200 for a token revoked ${now - revokedAt!} ms before`
    return user === 'alice' ? undefined : `200 with X-Voot-User ${JSON.stringify(user)}`
  }
  if (status === 403) return kind.startsWith('nonmember') ? undefined : '403 for a member (or a revoked token: expected 401)'
  if (signInAgain) return kind.startsWith('revoked') && !member ? undefined : `${status} for a valid token`
  return `unexpected status ${status}`
}

// ---- Load ----
const socketErrors: Record<string, number> = {}
let firstSocketError: string | undefined
const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY })
function send(kind: Kind): Promise<{ status: number; user: string | undefined }> {
  return new Promise((resolve) => {
    const req = request(
      `${nginx.url}/admin/x`,
      { agent, headers: { accept: kind.endsWith('cookie') ? 'text/html' : 'application/json', ...credentials[kind] }, timeout: 10_000 },
      (res) => {
        let body = ''
        res.setEncoding('utf8')
        res.on('data', (chunk: string) => (body += chunk))
        res.on('end', () => {
          let user: string | undefined
          if (res.statusCode === 200) {
            try {
              user = (JSON.parse(body) as { headers: Record<string, string> }).headers['x-voot-user']
            } catch {
              user = undefined
            }
          }
          resolve({ status: res.statusCode ?? 0, user })
        })
      },
    )
    req.on('timeout', () => req.destroy(new Error('timeout')))
    req.on('error', (error: NodeJS.ErrnoException) => {
      const code = error.code ?? error.message
      socketErrors[code] = (socketErrors[code] ?? 0) + 1
      firstSocketError ??= `${code} at ${((Date.now() - started) / 1000).toFixed(1)}s in ${phase}`
      // Not a busy loop when nothing answers.
      setTimeout(() => resolve({ status: 0, user: undefined }), 20)
    })
    req.end()
  })
}
let loading = true
async function worker(offset: number): Promise<void> {
  for (let i = offset; loading; i++) {
    const kind = KINDS[i % KINDS.length]!
    const sentPhase = phase
    const sentAt = Date.now()
    const { status, user } = await send(kind)
    counts.requests++
    bump(counts.byKind, kind, String(status))
    bump(counts.byPhase, sentPhase, String(status))
    const verdict = judge(kind, sentPhase, sentAt, status, user)
    if (kind.startsWith('revoked') && status === 200 && revokedAt !== undefined && sentAt >= revokedAt)
      revokedAllowedUpTo = Math.max(revokedAllowedUpTo ?? 0, sentAt - revokedAt)
    const ended = endedAt[kind]
    if (status === 200 && ended !== undefined && sentAt >= ended)
      endedAllowedUpTo[kind] = Math.max(endedAllowedUpTo[kind] ?? 0, sentAt - ended)
    if (verdict !== undefined) {
      wrongCount++
      const key = `${kind}: ${verdict.replace(/\d+ ms/, 'n ms')}`
      if (!wrong.has(key)) wrong.set(key, `${kind} in ${sentPhase} at ${((sentAt - started) / 1000).toFixed(1)}s: ${verdict}`)
    }
  }
}

function rssMb(pid: number): number {
  const line = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  return Number(line?.[1] ?? 0) / 1024
}

const workers = Array.from({ length: CONCURRENCY }, (_, i) => worker(i))
// Warm-up (service up, not part of SOAK_SECONDS): caches, JIT and heaps reach their working size.
await sleep(WARM_UP_MS)
const rssStart = gates.map((gate) => rssMb(gate.child.pid!))
await runPhases()
await sleep(SETTLE_MS)
const rssEnd = gates.map((gate) => rssMb(gate.child.pid!))
loading = false
await Promise.all(workers)
agent.destroy()

// ---- Shutdown ----
const closed = await Promise.all(
  gates.map(
    (gate) =>
      new Promise<{ unhandled: number; code: number | null }>((resolve) => {
        let unhandled = 0
        gate.child.on('message', (message: { type: string; unhandled?: number }) => {
          if (message.type === 'closed') unhandled = message.unhandled ?? 0
        })
        gate.child.once('exit', (code) => resolve({ unhandled, code }))
        gate.child.send({ type: 'exit' })
      }),
  ),
)
const emulatorCount = emulator.count()
// The group service's first 401s after the revocation (only revoked tokens get one here): when
// the first comes back, the gate that asked revokes the token across the fleet.
const upstream401s = emulator.requests
  .filter((entry) => entry.status === 401 && revokedAt !== undefined && entry.at >= revokedAt)
  .slice(0, 3)
  .map((entry) => ({
    msAfterRevocation: entry.at - revokedAt!,
    path: entry.path.replace(/\/groups\/me\/groups\/.+$/, '/groups/me/groups/{id}'),
  }))
await nginx.stop()
await app.close()
await redis.stop()
await emulator.close()

// ---- Overall verdicts ----
if (wrongCount > 0) failures.push(`${wrongCount} wrong answers, e.g. ${[...wrong.values()].slice(0, 12).join('; ')}`)
closed.forEach((gate, i) => {
  if (gate.code !== 0) failures.push(`gate ${i + 1} exited with ${gate.code}`)
  if (gate.unhandled > 0) failures.push(`gate ${i + 1}: ${gate.unhandled} unhandled rejection(s)`)
})
rssStart.forEach((start, i) => {
  const growth = rssEnd[i]! - start
  if (growth > RSS_BOUND_MB) failures.push(`gate ${i + 1} RSS grew by ${growth.toFixed(1)} MB (bound ${RSS_BOUND_MB} MB)`)
})
const statuses: Record<string, number> = {}
for (const row of Object.values(counts.byKind))
  for (const [status, n] of Object.entries(row)) statuses[status] = (statuses[status] ?? 0) + n
if (counts.requests < SECONDS * 20) failures.push(`only ${counts.requests} requests: the load did not run`)
if (!statuses['200'] || !statuses['403'] || !statuses['503']) failures.push('expected 200s, 403s and 503s')
if (!(counts.byKind['revoked-bearer']?.['401'] ?? 0)) failures.push('the revoked token never got a 401: the revocation did not happen')
for (const kind of ['signedout-cookie', 'logout-cookie'] as const) {
  const row = counts.byKind[kind] ?? {}
  if (!row['200'] || !((row['302'] ?? 0) + (row['401'] ?? 0))) failures.push(`${kind}: expected 200s before its end and 302s after`)
}

const EXPECTED_NGINX_ERROR = 'auth request unexpected status: 503'
const nginxErrorLines = readFileSync(nginxErrorLog, 'utf8')
  .split('\n')
  .filter((line) => line !== '')
console.log(
  JSON.stringify(
    {
      seconds: Math.round((Date.now() - started) / 1000),
      node: process.version,
      phaseMs: PHASE_MS,
      requests: counts.requests,
      statuses,
      byKind: counts.byKind,
      byPhase: counts.byPhase,
      redisFaults,
      socketErrors,
      firstSocketError: firstSocketError ?? null,
      nginxErrorLogLines: nginxErrorLines.length,
      revocation: { graceMs: TTL_MS + GRACE_SLACK_MS, lastAllowedMsAfter: revokedAllowedUpTo ?? null, upstream401s },
      endedSessions: { graceMs: ENDED_GRACE_MS, lastAllowedMsAfter: endedAllowedUpTo },
      emulatorRequests: emulatorCount,
      rss: gates.map((_, i) => ({ start: `${rssStart[i]!.toFixed(1)} MB`, end: `${rssEnd[i]!.toFixed(1)} MB` })),
      failures,
    },
    null,
    2,
  ),
)
if (failures.length > 0) {
  // Each 503 the gate answers is a line of nginx's (expected in faults): the others tell what broke.
  const lines = nginxErrorLines.filter((line) => !line.includes(EXPECTED_NGINX_ERROR))
  console.log(
    `nginx's error log (${nginxErrorLog}): ${nginxErrorLines.length - lines.length} lines of 503s from the gate, ` +
      `${lines.length} others, the last 40:\n${lines.slice(-40).join('\n')}`,
  )
} else rmSync(dirname(nginxErrorLog), { recursive: true, force: true })
process.exit(failures.length === 0 ? 0 : 1)
