/**
 * Reading a V8 CPU profile (`node --cpu-prof`) of a server under load: where its CPU time
 * went per request, by kind of code, within the window the load ran.
 *
 * @module
 */
import { readFileSync } from 'node:fs'

// The compiled tree's root (see build.ts), wherever `VOOT_BENCH_BUILD_DIR` put it: this
// module is its `bench/cpu-profile-analysis.js`.
const BUILD_ROOT = new URL('..', import.meta.url).href

interface CallFrame {
  readonly functionName: string
  readonly url: string
  readonly lineNumber: number
}

interface ProfileNode {
  readonly id: number
  readonly callFrame: CallFrame
  readonly children?: readonly number[]
}

interface CpuProfile {
  readonly nodes: readonly ProfileNode[]
  readonly startTime: number
  readonly endTime: number
  readonly samples: readonly number[]
  readonly timeDeltas: readonly number[]
}

/** Where one route's CPU time went, in µs per request. */
export interface ProfileBreakdown {
  /** Sampled CPU time in the window (idle excluded), µs per request. */
  readonly busyUs: number
  /** µs per request by kind of code (see {@link kindOf}), largest first. */
  readonly kinds: ReadonlyArray<readonly [string, number]>
  /** The functions with the most self time, µs per request. */
  readonly top: ReadonlyArray<readonly [string, number]>
  /** Self time of voot-guard's own functions, µs per request. */
  readonly vootGuard: ReadonlyArray<readonly [string, number]>
}

/**
 * The kind of code a frame belongs to: voot-guard, node:crypto (only the cache key's
 * SHA-256 uses it here), the framework, Node's HTTP stack, the garbage collector, system
 * calls, and so on.
 */
function kindOf(frame: CallFrame): string {
  const { functionName, url } = frame
  if (functionName === '(garbage collector)') return 'garbage collector'
  if (functionName === '(program)') return 'V8 and Node native (program)'
  const ours = url.startsWith(BUILD_ROOT) ? url.slice(BUILD_ROOT.length) : undefined
  if (ours !== undefined) return ours.startsWith('bench/') ? 'the benchmark app (handlers, timing)' : 'voot-guard'
  if (/node_modules\/(express|router)\//.test(url)) return 'Express and its router'
  if (url.includes('node_modules/')) return `other packages (${url.split('node_modules/').pop()?.split('/')[0] ?? '?'})`
  if (url.startsWith('node:internal/crypto/')) return 'node:crypto (the SHA-256 of the cache key)'
  if (url === 'node:diagnostics_channel') return 'node:diagnostics_channel'
  if (url.startsWith('node:')) return /http|stream|net/.test(url) ? "Node's HTTP, streams and sockets" : 'other Node internals'
  if (functionName === 'writev' || functionName === 'writeUtf8String' || functionName === 'writeLatin1String')
    return 'socket writes (native)'
  return 'other native'
}

function frameName(frame: CallFrame): string {
  const where = (frame.url.startsWith(BUILD_ROOT) ? frame.url.slice(BUILD_ROOT.length) : frame.url).replace(/^.*node_modules\//, '')
  return `${frame.functionName === '' ? '(anonymous)' : frame.functionName} ${where}:${frame.lineNumber + 1}`
}

function add(map: Map<string, number>, key: string, value: number): void {
  map.set(key, (map.get(key) ?? 0) + value)
}

function perRequest(map: ReadonlyMap<string, number>, requests: number, limit: number): Array<readonly [string, number]> {
  return [...map]
    .sort((a, b) => b[1] - a[1])
    .slice(0, limit)
    .map(([key, us]) => [key, us / requests] as const)
}

/**
 * Breaks down the samples of `file` taken between `fromUs` and `toUs` (the profile's clock,
 * which is `process.hrtime` in µs) over `requests` requests.
 */
export function breakDown(file: string, window: { fromUs: number; toUs: number }, requests: number): ProfileBreakdown {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]))
  const kinds = new Map<string, number>()
  const self = new Map<string, number>()
  const ours = new Map<string, number>()
  let busy = 0
  let at = profile.startTime
  for (let i = 0; i < profile.samples.length; i++) {
    at += profile.timeDeltas[i] ?? 0
    // A sample's time is the gap to the next one.
    const duration = profile.timeDeltas[i + 1] ?? 0
    const node = nodes.get(profile.samples[i] ?? -1)
    if (node === undefined || at < window.fromUs || at > window.toUs) continue
    if (node.callFrame.functionName === '(idle)') continue
    busy += duration
    const kind = kindOf(node.callFrame)
    add(kinds, kind, duration)
    add(self, frameName(node.callFrame), duration)
    if (kind === 'voot-guard') add(ours, frameName(node.callFrame), duration)
  }
  return {
    busyUs: busy / requests,
    kinds: perRequest(kinds, requests, Infinity),
    top: perRequest(self, requests, 12),
    vootGuard: perRequest(ours, requests, 12),
  }
}
