import { context, trace } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import { MeterProvider, PeriodicExportingMetricReader, type PushMetricExporter } from '@opentelemetry/sdk-metrics'
import { BasicTracerProvider, BatchSpanProcessor, InMemorySpanExporter } from '@opentelemetry/sdk-trace-base'
import { instrumentVootGuard } from '../otel/index.js'
import { createGuardCore } from '../src/adapter-kit.js'
import { createMembershipResolver, group } from '../src/index.js'
import { ORG_ID, startEmulator } from '../testing/index.js'
const nowhere: PushMetricExporter = { export: (_i: unknown, done: (r: { code: number }) => void) => done({ code: 0 }), shutdown: () => Promise.resolve(), forceFlush: () => Promise.resolve() }
const emulator = await startEmulator()
const header = `Bearer ${emulator.issueToken('alice')}`
const requirement = group(ORG_ID, 'admin')
const resolver = createMembershipResolver({ baseUrl: emulator.baseUrl, cache: { ttl: 3_600_000 } })
const core = createGuardCore({ resolver, realm: 'bench' })
const credentials = { authorization: header }
await core.authorizeNow(credentials, requirement)
await emulator.close()
const mode = process.argv[2] ?? 'otel'
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())
const tracerProvider = new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(new InMemorySpanExporter())] })
const request = tracerProvider.getTracer('bench').startSpan('GET /staff')
const meterProvider = new MeterProvider({ readers: [new PeriodicExportingMetricReader({ exporter: nowhere, exportIntervalMillis: 3_600_000 })] })
if (mode === 'otel') instrumentVootGuard({ tracerProvider, meterProvider })
let sink = 0
const run = (n: number) => { for (let i = 0; i < n; i++) sink += core.authorizeNow(credentials, requirement) instanceof Promise ? 0 : 1 }
context.with(trace.setSpan(context.active(), request), () => {
  run(50_000)
  for (let b = 0; b < 5; b++) {
    const s = process.hrtime.bigint(); run(200_000); console.log(mode, Number(process.hrtime.bigint() - s) / 200_000, 'ns/op')
  }
  if (process.argv[3] === 'long') run(5_000_000)
})
console.log(sink > 0)
