/**
 * The gate on its own `node:http` server, as `voot-guard gate` runs it: listening on
 * `listen` (and, with `fastcgi`, its FastCGI authorizer on `fastcgi.listen`), and stopping gracefully when its signal aborts (SIGTERM): no new connections,
 * `/_gate/readyz` and `/_gate/healthz` answer 503, answers under way finish (within
 * `drainTimeout`), then the resolver and Redis are released.
 *
 * `reload(config)` (SIGHUP, in `voot-guard gate`) builds a gate from the new configuration
 * and, once it is built, hands it every new request; the old gate answers the requests it
 * has under way, then is released. A configuration that is refused changes nothing.
 *
 * A configuration whose own policy tests fail is refused like one with problems, at the
 * start and on every reload: the tests are the admin's statement of what the rules must do,
 * and a rule that breaks one must not go live (`allowFailingTests` is the emergency exit).
 *
 * @module
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createGateCarrying, type Gate, type GateOptions } from './gate.js'
import { createGateMetrics } from './ops/metrics.js'
import type { GateConfig } from './config/types.js'
import { listenFastCgi, type FastCgiGate, type FastCgiListener } from './fastcgi-listener.js'
import { formatConfigProblem, GateConfigError } from './config/problem.js'
import { failingPolicyTests } from './policy-tests.js'
import { createSignOutList } from './session/sign-out-list.js'

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
  /**
   * Serves a configuration whose policy tests fail, at the start and on every reload, with
   * a warning per failing test through the logger: an emergency exit, never a habit.
   * Default `false`: such a configuration is refused (a `GateConfigError` naming each
   * failing test at its `tests[i]`) and, on reload, the running one kept. A configuration
   * file cannot set it (`voot-guard gate --allow-failing-tests` on the command line does).
   */
  readonly allowFailingTests?: boolean
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
  /** The gate serving new requests (another one after a {@link GateServer.reload}). */
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
  /**
   * Serves new requests under `config` from now on; requests under way finish under the old
   * one. Rejects with a `GateConfigError` (every problem, or every failing policy test) and
   * keeps the old configuration when the new one is refused. `listen` cannot change without a restart: a change is
   * reported through the logger and the address kept.
   */
  reload(config: GateConfig): Promise<void>
}

/** Counts an answer under way for `generation`; the function returned counts it done. */
function enter(generation: Generation): () => void {
  generation.inflight++
  return () => {
    if (--generation.inflight === 0) generation.idle?.()
  }
}

/** A gate and the answers it has under way. */
interface Generation {
  readonly gate: Gate
  inflight: number
  /** Called when `inflight` comes back to zero, while the generation is retiring. */
  idle: (() => void) | undefined
}

/**
 * Runs the configuration's policy tests: a failing one refuses it (a `GateConfigError`, as
 * for a problem), unless `allowFailingTests`, which serves it and warns of each failure.
 * A configuration with problems is left to `createGate`, which names every one of them.
 */
async function refuseFailingTests(config: GateConfig, options: GateServerOptions): Promise<void> {
  let failing
  try {
    failing = await failingPolicyTests(config)
  } catch (error) {
    if (error instanceof GateConfigError) return
    throw error
  }
  if (failing.length === 0) return
  if (options.allowFailingTests !== true) throw new GateConfigError(failing)
  const logger = options.logger ?? console
  for (const problem of failing) {
    logger.warn(`gate: WARNING: served although a policy test fails (allowFailingTests): ${formatConfigProblem(problem)}`)
  }
}

/**
 * Creates a gate and listens on its `listen` address. Rejects with a `GateConfigError`
 * for an invalid configuration (a failing policy test among its problems, unless
 * `allowFailingTests`), or with the error of `listen` (an address in use).
 *
 * @example
 * ```ts
 * const running = await startGateServer(loaded.config as GateConfig, { signal })
 * ```
 */
