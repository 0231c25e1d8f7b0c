/**
 * Figure 2's server CPU per request: what the guard adds to a request inside a server,
 * from the server's own CPU time (`process.cpuUsage()`, user and system apart) around each
 * slice of the interleaved rounds, guarded against the no-op middleware of the same round.
 * Unlike throughput this does not move with how much of a core the server was given, and
 * unlike the in-server timing it includes everything the guard makes the process do.
 *
 * The sum of user and system time is exact (the scheduler's runtime); Linux built with
 * tick-based CPU accounting splits it between user and system by sampling at its tick, so
 * the split of one slice is coarse and only its median over rounds is read.
 *
 * @module
 */
import { median } from '../stats.js'
import type { Row } from '../table.js'
import type { RoundResults } from './throughput.js'

/** The name of the burn control's route in the rounds (see `servers/burn.ts`). */
export const BURN_CONTROL = 'burn control'

/** Server CPU per request, µs. */
export interface CpuPerRequest {
  readonly user: number
  readonly system: number
  readonly total: number
}

/** One framework's server CPU per request, medians over the interleaved rounds. */
export interface GuardCpu {
  readonly rounds: number
  readonly bare: CpuPerRequest
  /** The bare request {@link share} is of (the same as {@link bare} unless `guardCpu` was given other rounds). */
  readonly shareBare: CpuPerRequest
  readonly noop: CpuPerRequest
  readonly guarded: CpuPerRequest
  /** Guarded minus no-op, round by round (both measured seconds apart), then the median. */
  readonly guard: CpuPerRequest
  /** The burn control (a middleware that spins and does nothing else, see `servers/burn.ts`), when it ran. */
  readonly burn: CpuPerRequest | undefined
  /** What one call of the burn control's spin costs, µs, measured in the server (`measureBurn`), when it ran. */
  readonly burnCost: number | undefined
  /**
   * The guard's own CPU per request, µs: {@link burnCost} plus guarded − burn (total, round
   * by round), which cancels what the closed loop adds to any middleware's work; without
   * the burn control, guarded − no-op in user time.
   */
  readonly own: number
  /** {@link own} as a share of {@link shareBare}'s CPU, 0–1. */
  readonly share: number
  /** Times the load generator slept per request (see `ClosedLoopResult`), no-op and guarded. */
  readonly loadWakeups: { readonly noop: number; readonly guarded: number }
  /** Share of a core the server used, median over the rounds of every route: below about 0.9 it waited on the load generator. */
  readonly serverBusy: number
}

function perRequest(results: RoundResults, name: string): CpuPerRequest[] {
  return (results.get(name) ?? []).map((result) => ({
    user: result.userUsPerRequest,
    system: result.systemUsPerRequest,
    total: result.cpuUsPerRequest,
  }))
}

function medians(list: readonly CpuPerRequest[]): CpuPerRequest {
  return {
    user: median(list.map((cpu) => cpu.user)),
    system: median(list.map((cpu) => cpu.system)),
    total: median(list.map((cpu) => cpu.total)),
  }
}

/**
 * The server CPU per request of `bare`, `no-op middleware` and `voot-guard`, and what the
 * guard adds. `burnCost`: what one call of the burn control's spin costs in that server
 * (`measureBurn`), required when the rounds have a burn control. `shareOf`: the rounds
 * whose bare request the guard's share is of (default the same rounds); figure 2 measures
 * the guard under a saturating load and takes its share of a bare request under the usual one.
 */
export function guardCpu(results: RoundResults, burnCost: number | undefined, shareOf: RoundResults = results): GuardCpu {
  const bare = perRequest(results, 'bare')
  const noop = perRequest(results, 'no-op middleware')
  const guarded = perRequest(results, 'voot-guard')
  const differences = guarded.map((cpu, i) => {
    const base = noop[i] ?? { user: Number.NaN, system: Number.NaN, total: Number.NaN }
    return { user: cpu.user - base.user, system: cpu.system - base.system, total: cpu.total - base.total }
  })
  const guard = medians(differences)
  const bareMedian = medians(bare)
  const shareBare = shareOf === results ? bareMedian : medians(perRequest(shareOf, 'bare'))
  const burning = perRequest(results, BURN_CONTROL)
  if (burning.length > 0 && !(burnCost !== undefined && burnCost > 0))
    throw new Error('guardCpu: the rounds have a burn control, but not its measured cost')
  const own =
    burning.length === 0
      ? guard.user
      : (burnCost as number) + median(guarded.map((cpu, i) => cpu.total - (burning[i]?.total ?? Number.NaN)))
  return {
    rounds: differences.length,
    bare: bareMedian,
    shareBare,
    noop: medians(noop),
    guarded: medians(guarded),
    guard,
    burn: burning.length === 0 ? undefined : medians(burning),
    burnCost: burning.length === 0 ? undefined : burnCost,
    own,
    share: own / shareBare.total,
    loadWakeups: {
      noop: median((results.get('no-op middleware') ?? []).map((result) => result.loadWakeupsPerRequest)),
      guarded: median((results.get('voot-guard') ?? []).map((result) => result.loadWakeupsPerRequest)),
    },
    serverBusy: median([...results.values()].flat().map((result) => result.serverBusy)),
  }
}

