/**
 * voot-guard/otel: OpenTelemetry spans and metrics from voot-guard's `node:diagnostics_channel`
 * tracing channels. Depends on `@opentelemetry/api` only (an optional peer dependency); the
 * application brings the SDK.
 *
 * @example
 * ```ts
 * import { instrumentVootGuard } from 'voot-guard/otel'
 *
 * const instrumentation = instrumentVootGuard() // the global tracer and meter providers
 * ```
 *
 * @module
 */
export { INSTRUMENTATION_SCOPE, instrumentVootGuard, type InstrumentVootGuardOptions, type VootGuardInstrumentation } from './instrument.js'
export { AUTHORIZE_SPAN, RESOLVE_SPAN } from './spans.js'
export { CIRCUIT_STATE_VALUES } from './metrics.js'
