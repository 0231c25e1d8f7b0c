/**
 * Warnings at a resolver's creation, for mistakes that cost only in production and would
 * otherwise go unnoticed:
 *
 * - `allowInsecureHttp: true` while `NODE_ENV` is `production`: every bearer token may then
 *   travel in clear text. One warning per resolver, when it is created.
 * - Resolvers created per request (a `createGuard(...)` inside a handler): each one starts
 *   with an empty cache, its own calls and its own connections to the group service, so
 *   nothing is ever cached and connections pile up. Detected by a module-level count of the
 *   resolvers created for one `baseUrl`: {@link PER_REQUEST_CREATIONS} of them within
 *   {@link PER_REQUEST_WINDOW} ms is one warning for that `baseUrl` (never repeated), naming
 *   the fix. An application makes a handful per `baseUrl` at start-up (one per guard, per
 *   service, per reload); the count keeps at most {@link MAX_COUNTED_BASE_URLS} addresses.
 *   Not counted while `NODE_ENV` is `test`: a test suite makes a guard per test on purpose.
 *
 * Both go through the resolver's `logger` when it has one, else `process.emitWarning`
 * (codes `VOOT_GUARD_INSECURE_HTTP` and `VOOT_GUARD_PER_REQUEST`).
 *
 * @module
 */
import { emitResolverWarning } from './misconfiguration.js'

/** Resolvers for one `baseUrl` within {@link PER_REQUEST_WINDOW} that are taken for resolvers made per request. */
export const PER_REQUEST_CREATIONS = 50
/** The window, in milliseconds, in which {@link PER_REQUEST_CREATIONS} resolvers for one `baseUrl` warn. */
export const PER_REQUEST_WINDOW = 10_000
/** Addresses counted at once: the oldest is forgotten first. */
export const MAX_COUNTED_BASE_URLS = 64

/** The `code` of the warning for resolvers created per request (`process.emitWarning`). */
export const PER_REQUEST_WARNING = 'VOOT_GUARD_PER_REQUEST'
/** The `code` of the warning for `allowInsecureHttp` in production (`process.emitWarning`). */
export const INSECURE_HTTP_WARNING = 'VOOT_GUARD_INSECURE_HTTP'

interface Creations {
  /** When the current window began. */
  since: number
  count: number
  warned: boolean
}

// Per process (per module instance), for every resolver of the package: the detection is
// about how many an application makes, which no single resolver can see.
const creations = new Map<string, Creations>()

/**
 * Counts a resolver created for `baseUrl` at `now` (the wall clock, not the resolver's `now`
 * option, which tests fake), and warns once per `baseUrl` when they look created per request.
 */
export function countResolverCreation(baseUrl: string, logger: { warn(message: string): void } | undefined, now = Date.now()): void {
  if (nodeEnv() === 'test') return
  let entry = creations.get(baseUrl)
  if (entry === undefined) {
    if (creations.size >= MAX_COUNTED_BASE_URLS) creations.delete(creations.keys().next().value as string)
    entry = { since: now, count: 0, warned: false }
    creations.set(baseUrl, entry)
  }
  if (now - entry.since > PER_REQUEST_WINDOW) {
    entry.since = now
    entry.count = 0
  }
  entry.count++
  if (entry.count < PER_REQUEST_CREATIONS || entry.warned) return
  entry.warned = true
  emitResolverWarning(
    `voot-guard: ${entry.count} resolvers for ${baseUrl} were created within ${PER_REQUEST_WINDOW / 1000} seconds: guards (createGuard) or resolvers look created per request, ` +
      'so every request starts with an empty cache and makes its own calls and connections to the group service. ' +
      'Create the guard once, at start-up, and use it for every request (several guards can share one resolver through the `resolver` option).',
    PER_REQUEST_WARNING,
    logger,
  )
}

/**
 * Warns, once for this resolver, when `allowInsecureHttp` is on while `NODE_ENV` is
 * `production`.
 */
export function warnInsecureHttpInProduction(
  allowInsecureHttp: unknown,
  baseUrl: string,
  logger: { warn(message: string): void } | undefined,
): void {
  if (allowInsecureHttp !== true || nodeEnv() !== 'production') return
  emitResolverWarning(
    `voot-guard: allowInsecureHttp is on with NODE_ENV=production (baseUrl ${baseUrl}): bearer tokens may travel in clear text over plain http:. ` +
      'Use an https: baseUrl and remove allowInsecureHttp; it is meant for a test rig inside a trusted network.',
    INSECURE_HTTP_WARNING,
    logger,
  )
}

/**
 * `NODE_ENV`, read from globalThis: a runtime without Node's globals (Workers, Vercel's Edge)
 * has no `process`, and Deno's throws `NotCapable` without `--allow-env`: then there is none.
 */
function nodeEnv(): string | undefined {
  try {
    return (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env?.['NODE_ENV']
  } catch {
    return undefined
  }
}
