/**
 * What `npm run bench` runs: the full and quick profiles, and the command-line choices
 * (`--quick`, `--rounds N`, `--only 1,5,8`, `--frameworks fastify,hono`).
 *
 * @module
 */
import type { RoundSettings } from './suites/throughput.js'

export interface Profile {
  readonly name: 'quick' | 'full'
  readonly hotPath: { operations: number; batches: number }
  /** Figure 2: the bare and the guarded route of each framework, alternating. */
  readonly pair: RoundSettings
  /**
   * Figure 2's server CPU per request: the bare, no-op, guarded and burn routes again,
   * under a load that keeps the server saturated ({@link SATURATING_LOAD}), for the guard's
   * own CPU (see `suites/server-cpu.ts`).
   */
  readonly cpu: RoundSettings
  /** Figures 2/3 cross-check: the middlewares timed inside the server (see servers/timings.ts). */
  readonly timed: RoundSettings
  /** Figure 3: every route with the peers, in rounds of their own; `undefined`: the peers join the pair's rounds. */
  readonly peerRounds: RoundSettings | undefined
  /** Peer routes to load (all when undefined). */
  readonly peers: readonly string[] | undefined
  readonly otherFrameworks: boolean
  /** Figure 4: rounds, and tokens issued per slice (more than a slice can use; at most 9,000). */
  readonly cold: { settings: RoundSettings; batch: number } | undefined
  readonly coalescing: number
  readonly latency: { latencies: readonly number[]; missPercents: readonly number[]; duration: number } | undefined
  /** Figure 7: `shared` (every token the same answer) and/or `distinct` (nothing shared). */
  readonly memory: { tokens: number; max: number; varieties: readonly ('shared' | 'distinct')[] }
  /** Figure 8: the deadline, hanging requests (`concurrency` at a time) and sequential refused ones. */
  readonly failures: { timeout: number; hang: { requests: number; concurrency: number }; refused: number }
}

// 50 connections, no pipelining: enough to keep one server core busy, and what browsers
// and proxies actually send (pipelining would flatter the cheaper routes).
export const LOAD = { connections: 50, pipelining: 1 }

// Figure 2's server CPU rounds: 8 requests in flight per connection, so that the server
// always has the next request in its socket buffers and never sleeps between requests.
// Without it, whatever a route adds also makes the load generator wait for answers more
// often, and each answer that wakes it costs the server kernel time: in one-request-at-a-
// time rounds the guarded route's system time moved by ±1 µs from run to run though the
// guard makes no system call, which buried its 0.4 µs of user time. Pipelined, the guarded
// and no-op routes' system time is the same (BENCHMARKS.md, issue 33).
export const SATURATING_LOAD = { connections: 50, pipelining: 8 }

const FULL: Profile = {
  name: 'full',
  hotPath: { operations: 200_000, batches: 9 },
  // 32 rounds: one-second slices on this VM vary ±20 % (see BENCHMARKS.md, Noise), so the
  // median of 16 was still ±6 points; 32 halve the variance for 2.5 more minutes.
  pair: { rounds: 32, duration: 1, warmup: 2, ...LOAD },
  cpu: { rounds: 24, duration: 1, warmup: 1, ...SATURATING_LOAD },
  timed: { rounds: 2, duration: 2, warmup: 0.5, ...LOAD },
  peerRounds: { rounds: 5, duration: 2.5, warmup: 1, ...LOAD },
  peers: undefined,
  otherFrameworks: true,
  cold: { settings: { rounds: 5, duration: 1, warmup: 1, ...LOAD }, batch: 9000 },
  coalescing: 1000,
  latency: { latencies: [20, 100], missPercents: [0, 1, 10], duration: 10 },
  memory: { tokens: 1_000_000, max: 100_000, varieties: ['shared', 'distinct'] },
  failures: { timeout: 1000, hang: { requests: 50, concurrency: 10 }, refused: 500 },
}

const QUICK: Profile = {
  name: 'quick',
  hotPath: { operations: 100_000, batches: 5 },
  pair: { rounds: 4, duration: 1, warmup: 0.5, ...LOAD },
  cpu: { rounds: 12, duration: 1, warmup: 0.5, ...SATURATING_LOAD },
  timed: { rounds: 1, duration: 1, warmup: 0.3, ...LOAD },
  peerRounds: undefined,
  peers: ['/peer/jwt-rs256-keyobject'],
  otherFrameworks: false,
  cold: undefined,
  coalescing: 1000,
  latency: undefined,
  memory: { tokens: 120_000, max: 100_000, varieties: ['distinct'] },
  failures: { timeout: 1000, hang: { requests: 20, concurrency: 10 }, refused: 100 },
}

const chosen = process.argv.includes('--quick') ? QUICK : FULL
// `--rounds N` sets figure 2's rounds (throughput and server CPU) (more for a tighter median: the error falls with √N).
const roundsArgument = process.argv.includes('--rounds') ? Number(process.argv[process.argv.indexOf('--rounds') + 1]) : undefined
if (roundsArgument !== undefined && !(Number.isInteger(roundsArgument) && roundsArgument >= 1))
  throw new Error('--rounds needs a positive integer')
export const profile: Profile =
  roundsArgument === undefined
    ? chosen
    : { ...chosen, pair: { ...chosen.pair, rounds: roundsArgument }, cpu: { ...chosen.cpu, rounds: roundsArgument } }
// `--only 1,5,8` runs some figures (for working on one of them); the default is all of them.
const onlyArgument = process.argv[process.argv.indexOf('--only') + 1]
const only = process.argv.includes('--only') && onlyArgument !== undefined ? new Set(onlyArgument.split(',')) : undefined
export const wanted = (...figures: string[]): boolean => only === undefined || figures.some((figure) => only.has(figure))
// `--frameworks fastify,hono` loads only those servers in figure 2. A name that is not one
// of them is refused: misspelt (`koa` for `koa3`), it would silently print no rows.
const FRAMEWORKS = ['express5', 'express4', 'koa3', 'fastify', 'hono', 'nest-express', 'node-http']
const frameworksArgument = process.argv[process.argv.indexOf('--frameworks') + 1]
export const frameworks =
  process.argv.includes('--frameworks') && frameworksArgument !== undefined ? new Set(frameworksArgument.split(',')) : undefined
for (const name of frameworks ?? []) {
  if (!FRAMEWORKS.includes(name))
    throw new Error(`--frameworks: unknown ${JSON.stringify(name)}; the frameworks are ${FRAMEWORKS.join(', ')}`)
}
export const wantedFramework = (name: string): boolean => frameworks === undefined || frameworks.has(name)
