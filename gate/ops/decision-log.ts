/**
 * The decision log (`log.decisions`): one JSON line per check, for the operator's record of
 * who was let in, who was refused and why. Denials and errors are always written; allowed
 * checks all, none, or a sampled fraction (`log.allowed`). A line holds no token and no
 * group: the reason is a code (`not_member`, `role_too_low`, `no_rule`, ...), and the user is
 * the `sub` or, with `log.user: hash`, a keyed hash of it.
 *
 * Writing never holds a check up: a file is appended to through a stream, and when the disk
 * cannot keep up, lines beyond a bounded backlog are dropped and counted (the
 * `voot_gate_decision_log_dropped_total` metric), never buffered without end.
 *
 * @module
 */
import { createHmac, hkdfSync, randomBytes } from 'node:crypto'
import { createWriteStream, type WriteStream } from 'node:fs'
import type { DecisionLogSettings } from '../config/types.js'
import type { CheckRecord } from './check-record.js'
import { createTierProbe, type TierProbe } from './decision-tier.js'

/** One line of the log. */
export interface DecisionLogLine {
  /** ISO 8601, UTC. */
  readonly time: string
  readonly protocol: string
  readonly host: string | null
  readonly method: string | null
  /** The original request's path as sent (not decoded), without its query. */
  readonly path: string | null
  readonly rule: string | null
  /** `allow`, `deny` (403), `signin` (401 or the sign-in redirect), `unavailable` (503), `invalid` (400), `error`. */
  readonly outcome: 'allow' | 'deny' | 'signin' | 'unavailable' | 'invalid' | 'error'
  readonly status: number
  readonly reason: string
  /** The `sub`, its keyed hash, or empty when unknown. */
  readonly user: string
  readonly ms: number
  /** The slowest tier the decision needed: `l1` (the in-process cache), `coalesced` (another check's lookup), `l2` (the shared tier), `upstream` (the group service); `null`: no decision was needed. */
  readonly tier: 'l1' | 'l2' | 'coalesced' | 'upstream' | null
  /** The check request's `X-Request-Id`, when it has a plain one. */
  readonly requestId: string | null
  /** With several group services only: the one the check's token went to (`null`: none was chosen). */
  readonly service?: string | null
}

/** The log: checks `run` through it, `record` for each answer, `close` when the gate stops. */
export interface DecisionLog {
  /** Runs a check so that its decision's tier is known when it is recorded. */
  readonly run: TierProbe['run']
  record(record: CheckRecord): void
  /** Lines dropped because the file could not keep up. */
  readonly dropped: number
  close(): Promise<void>
}

/** Where the log's lines go when the target is a standard stream (the CLI's io, or the process's). */
export interface DecisionLogOutput {
  readonly stdout: { write(text: string): unknown }
  readonly stderr: { write(text: string): unknown }
}

const OUTCOMES: Readonly<Record<number, DecisionLogLine['outcome']>> = {
  200: 'allow',
  302: 'signin',
  401: 'signin',
  403: 'deny',
  503: 'unavailable',
  400: 'invalid',
}
// A backlog of a few thousand lines: beyond it, the disk is not keeping up and lines are dropped.
const MAX_BACKLOG_BYTES = 1 << 20
const REQUEST_ID = /^[A-Za-z0-9._:@/+=-]{1,128}$/

function requestIdOf(record: CheckRecord): string | null {
  const value = record.req.headers['x-request-id']
  return typeof value === 'string' && REQUEST_ID.test(value) ? value : null
}

/**
 * Creates the decision log. `secrets` key the user hash (`log.user: hash`): the first of
 * them, through HKDF, so that hashes correlate across instances and restarts that share it;
 * without one, a random key per process.
 *
 * @example
 * ```ts
 * const log = createDecisionLog({ decisions: 'stdout', allowed: 1, user: 'sub' }, { output: process, secrets: [] })
 * createCheckHandler({ ...deps, observe: (record) => log.record(record) })
 * ```
 */
export function createDecisionLog(
  settings: DecisionLogSettings,
  options: { readonly output: DecisionLogOutput; readonly secrets: readonly string[]; readonly random?: () => number },
): DecisionLog {
  const random = options.random ?? Math.random
  const secret = options.secrets[0]
  const key =
    settings.user === 'hash' ? Buffer.from(hkdfSync('sha256', secret ?? randomBytes(32), 'voot-gate', 'decision-log user', 32)) : undefined
  const userOf = (sub: string) =>
    key === undefined || sub === '' ? sub : createHmac('sha256', key).update(sub).digest('base64url').slice(0, 22)

  const probe = createTierProbe()
  const target = settings.decisions
  // Opened by each gate (a reload opens it anew: what logrotate's move-and-HUP needs).
  let file: WriteStream | undefined = typeof target === 'object' ? createWriteStream(target.file, { flags: 'a', mode: 0o640 }) : undefined
  let dropped = 0
  // A failing file (a full disk, a removed directory) drops lines; the gate keeps deciding.
  file?.on('error', () => {
    file = undefined
  })

  function write(text: string): void {
    if (target === 'stdout') options.output.stdout.write(text)
    else if (target === 'stderr') options.output.stderr.write(text)
    else if (file !== undefined && file.writableLength < MAX_BACKLOG_BYTES) file.write(text)
    else dropped++
  }

  return {
    run: (check) => probe.run(check),
    record(record) {
      const { answer, original, rule } = record
      const outcome = OUTCOMES[answer.status] ?? 'error'
      if (outcome === 'allow' && !(settings.allowed >= 1 || (settings.allowed > 0 && random() < settings.allowed))) return
      const line: DecisionLogLine = {
        time: new Date().toISOString(),
        protocol: record.protocol,
        host: original?.host ?? null,
        method: original?.method ?? null,
        path: original === undefined ? null : original.target.replace(/[?#].*$/s, ''),
        rule: rule?.id ?? null,
        outcome,
        status: answer.status,
        reason: record.reason,
        user: userOf(record.user),
        ms: Math.round(record.ms * 100) / 100,
        tier: rule === undefined || rule.decision === 'anyone' ? null : (probe.tier() ?? null),
        requestId: requestIdOf(record),
        ...(record.service === undefined ? {} : { service: record.service }),
      }
      write(`${JSON.stringify(line)}\n`)
    },
    get dropped() {
      return dropped
    },
    close: () =>
      new Promise<void>((resolve) => {
        probe.close()
        if (file === undefined) resolve()
        else file.end(() => resolve())
      }),
  }
}
