/**
 * One subscription to a tracing channel that reports each traced call once, when it is over,
 * however it was traced: `traceSync` (over at `end`), `tracePromise` (over at `asyncEnd`),
 * or a `tracePromise` whose function threw before returning a promise (over at `end`).
 *
 * @module
 */
import { diag } from '@opentelemetry/api'
import { tracingChannel, type TracingChannelSubscribers } from 'node:diagnostics_channel'

/**
 * A traced call's context as the subscribers see it: the publisher's fields plus what
 * `TracingChannel` adds (`result` when the function returned, `error` when it threw or
 * its promise rejected).
 */
export type Traced<C extends object> = C & { error?: unknown; result?: unknown }

/**
 * What to do at the start and at the end of each traced call.
 */
export interface TracedCallHandlers<C extends object> {
  /** At the `start` event (after any bound store's transform). */
  readonly start?: (traced: Traced<C>) => void
  /** Once per call, when it is over. */
  readonly finish: (traced: Traced<C>) => void
}

/**
 * Runs a handler so that its failure is logged through OpenTelemetry's `diag` and goes no
 * further: Node turns an exception thrown by a subscriber into an uncaught exception, and a
 * telemetry bug must not crash the application nor change a decision.
 */
export function guarded<T>(what: string, handler: (value: T) => void): (value: T) => void {
  // One argument, as every channel hands its subscribers: no rest array per call.
  return (value) => {
    try {
      handler(value)
    } catch (error) {
      diag.error(`voot-guard/otel: ${what} failed`, error)
    }
  }
}

/**
 * Subscribes `handlers` to the tracing channel `name`; returns the unsubscribe function.
 */
export function subscribeTracedCalls<C extends object>(name: string, handlers: TracedCallHandlers<C>): () => void {
  const channel = tracingChannel<unknown, Traced<C>>(name)
  const finish = guarded(`finishing a ${name} trace`, handlers.finish)
  const start = handlers.start
  // Only the events with something to do: Node calls every subscriber of an event it
  // publishes, and a warm decision publishes `start` and `end` on every request.
  const subscribers: Partial<TracingChannelSubscribers<Traced<C>>> = {
    ...(start === undefined ? {} : { start: guarded(`starting a ${name} trace`, start) }),
    // `end` comes right after the function returned: the call is over unless a promise is pending.
    end: (traced) => {
      if ('result' in traced || 'error' in traced) finish(traced)
    },
    asyncEnd: finish,
  }
  // Node subscribes only the events given (types/node asks for all five).
  channel.subscribe(subscribers as TracingChannelSubscribers<Traced<C>>)
  return () => {
    channel.unsubscribe(subscribers as TracingChannelSubscribers<Traced<C>>)
  }
}
