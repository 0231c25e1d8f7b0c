/**
 * The proxies' table of the gate's benchmark: each auth path (nginx + gate, Apache +
 * mod_auth_openidc) against its front proxy alone in front of the same app, round by
 * round, and the two paths against each other. The CPU an auth path adds per request is
 * taken round by round (with − alone, per process role), then the median, so that a round
 * the shared machine slowed for every configuration alike does not count as a cost.
 *
 * @module
 */
import { median } from './stats.js'

/** The processes a request goes through: the front proxy, the gate (none for a module inside the proxy), the app. */
export const ROLES = ['proxy', 'gate', 'app'] as const
/** One of {@link ROLES}. */
export type Role = (typeof ROLES)[number]

/** One round of one configuration. */
export interface ProxyRound {
  readonly rps: number
  /** Non-2xx answers, socket errors and timeouts. */
  readonly failures: number
  /** Server CPU per request, µs, of each role's processes (0 where a configuration has none). */
  readonly us: Readonly<Record<Role, number>>
}

/** CPU per request, µs, by role and in all. */
export type RoleCpu = Readonly<Record<Role | 'total', number>>

/** An auth path against its proxy alone, medians of the rounds. */
export interface PathSummary {
  readonly rps: number
  readonly aloneRps: number
  /** `rps / aloneRps`. */
  readonly rpsRatio: number
  /** Server CPU per request with the auth step. */
  readonly cpu: RoleCpu
  /** The same, of the proxy alone. */
  readonly aloneCpu: RoleCpu
  /** What the auth step adds per request: with − alone, round by round, then the median. */
  readonly added: RoleCpu
  readonly failures: number
}

const total = (us: Readonly<Record<Role, number>>): number => ROLES.reduce((sum, role) => sum + us[role], 0)

function medianCpu(rounds: readonly ProxyRound[]): RoleCpu {
  const cpu = { total: median(rounds.map((round) => total(round.us))) } as Record<Role | 'total', number>
  for (const role of ROLES) cpu[role] = median(rounds.map((round) => round.us[role]))
  return cpu
}

/** Summarises an auth path; `alone[i]` and `withAuth[i]` are the same round. */
export function summarisePath(alone: readonly ProxyRound[], withAuth: readonly ProxyRound[]): PathSummary {
  if (alone.length !== withAuth.length || alone.length === 0) throw new Error('summarisePath needs as many rounds of each, at least one')
  const added = {
    total: median(withAuth.map((round, i) => total(round.us) - total((alone[i] as ProxyRound).us))),
  } as Record<Role | 'total', number>
  for (const role of ROLES) added[role] = median(withAuth.map((round, i) => round.us[role] - (alone[i] as ProxyRound).us[role]))
  const rps = median(withAuth.map((round) => round.rps))
  const aloneRps = median(alone.map((round) => round.rps))
  return {
    rps,
    aloneRps,
    rpsRatio: rps / aloneRps,
    cpu: medianCpu(withAuth),
    aloneCpu: medianCpu(alone),
    added,
    failures: [...alone, ...withAuth].reduce((sum, round) => sum + round.failures, 0),
  }
}

/** The gate's path against the module's, as the goals read them. */
export interface PathComparison {
  /** Requests per second, gate path / module path (goal: above 1). */
  readonly rps: number
  /** CPU added per request, gate path / module path (goal: at most 1.5). */
  readonly addedCpu: number
}

/** Compares the gate's path with the module's. */
export function comparePaths(gate: PathSummary, module: PathSummary): PathComparison {
  return { rps: gate.rps / module.rps, addedCpu: gate.added.total / module.added.total }
}

/** The configurations of a round in the order they run: each round starts one later, so no configuration is always first. */
export function roundOrder<T>(configurations: readonly T[], round: number): T[] {
  const start = round % Math.max(1, configurations.length)
  return [...configurations.slice(start), ...configurations.slice(0, start)]
}