export async function startGateServer(config: GateConfig, options: GateServerOptions = {}): Promise<GateServer> {
  await refuseFailingTests(config, options)
  // The counters and the sign-out list belong to the server: each gate a reload makes counts on
  // where the last left off, and refuses the sessions signed out under the last.
  const carried = { metrics: createGateMetrics(), signOuts: createSignOutList(Date.now) }
  const gate = createGateCarrying(config, options, carried)
  let current: Generation = { gate, inflight: 0, idle: undefined }
  // Each request is answered by the gate that was current when it came, to the end.
  const server = createServer({ keepAlive: true }, (req, res) => {
    const generation = current
    generation.gate.listener(req, res)
    // A check the cache knew is answered before the listener returns: nothing of it is under
    // way. Only answers still to come are counted (a listener per request cost ~0.3 µs).
    if (!res.writableEnded) res.once('close', enter(generation))
  })
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
  // FastCGI checks go to the current gate too, counted with its answers: a retiring gate waits for them.
  const fastCgiGates = new WeakMap<Generation, FastCgiGate>()
  function fastCgiGateOf(generation: Generation): FastCgiGate {
    let view = fastCgiGates.get(generation)
    if (view === undefined) {
      const { gate: own } = generation
      view = {
        settings: own.settings,
        check(protocol, req, url) {
          const done = enter(generation)
          let answer
          try {
            answer = own.check(protocol, req, url)
          } catch (error) {
            done()
            throw error
          }
          if (answer instanceof Promise) return answer.finally(done)
          done()
          return answer
        },
      }
      fastCgiGates.set(generation, view)
    }
    return view
  }
  let fastcgi: FastCgiListener | undefined
  try {
    fastcgi = await listenFastCgi(() => fastCgiGateOf(current), options.fastcgiPort)
  } catch (error) {
    await new Promise((resolve) => server.close(resolve))
    await gate.close()
    throw error
  }
  const address = server.address() as AddressInfo
  const url = `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`
  const drainTimeout = options.drainTimeout ?? 10_000

  /** Waits until `generation` has answered what it has under way (at most `drainTimeout`), then releases it. */
  async function retire(generation: Generation): Promise<void> {
    if (generation.inflight > 0) {
      await new Promise<void>((resolve) => {
        generation.idle = resolve
        setTimeout(resolve, drainTimeout).unref()
      })
    }
    await generation.gate.close()
  }

  let reloading = Promise.resolve()
  function reload(next: GateConfig): Promise<void> {
    // One reload at a time, in the order asked.
    const done = reloading.then(async () => {
      if (stopping !== undefined) return
      await refuseFailingTests(next, options)
      if (stopping !== undefined) return
      const fresh = createGateCarrying(next, options, carried)
      const { host: nextHost, port: nextPort } = fresh.settings.listen
      if (options.port === undefined && (nextHost !== host || nextPort !== port)) {
        ;(options.logger ?? console).warn(`gate: listen is now ${nextHost}:${nextPort}; it takes a restart (still on ${url})`)
      }
      const before = current.gate.settings.fastcgi?.listen
      const after = fresh.settings.fastcgi?.listen
      if (options.fastcgiPort === undefined && (before?.host !== after?.host || before?.port !== after?.port)) {
        ;(options.logger ?? console).warn('gate: fastcgi.listen changed; it takes a restart (the FastCGI listener is kept as it was)')
      }
      const old = current
      current = { gate: fresh, inflight: 0, idle: undefined }
      await retire(old)
    })
    reloading = done.catch(() => {})
    return done
  }

  let stopping: Promise<void> | undefined
  function close(): Promise<void> {
    stopping ??= (async () => {
      const drained = new Promise<void>((resolve) => server.close(() => resolve()))
      server.closeIdleConnections()
      const timer = setTimeout(() => server.closeAllConnections(), drainTimeout)
      timer.unref()
      await Promise.all([drained, fastcgi?.close(drainTimeout)])
      clearTimeout(timer)
      await reloading
      await current.gate.close()
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
  return {
    get gate() {
      return current.gate
    },
    server,
    url,
    fastcgi,
    closed,
    close: closeAndSettle,
    reload,
  }
}
