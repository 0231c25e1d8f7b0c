/**
 * The gate on its own `node:http` server, as `voot-guard gate` runs it: listening on
 * `listen` (and, with `fastcgi`, its FastCGI authorizer on `fastcgi.listen`), and stopping gracefully when its signal aborts (SIGTERM): no new connections,
 * `/_gate/readyz` and `/_gate/healthz` answer 503, answers under way finish (within
 * `drainTimeout`), then the resolver and Redis are released.
 *
 * @module
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createGate, type Gate, type GateOptions } from './gate.js'
import type { GateConfig } from './config-types.js'
import { listenFastCgi, type FastCgiListener } from './fastcgi-listener.js'

/**
 * Options of {@link startGateServer}.
 *
 * @example
 * ```ts
 * const controller = new AbortController()
 * process.once('SIGTERM', () => controller.abort())
 * await startGateServer(config, { signal: controller.signal })
 * ```
 */
export interface GateServerOptions extends GateOptions {
  /** Stops the server gracefully when it aborts. */
  readonly signal?: AbortSignal
  /** How long answers under way may take to finish after the signal, in ms. Default `10000`. */
  readonly drainTimeout?: number
  /** Overrides `listen`'s port (`0`: any free port; for tests). */
  readonly port?: number
  /** Overrides `fastcgi.listen`'s port (`0`: any free port; for tests). */
  readonly fastcgiPort?: number
}

/**
 * A gate listening on its own server.
 *
 * @example
 * ```ts
 * const running = await startGateServer(config)
 * console.log(running.url) // http://127.0.0.1:4181
 * await running.closed
 * ```
 */
export interface GateServer {
  readonly gate: Gate
  readonly server: Server
  /** `http://host:port` as bound. */
  readonly url: string
  /** The FastCGI authorizer (`fastcgi` in the configuration), as bound. */
  readonly fastcgi: FastCgiListener | undefined
  /** Settles once the server has stopped and the gate released what it holds. */
  readonly closed: Promise<void>
  /** Stops gracefully (what the signal does). */
  close(): Promise<void>
}

/**
 * Creates a gate and listens on its `listen` address. Rejects with a `GateConfigError`
 * for an invalid configuration, or with the error of `listen` (an address in use).
 *
 * @example
 * ```ts
 * const running = await startGateServer(loaded.config as GateConfig, { signal })
 * ```
 */
export async function startGateServer(config: GateConfig, options: GateServerOptions = {}): Promise<GateServer> {
  const gate = createGate(config, options)
  const server = createServer({ keepAlive: true }, gate.listener)
  // Proxies keep their connections to the gate open between requests.
  server.keepAliveTimeout = 65_000
  server.headersTimeout = 70_000
  server.requestTimeout = 30_000
  const { host } = gate.settings.listen
  const port = options.port ?? gate.settings.listen.port
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(port, host, () => {
        server.off('error', reject)
        resolve()
      })
    })
  } catch (error) {
    await gate.close()
    throw error
  }
  let fastcgi: FastCgiListener | undefined
  try {
    fastcgi = await listenFastCgi(gate, options.fastcgiPort)
  } catch (error) {
    await new Promise((resolve) => server.close(resolve))
    await gate.close()
    throw error
  }
  const address = server.address() as AddressInfo
  const url = `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`
  const drainTimeout = options.drainTimeout ?? 10_000

  let stopping: Promise<void> | undefined
  function close(): Promise<void> {
    stopping ??= (async () => {
      const drained = new Promise<void>((resolve) => server.close(() => resolve()))
      server.closeIdleConnections()
      const timer = setTimeout(() => server.closeAllConnections(), drainTimeout)
      timer.unref()
      await Promise.all([drained, fastcgi?.close(drainTimeout)])
      clearTimeout(timer)
      await gate.close()
    })()
    return stopping
  }
  let resolveClosed: () => void = () => {}
  const closed = new Promise<void>((resolve) => (resolveClosed = resolve))
  if (options.signal !== undefined) {
    if (options.signal.aborted) void close()
    else options.signal.addEventListener('abort', () => void close(), { once: true })
  }
  const closeAndSettle = () => close().then(resolveClosed)
  server.once('close', () => void closeAndSettle())
  return { gate, server, url, fastcgi, closed, close: closeAndSettle }
}
