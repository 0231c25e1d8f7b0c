/**
 * voot-guard/otel instrumented BEFORE the application registers OpenTelemetry's context
 * manager (a file of its own: the global context manager must be absent when it starts).
 * The probe cannot verify activation then, says so once through `diag`, and spans still nest
 * once the context manager is there, because the bound store calls `context.with()` at
 * each trace.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { diag, DiagLogLevel, type DiagLogger } from '@opentelemetry/api'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { AUTHORIZE_SPAN, instrumentVootGuard, RESOLVE_SPAN } from 'voot-guard/otel'
import { createTestPublisher } from '../support/channel-publisher.js'
import { registerContextManager, startOtelHarness } from '../support/otel-harness.js'

let server: Server
let baseUrl: string
beforeAll(async () => {
  server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' })
    res.end(JSON.stringify([{ id: 'fc:org:example.org' }]))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/groups`
})
afterAll(() => {
  server.closeAllConnections()
  server.close()
})

it('nests spans when the context manager is registered after instrumentVootGuard(), and says so meanwhile', async () => {
  const warnings: string[] = []
  const ignore = (): void => {}
  const logger: DiagLogger = { error: ignore, warn: (message) => void warnings.push(message), info: ignore, debug: ignore, verbose: ignore }
  diag.setLogger(logger, DiagLogLevel.WARN)
  const harness = startOtelHarness({ registerContext: false })
  const instrumentation = instrumentVootGuard({ tracerProvider: harness.tracerProvider, meterProvider: harness.meterProvider })
  try {
    expect(warnings.join('\n')).toMatch(/no OpenTelemetry context manager/)
    registerContextManager()
    await createTestPublisher(baseUrl).check('a-token', 'fc:org:example.org')
    const spans = harness.spans()
    const authorize = spans.find((span) => span.name === AUTHORIZE_SPAN)
    const resolve = spans.find((span) => span.name === RESOLVE_SPAN)
    const http = spans.find((span) => span.attributes['http.request.method'] === 'GET')
    expect(resolve?.parentSpanContext?.spanId).toBe(authorize?.spanContext().spanId)
    expect(http?.parentSpanContext?.spanId).toBe(resolve?.spanContext().spanId)
  } finally {
    instrumentation.disable()
    await harness.shutdown()
    diag.disable()
  }
})
