/**
 * One measured operation of figure 1, shared by the hot-path suite and its subscriber
 * rounds.
 *
 * @module
 */

/** One measured operation. */
export interface HotPathFigure {
  readonly name: string
  /** Median nanoseconds per operation over the batches. */
  readonly ns: number
  /** Fastest batch, ns per operation. */
  readonly bestNs: number
}
