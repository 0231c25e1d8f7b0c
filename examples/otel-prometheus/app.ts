/**
 * OpenTelemetry example: an Express app guarded by voot-guard, its metrics exported to
 * Prometheus through OpenTelemetry's Prometheus exporter, on a port of their own.
 *
 * Run it on its own (app on PORT, default 3000; metrics on METRICS_PORT, default 9464):
 *   VOOT_BASE_URL=https://groups-api.example.org/groups npx tsx examples/otel-prometheus/app.ts
 *   curl http://127.0.0.1:9464/metrics
 *
 * What each metric means, and what to do about each 503 reason: docs/operating.md.
 */
import { createServer, type RequestListener } from 'node:http'
import { pathToFileURL } from 'node:url'
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus'
import { MeterProvider } from '@opentelemetry/sdk-metrics'
import express, { type Express } from 'express'
import { createGuard } from 'voot-guard/express'
import { instrumentVootGuard } from 'voot-guard/otel'

/** The app, the handler that serves `/metrics`, and what stops the instrumentation. */
export interface ObservedApp {
  readonly app: Express
  /** Serves the metrics in Prometheus' text format (mount it on an internal port, not on the app). */
  readonly metrics: RequestListener
  shutdown(): Promise<void>
}

/** Builds the app; `baseUrl` is the group service's address WITH its /groups prefix. */
export function createObservedApp(baseUrl: string): ObservedApp {
  // The exporter is a metric reader: Prometheus pulls, nothing is pushed.
  const exporter = new PrometheusExporter({ preventServerStart: true })
  const meterProvider = new MeterProvider({ readers: [exporter] })
  // Before the first request; every guard and resolver in the process is covered.
  const instrumentation = instrumentVootGuard({ meterProvider })

  // The circuit breaker makes `voot_guard_circuit_state` say something.
  const guard = createGuard({ baseUrl, realm: 'voot-guard-example', circuitBreaker: true })
  const app = express()
  app.get('/api/staff', guard.requireGroup('fc:org:example.org', 'admin'), (_req, res) => {
    res.json({ message: 'Hello, colleague' })
  })

  return {
    app,
    metrics: (request, response) => exporter.getMetricsRequestHandler(request, response),
    async shutdown() {
      instrumentation.disable()
      await meterProvider.shutdown()
    },
  }
}

// Started directly (not imported by a test): the app on PORT, the metrics on METRICS_PORT.
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const baseUrl = process.env.VOOT_BASE_URL
  if (baseUrl === undefined) throw new Error('Set VOOT_BASE_URL to the group service address (with /groups)')
  const { app, metrics } = createObservedApp(baseUrl)
  const port = Number(process.env.PORT ?? 3000)
  const metricsPort = Number(process.env.METRICS_PORT ?? 9464)
  app.listen(port, '127.0.0.1', () => console.log(`listening on http://127.0.0.1:${port}`))
  createServer(metrics).listen(metricsPort, '127.0.0.1', () => console.log(`metrics on http://127.0.0.1:${metricsPort}/metrics`))
}
