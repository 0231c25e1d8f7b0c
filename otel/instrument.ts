/**
 * `instrumentVootGuard()`: subscribes to voot-guard's tracing channels and turns them into
 * OpenTelemetry spans and metrics.
 *
 * @module
 */
import { subscribe, tracingChannel, unsubscribe } from 'node:diagnostics_channel'
import { metrics, trace, type MeterProvider, type TracerProvider } from '@opentelemetry/api'
import {
  type AuthorizeContext,
  CHANNELS,
  type CircuitContext,
  InvalidOptionError,
  type ResolveContext,
  type UpstreamContext,
  VERSION,
} from '../src/index.js'
import { rejectUnknownKeys } from '../src/internal.js'
import { createContextBinding } from './context-binding.js'
import { createMetricsRecorder } from './metrics.js'
import { createAuthorizeSpans, createResolveSpans } from './spans.js'
import { guarded, subscribeTracedCalls } from './traced-calls.js'
import { isWarm } from './attributes.js'
import { createWarmDecisionAttributes } from './warm-decisions.js'

/**
 * The instrumentation scope name of voot-guard's tracer and meter.
 *
 * @example
 * ```ts
 * const ours = exporter.getFinishedSpans().filter((span) => span.instrumentationScope.name === INSTRUMENTATION_SCOPE)
 * ```
 */
export const INSTRUMENTATION_SCOPE = 'voot-guard'

/**
 * Options of {@link instrumentVootGuard}.
 *
 * @example
 * ```ts
 * const options: InstrumentVootGuardOptions = { tracerProvider: sdk.tracerProvider }
 * ```
 */
export interface InstrumentVootGuardOptions {
  /** Where the spans go. Default: the global tracer provider (`trace.getTracerProvider()`), followed when it is set later. */
  tracerProvider?: TracerProvider
  /** Where the metrics go. Default: the global meter provider, as it is when this is called (register the SDK first). */
  meterProvider?: MeterProvider
}

/**
 * What {@link instrumentVootGuard} returns.
 *
 * @example
 * ```ts
 * const instrumentation: VootGuardInstrumentation = instrumentVootGuard()
 * instrumentation.disable()
 * ```
 */
export interface VootGuardInstrumentation {
  /** Unsubscribes from the channels: no more spans nor metrics (spans under way are not ended). Idempotent. */
  disable(): void
}

function providerOption(name: string, value: unknown, method: 'getTracer' | 'getMeter'): void {
  if (value === undefined) return
  if (typeof value !== 'object' || value === null || typeof (value as Record<string, unknown>)[method] !== 'function') {
    throw new InvalidOptionError(
      name,
      `must be an OpenTelemetry ${name === 'tracerProvider' ? 'TracerProvider' : 'MeterProvider'} (an object with ${method}())`,
    )
  }
}

/**
 * Subscribes to voot-guard's tracing channels (every resolver and guard in the process) and
 * produces spans for cold decisions (`voot-guard authorize`, with `voot-guard resolve`
 * children, under which undici's instrumentation nests its HTTP client spans), the
 * decision's attributes on the active span for each warm decision (answered from the
 * in-process cache), and metrics for every decision (`voot_guard.decisions`,
 * `voot_guard.cache.lookups`, `voot_guard.upstream.duration`, `voot_guard.upstream.active`,
 * `voot_guard.circuit.state`). A resolver of one of several services
 * (`createServiceResolvers`) labels all of them with `voot_guard.service`. No token and none
 * of the user's groups reach them.
 *
 * @example
 * ```ts
 * import { NodeSDK } from '@opentelemetry/sdk-node'
 * import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici'
 * import { instrumentVootGuard } from 'voot-guard/otel'
 *
 * new NodeSDK({ instrumentations: [new UndiciInstrumentation()] }).start()
 * const instrumentation = instrumentVootGuard()
 * // ... on shutdown:
 * instrumentation.disable()
 * ```
 */
export function instrumentVootGuard(options: InstrumentVootGuardOptions = {}): VootGuardInstrumentation {
  if (typeof options !== 'object' || options === null) throw new InvalidOptionError('options', 'must be an object')
  rejectUnknownKeys('', options, ['tracerProvider', 'meterProvider'])
  providerOption('tracerProvider', options.tracerProvider, 'getTracer')
  providerOption('meterProvider', options.meterProvider, 'getMeter')
  const tracer = (options.tracerProvider ?? trace.getTracerProvider()).getTracer(INSTRUMENTATION_SCOPE, VERSION)
  const meter = (options.meterProvider ?? metrics.getMeterProvider()).getMeter(INSTRUMENTATION_SCOPE, VERSION)

  const binding = createContextBinding()
  const authorizeSpans = createAuthorizeSpans(tracer)
  const resolveSpans = createResolveSpans(tracer)
  const recorder = createMetricsRecorder(meter)
  const warmDecisions = createWarmDecisionAttributes()
  const onCircuit = guarded('recording a circuit change', (message: unknown) => {
    recorder.circuitChanged(message as CircuitContext)
  })

  const undo = [
    binding.bind(tracingChannel<unknown, AuthorizeContext>(CHANNELS.authorize), authorizeSpans.begin),
    binding.bind(tracingChannel<unknown, ResolveContext>(CHANNELS.resolve), resolveSpans.begin),
    subscribeTracedCalls<AuthorizeContext>(CHANNELS.authorize, {
      finish(traced) {
        // A warm decision has no span of its own: its attributes go on the active span.
        if (!authorizeSpans.end(traced) && isWarm(traced)) warmDecisions.record(traced)
        recorder.decision(traced)
      },
    }),
    subscribeTracedCalls<ResolveContext>(CHANNELS.resolve, {
      finish(traced) {
        resolveSpans.end(traced)
        recorder.lookup(traced)
      },
    }),
    subscribeTracedCalls<UpstreamContext>(CHANNELS.upstream, { start: recorder.upstreamStarted, finish: recorder.upstreamFinished }),
    () => {
      unsubscribe(CHANNELS.circuit, onCircuit)
    },
    () => {
      recorder.close()
    },
  ]
  subscribe(CHANNELS.circuit, onCircuit)

  let enabled = true
  return {
    disable() {
      if (!enabled) return
      enabled = false
      for (const step of undo) step()
    },
  }
}