/** Issue 33's goal: the guard's own CPU at most this share of a bare request's. */
export const GUARD_SHARE_GOAL = 0.05
/** ... and at most this many times figure 1 (the warm decision in a loop), where asked. */
export const FIGURE_1_FACTOR_GOAL = 1.5
/**
 * Below this share of a core the server was not the bottleneck: it waited for work and
 * for the scheduler (a machine busy with other work), so its CPU per request measured
 * wake-ups and cold caches rather than the routes, and the row gives no verdict.
 */
export const SATURATED = 0.8

const f = (us: number): string => (Number.isFinite(us) ? us.toFixed(2) : 'n/a')

/** How the rounds of a {@link guardCpuRow} were loaded. */
export type CpuLoad = 'one at a time' | 'saturating'

/**
 * Figure 2's row of server CPU per request. `figure1Us` (the warm decision in a loop, same
 * run) adds the factor; `factorGoal` makes that factor a goal too (Fastify's). Rounds
 * loaded one request at a time per connection give the row without a verdict: their system
 * time moves with the closed loop's wake-ups (see `SATURATING_LOAD` in profile.ts); the
 * saturating rounds' row carries the goal.
 */
// eslint-disable-next-line max-params -- the row's inputs
export function guardCpuRow(label: string, cpu: GuardCpu, figure1Us: number | undefined, factorGoal: boolean, load: CpuLoad): Row {
  const factor = figure1Us === undefined ? Number.NaN : cpu.own / figure1Us
  const shareMet = cpu.share <= GUARD_SHARE_GOAL
  const factorMet = !factorGoal || figure1Us === undefined || factor <= FIGURE_1_FACTOR_GOAL
  const burn = cpu.burn === undefined ? '' : `, burn control ${f(cpu.burn.total)}, its spin ${f(cpu.burnCost ?? Number.NaN)} µs`
  const saturating = load === 'saturating'
  const shareOfOther = cpu.shareBare !== cpu.bare
  return {
    figure: '2',
    measure:
      `${label}: server CPU per request, ${saturating ? 'under a saturating load (8 pipelined requests per connection)' : "one request at a time per connection (includes the closed loop's wake-ups; no verdict)"} ` +
      `(median of ${cpu.rounds} interleaved rounds): guarded − no-op, user and system; ` +
      `the guard's own CPU (${cpu.burn === undefined ? 'guarded − no-op, user' : "the burn control's spin, as measured in the server, + guarded − burn control"}) as a share of a bare request` +
      (shareOfOther ? ' (one at a time, as in the throughput rounds)' : '') +
      (figure1Us === undefined ? '' : ' and against figure 1'),
    result:
      `user ${f(cpu.guard.user)} µs, system ${f(cpu.guard.system)} µs (total ${f(cpu.guard.total)}); own ${f(cpu.own)} µs = ${(100 * cpu.share).toFixed(1)} % ` +
      `of a bare request's ${f(cpu.shareBare.total)} µs (user ${f(cpu.shareBare.user)}, system ${f(cpu.shareBare.system)}` +
      `${shareOfOther ? `; bare here ${f(cpu.bare.total)}` : ''}; no-op ${f(cpu.noop.total)}, guarded ${f(cpu.guarded.total)}${burn})` +
      (figure1Us === undefined ? '' : `; ${factor.toFixed(2)}× figure 1 (${f(figure1Us)} µs)`) +
      `; server busy ${cpu.serverBusy.toFixed(2)}; load generator slept ${cpu.loadWakeups.guarded.toFixed(3)} vs ${cpu.loadWakeups.noop.toFixed(3)} times per request` +
      (saturating && cpu.serverBusy < SATURATED ? ' (the server was not saturated: no verdict; see --realtime)' : ''),
    target: saturating ? `≤ ${100 * GUARD_SHARE_GOAL} %${factorGoal ? `, ≤ ${FIGURE_1_FACTOR_GOAL}× figure 1` : ''}` : '',
    met: !saturating || cpu.serverBusy < SATURATED ? undefined : shareMet && factorMet,
  }
}
