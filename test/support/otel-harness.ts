/**
 * The OpenTelemetry SDK as a test sees it: in-memory span and metric exporters, the
 * AsyncLocalStorage context manager, and undici's instrumentation, for one test at a time.
 */
import { context, type Attributes } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici'
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
  type DataPoint,
  type MetricData,
} from '@opentelemetry/sdk-metrics'
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base'

// One context manager for the process, as an application registers it once.
let contextManager: AsyncLocalStorageContextManager | undefined
export function registerContextManager(): void {
  if (contextManager !== undefined) return
  contextManager = new AsyncLocalStorageContextManager().enable()
  context.setGlobalContextManager(contextManager)
}

/** A data point of some metric, its value whatever the metric's kind. */
export interface Point {
  readonly attributes: Attributes
  readonly value: unknown
}

export interface OtelHarness {
  readonly tracerProvider: BasicTracerProvider
  readonly meterProvider: MeterProvider
  /** Finished spans so far. */
  spans(): ReadableSpan[]
  /** Collects the metrics now; the points of each metric by name. */
  metrics(): Promise<Map<string, Point[]>>
  /** Everything exported so far, as text: spans (names, attributes, events, status) and metrics. */
  exportedText(): Promise<string>
  shutdown(): Promise<void>
}

/**
 * The SDK with in-memory exporters, plus undici's instrumentation feeding the same tracer
 * provider; the context manager too unless `registerContext` is false (the test registers it).
 */
export function startOtelHarness(options: { registerContext?: boolean } = {}): OtelHarness {
  if (options.registerContext !== false) registerContextManager()
  const spanExporter = new InMemorySpanExporter()
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spanExporter)] })
  const metricExporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE)
  const reader = new PeriodicExportingMetricReader({ exporter: metricExporter, exportIntervalMillis: 3_600_000 })
  const meterProvider = new MeterProvider({ readers: [reader] })
  const undici = new UndiciInstrumentation()
  undici.setTracerProvider(tracerProvider)
  undici.enable()

  async function collected(): Promise<MetricData[]> {
    await reader.forceFlush()
    const exports = metricExporter.getMetrics()
    return exports.at(-1)?.scopeMetrics.flatMap((scope) => scope.metrics) ?? []
  }

  return {
    tracerProvider,
    meterProvider,
    spans: () => [...spanExporter.getFinishedSpans()], // a copy: the exporter keeps appending to its own
    async metrics() {
      const byName = new Map<string, Point[]>()
      for (const metric of await collected()) {
        const points = (metric.dataPoints as DataPoint<unknown>[]).map((point) => ({ attributes: point.attributes, value: point.value }))
        byName.set(metric.descriptor.name, points)
      }
      return byName
    },
    async exportedText() {
      const spans = spanExporter.getFinishedSpans().map((span) => ({
        name: span.name,
        attributes: span.attributes,
        events: span.events,
        status: span.status,
        links: span.links,
      }))
      return JSON.stringify({ spans, metrics: await collected() })
    },
    async shutdown() {
      undici.disable()
      await tracerProvider.shutdown()
      await meterProvider.shutdown()
    },
  }
}

/** The points of `name` whose attributes include `match`. */
export function pointsOf(metrics: Map<string, Point[]>, name: string, match: Attributes = {}): Point[] {
  return (metrics.get(name) ?? []).filter((point) => Object.entries(match).every(([key, value]) => point.attributes[key] === value))
}
