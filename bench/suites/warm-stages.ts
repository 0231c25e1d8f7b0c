/**
 * Figure 2's stage row: where the guard's time goes inside a server. The Fastify bench
 * server has one timed hook per step of the warm path, each cut after its step (the header
 * read; + the token; + the digest; + the decision; the guard core; the whole guard), so the
 * difference between two hooks is one step's time in the server, with the CPU caches and
 * branch predictors as a real request leaves them. Figure 1 runs the same steps in a loop.
 *
 * @module
 */
import type { TimingSummary } from '../servers/timings.js'
import type { Row } from '../table.js'

/** The stage hooks, by their route under `/timed/stage/` and their timing name. */
export const WARM_STAGES = ['header', 'token', 'digest', 'decision', 'core'] as const

/** One of the {@link WARM_STAGES}. */
export type WarmStage = (typeof WARM_STAGES)[number]

/** Timing name of a stage hook. */
export const stageName = (stage: WarmStage): string => `stage: ${stage}`

/** The time of each step inside the server, µs (p50 differences). */
export interface WarmStages {
  /** `authorizationOf(request.raw)`: the Authorization header read from the raw headers. */
  readonly header: number
  /** The token cut out of the header as the guard reads it (`bearerCandidate`: the scheme checked, the characters only on a miss; `extractBearerToken` before issue 41). */
  readonly token: number
  /** The token's digest (the in-process cache key's part that stands for it). */
  readonly digest: number
  /** The resolver's warm decision (`checkAt`, `checkNow` before it), less its digest: the clock, the lookup, the rules or the remembered verdict, the counters. */
  readonly decision: number
  /** The guard core around it (`authorizeNow`: the credentials, the request's context). */
  readonly core: number
  /** The adapter around the core (the flow's step, `request.voot`, `done`). */
  readonly adapter: number
  /** The whole guard, p50 minus the timed no-op's. */
  readonly guard: number
}

/** The steps from the timings of the stage hooks, the guard and the no-op. */
export function warmStages(timed: Readonly<Record<string, TimingSummary>>): WarmStages {
  const p50 = (name: string): number => timed[name]?.p50 ?? Number.NaN
  const noop = p50('no-op middleware')
  const [header, token, digest, decision, core] = WARM_STAGES.map((stage) => p50(stageName(stage)) - noop) as [
    number,
    number,
    number,
    number,
    number,
  ]
  const guard = p50('voot-guard') - noop
  const digestStep = digest - token
  return {
    header,
    token: token - header,
    digest: digestStep,
    decision: decision - token - digestStep,
    core: core - decision,
    adapter: guard - core,
    guard,
  }
}

const f = (us: number): string => us.toFixed(2)

/** The stage row of figure 2, against figure 1 (the same warm decision in a loop) when given. */
export function warmStagesRow(label: string, stages: WarmStages, figure1Us: number | undefined): Row {
  const { header, token, digest, decision, core, adapter, guard } = stages
  return {
    figure: '2',
    measure: `${label}: the guard's warm path inside the server, step by step (p50 of timed hooks, each cut after its step, minus a timed no-op)`,
    result:
      `header read ${f(header)} µs, token check ${f(token)}, digest ${f(digest)}, decision ${f(decision)} (the resolver less its digest), ` +
      `guard core ${f(core)}, adapter ${f(adapter)}: the guard ${f(guard)} µs` +
      (figure1Us === undefined ? '' : `; figure 1 in a loop ${f(figure1Us)} µs (${(guard / figure1Us).toFixed(2)}×)`),
    target: '',
    met: undefined,
  }
}
