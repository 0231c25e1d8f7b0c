/**
 * Figure 1 with subscribers: the warm decision with nobody subscribed to voot-guard's
 * tracing channels, with a plain subscriber (no-op handlers on every event), and with the
 * OpenTelemetry instrumentation on: the real SDK, a `BasicTracerProvider` with a
 * `BatchSpanProcessor` into an `InMemorySpanExporter`, a `MeterProvider` with a metric
 * reader (what instrumenting costs in the process, not what shipping the data costs), and
 * a recording span active around the decisions, as the HTTP server span of a traced
 * request is (the warm decision sets its attributes on it). The three alternate over a few
 * rounds, and each ratio is the median of the rounds' ratios, so that drift of the machine
 * hits all three alike.
 *
 * @module
 */
import { tracingChannel } from 'node:diagnostics_channel'
import { context, trace } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import { MeterProvider, PeriodicExportingMetricReader, type PushMetricExporter } from '@opentelemetry/sdk-metrics'
import { BasicTracerProvider, BatchSpanProcessor, InMemorySpanExporter } from '@opentelemetry/sdk-trace-base'
import { instrumentVootGuard } from '../../otel/index.js'
import { CHANNELS } from '../../src/tracing-channels.js'
import { median } from '../stats.js'
import type { HotPathFigure } from './hot-path-figure.js'

/** What {@link measureSubscribers} found. */
export interface SubscriberFigures {
  readonly none: HotPathFigure
  readonly plain: HotPathFigure
  readonly otel: HotPathFigure
  /** Median over the rounds of plain / none. */
  readonly plainRatio: number
  /** Median over the rounds of OpenTelemetry / none. */
  readonly otelRatio: number
  /** Whether the channels were published on at all (false before the resolver publishes: the ratios then say nothing). */
  readonly published: boolean
}

const ROUNDS = 5

const nowhere: PushMetricExporter = {
  export: (_items: unknown, done: (result: { code: number }) => void) => done({ code: 0 }),
  shutdown: () => Promise.resolve(),
  forceFlush: () => Promise.resolve(),
}

/** `measure(name)` times the warm decision once (batches and all). */
export async function measureSubscribers(measure: (name: string) => HotPathFigure): Promise<SubscriberFigures> {
  const channels = [CHANNELS.authorize, CHANNELS.resolve].map((name) => tracingChannel(name))
  let published = false
  const noop = (): void => {}
  const plainHandlers = { start: () => void (published = true), end: noop, asyncStart: noop, asyncEnd: noop, error: noop }

  const contextManager = new AsyncLocalStorageContextManager().enable()
  context.setGlobalContextManager(contextManager)
  const spanExporter = new InMemorySpanExporter()
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(spanExporter)] })
  // The span of the request being guarded, as an HTTP server instrumentation makes it.
  const request = tracerProvider.getTracer('bench').startSpan('GET /staff')
  const inRequest = trace.setSpan(context.active(), request)
  const reader = new PeriodicExportingMetricReader({ exporter: nowhere, exportIntervalMillis: 3_600_000 })
  const meterProvider = new MeterProvider({ readers: [reader] })

  const rounds: { none: HotPathFigure; plain: HotPathFigure; otel: HotPathFigure }[] = []
  for (let round = 0; round < ROUNDS; round++) {
    const none = measure('no subscriber')
    for (const channel of channels) channel.subscribe(plainHandlers)
    const plain = measure('a plain subscriber')
    for (const channel of channels) channel.unsubscribe(plainHandlers)
    const instrumentation = instrumentVootGuard({ tracerProvider, meterProvider })
    const otel = context.with(inRequest, () => measure('OpenTelemetry instrumentation (real SDK, a request span active)'))
    instrumentation.disable()
    spanExporter.reset()
    rounds.push({ none, plain, otel })
  }
  request.end()
  await tracerProvider.shutdown()
  await meterProvider.shutdown()
  context.disable()

  const middle = (pick: (round: (typeof rounds)[number]) => HotPathFigure): HotPathFigure => {
    const figures = rounds.map(pick)
    return { name: figures[0]?.name ?? '', ns: median(figures.map((f) => f.ns)), bestNs: Math.min(...figures.map((f) => f.bestNs)) }
  }
  return {
    none: middle((r) => r.none),
    plain: middle((r) => r.plain),
    otel: middle((r) => r.otel),
    plainRatio: median(rounds.map((r) => r.plain.ns / r.none.ns)),
    otelRatio: median(rounds.map((r) => r.otel.ns / r.none.ns)),
    published,
  }
}
