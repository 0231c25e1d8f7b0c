/**
 * `node:diagnostics_channel` where the runtime has it (Node, Deno, Bun, Workers with
 * `nodejs_compat`), and channels that never have subscribers where it does not (Workers
 * without the flag, Vercel's Edge, browsers). It is looked up at run time through
 * `process.getBuiltinModule`, not imported, so that a bundle for a runtime without Node's
 * modules has nothing to resolve and loads without an error.
 *
 * @module
 */
import type * as DiagnosticsChannel from 'node:diagnostics_channel'

/** The part of a `TracingChannel` that voot-guard uses. */
export type TracingChannelLike<Context extends object> = Pick<
  DiagnosticsChannel.TracingChannel<unknown, Context>,
  'hasSubscribers' | 'start' | 'tracePromise' | 'traceSync'
>

/** The part of a plain `Channel` that voot-guard uses. */
export type ChannelLike = Pick<DiagnosticsChannel.Channel, 'hasSubscribers' | 'publish'>

const builtin = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process?.getBuiltinModule?.(
  'node:diagnostics_channel',
) as typeof DiagnosticsChannel | undefined

const silent = { hasSubscribers: false, publish() {} }

/**
 * The tracing channel `name`, or one that never has subscribers where the runtime has no
 * `diagnostics_channel`.
 */
export function tracingChannel<Context extends object>(name: string): TracingChannelLike<Context> {
  if (builtin !== undefined) {
    const made = builtin.tracingChannel<unknown, Context>(name)
    if (typeof made.hasSubscribers === 'boolean') return made
    // Bun's TracingChannel lacks `hasSubscribers` (Node added it in 20.13): derived from the
    // five channels it is made of, so that tracing is not silently off there.
    return Object.defineProperty(made, 'hasSubscribers', {
      get: () =>
        made.start.hasSubscribers ||
        made.end.hasSubscribers ||
        made.asyncStart.hasSubscribers ||
        made.asyncEnd.hasSubscribers ||
        made.error.hasSubscribers,
    })
  }
  // Callers ask `hasSubscribers` first; the trace methods only run the work, for safety.
  const inert = {
    hasSubscribers: false,
    start: silent,
    tracePromise: (fn: () => unknown) => fn(),
    traceSync: (fn: () => unknown) => fn(),
  }
  return inert as unknown as TracingChannelLike<Context>
}

/**
 * The plain channel `name`, or one that never has subscribers where the runtime has no
 * `diagnostics_channel`.
 */
export function channel(name: string): ChannelLike {
  return builtin === undefined ? silent : builtin.channel(name)
}
