/**
 * `npm start`: the emulator of a VOOT group service and an example app (Express, or
 * `npm start -- --framework koa|fastify|hono|fetch|nestjs`), started together (with
 * `--dialect openconext` the emulator plays SURFconext; with `--redis` the guard is also on
 * a shared cache tier in Redis; with `--gate` the gate instead of an app, demo/gate.ts; with
 * `--services feide,openconext` two group services in one app, demo/services.ts), with a guide to try them: routes, a token per demo user,
 * `curl` lines for an allow, a 403, a 401 and a 503, and a decision on the command line.
 * The flags are read by demo/arguments.ts. Stops cleanly on Ctrl-C (SIGINT) or SIGTERM.
 *
 * @module
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { pathToFileURL } from 'node:url'
import { DemoUsageError, demoUsage, parseDemoArguments } from './arguments.js'
import { DEMO_DIALECTS } from './dialects.js'
import { demoApp } from './frameworks.js'
import type { DemoOptions } from './options.js'
import { withPortFallback } from '../cli/port-fallback.js'
import { processStopSignal, untilAborted } from '../cli/stop-signal.js'
import { InvalidOptionError } from 'voot-guard'
import { rejectUnknownKeys } from '../src/internal.js'
import { startEmulator, type Emulator } from 'voot-guard/testing'
import { demoCurlLines, demoGuide, type DemoCurlLine } from './guide.js'
import { startDemoSharedTier, type DemoSharedTier } from './shared-tier.js'
import { startDemoGate, type DemoGate } from './gate.js'
import { startDemoServices, type DemoServices } from './services.js'

export type { DemoCurlLine } from './guide.js'
export type { DemoOptions } from './options.js'

/**
 * The app's port when free and `port` is not given.
 */
export const DEMO_APP_PORT = 3000
/**
 * The emulator's port when free and `emulatorPort` is not given.
 */
export const DEMO_EMULATOR_PORT = 4000

/** The demo users listed in the guide, in this order. */
const DEMO_USERS = ['alice', 'bob', 'carol', 'dave', 'erin', 'frank'] as const

/**
 * A running demo.
 */
export interface Demo {
  /** The example app, such as `http://127.0.0.1:3000`. */
  readonly appUrl: string
  /** The emulator behind it. */
  readonly emulator: Emulator
  /** A personal token per demo user. */
  readonly tokens: Readonly<Record<string, string>>
  /** A token of alice's for which the emulator answers 500 (so the app answers 503). */
  readonly faultToken: string
  /** The guide's `curl` lines, with the status each one gets. */
  readonly curlLines: readonly DemoCurlLine[]
  /** The guide as printed. */
  readonly guide: string
  /** The shared tier's Redis, when the demo runs with one (`redis`). */
  readonly redisUrl: string | undefined
  /** Stops the app and the emulator. Safe to call more than once. */
  close(): Promise<void>
}

/**
 * Starts the emulator and an example app (Express unless `framework` says otherwise) on 127.0.0.1, injects a fault for one token,
 * and prints the guide.
 *
 * @throws {@link InvalidOptionError} for an invalid option; the listen error when a port
 *   given explicitly is taken.
 */
export async function startDemo(options: DemoOptions = {}): Promise<Demo> {
  rejectUnknownKeys('', options, ['port', 'emulatorPort', 'framework', 'print', 'dialect', 'redis'])
  const { port, emulatorPort, framework = 'express', print = (guide: string) => void process.stdout.write(guide) } = options
  checkPort('port', port)
  checkPort('emulatorPort', emulatorPort)
  if (typeof print !== 'function') throw new InvalidOptionError('print', 'must be a function')

  const dialect = options.dialect ?? 'dataporten'
  // Checked before anything starts; the emulator names the option too, but after a port is taken.
  if (!Object.hasOwn(DEMO_DIALECTS, dialect)) {
    throw new InvalidOptionError('dialect', `must be one of ${Object.keys(DEMO_DIALECTS).join(', ')}`)
  }
  const shown = DEMO_DIALECTS[dialect]
  const startOn = (listenOn: number): Promise<Emulator> => startEmulator({ port: listenOn, dialect })
  if (options.redis !== undefined && options.redis !== true && typeof options.redis !== 'string') {
    throw new InvalidOptionError('redis', 'must be true (start a redis-server) or the URL of a running Redis')
  }
  const emulator = emulatorPort === undefined ? await withPortFallback(DEMO_EMULATOR_PORT, startOn) : await startOn(emulatorPort)
  let server: Server | undefined
  let tier: DemoSharedTier | undefined
  let example: string
  let closeApp: (() => Promise<void>) | undefined
  try {
    tier = options.redis === undefined ? undefined : await startDemoSharedTier(options.redis)
    const served = await demoApp(framework, emulator.baseUrl, tier === undefined ? {} : { sharedCache: tier.sharedCache }, shown.groups)
    example = served.example
    closeApp = served.close
    const app = createServer(served.listener)
    server = app
    const listenOn = (appPort: number): Promise<void> => listen(app, appPort)
    await (port === undefined ? withPortFallback(DEMO_APP_PORT, listenOn) : listenOn(port))
  } catch (error) {
    await closeApp?.()
    await tier?.close()
    await emulator.close()
    throw error
  }

  const appUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const tokens = Object.fromEntries(DEMO_USERS.map((user) => [user, emulator.issueToken(user)]))
  const faultToken = emulator.issueToken('alice')
  // Every group-service call made with this token answers 500, as an outage would.
  emulator.faults.add({ kind: 'status', status: 500 }, { token: faultToken })
  const redis = tier === undefined ? undefined : { url: tier.url, started: tier.started }
  const input = {
    appUrl,
    baseUrl: emulator.baseUrl,
    authUrl: emulator.authUrl,
    tokens,
    faultToken,
    example,
    dialect: shown,
    ...(redis === undefined ? {} : { redis }),
  }
  const curlLines = demoCurlLines(input)
  const guide = demoGuide(input, curlLines)
  print(guide)

  const running = server
  const runningTier = tier
  let closing: Promise<void> | undefined
  return {
    appUrl,
    emulator,
    tokens,
    faultToken,
    curlLines,
    guide,
    redisUrl: tier?.url,
    close() {
      closing ??= (async () => {
        const closed = new Promise<void>((resolve) => running.close(() => resolve()))
        // Keep-alive connections (curl, browsers) would hold server.close() open.
        running.closeAllConnections()
        await closed
        await closeApp?.()
        await runningTier?.close()
        await emulator.close()
      })()
      return closing
    },
  }
}

function checkPort(name: string, port: number | undefined): void {
  if (port !== undefined && (!Number.isInteger(port) || port < 0 || port > 65_535)) {
    throw new InvalidOptionError(name, 'must be an integer from 0 to 65535')
  }
}

function listen(server: Server, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject)
      resolve()
    })
  })
}

/**
 * `npm start -- [flags]`: starts the demo until Ctrl-C. Returns the exit code: 0 after a
 * clean stop or `--help`, 2 for a command line it does not understand (the usage printed
 * after the message), 1 when the demo could not start.
 */
export async function runDemoCommand(
  args: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  io: { readonly stdout: { write(text: string): unknown }; readonly stderr: { write(text: string): unknown } },
  signal: AbortSignal,
): Promise<number> {
  let command
  try {
    command = parseDemoArguments(args, env)
  } catch (error) {
    if (!(error instanceof DemoUsageError)) throw error
    io.stderr.write(`npm start: ${error.message}\n\n${demoUsage()}`)
    return 2
  }
  if (command.help) {
    io.stdout.write(demoUsage())
    return 0
  }
  const { gate, services, ...options } = command.options
  let demo: Demo | DemoGate | DemoServices
  try {
    if (gate === true) {
      demo = await startDemoGate()
      io.stdout.write(demo.guide)
    } else if (services !== undefined) {
      demo = await startDemoServices()
      io.stdout.write(demo.guide)
    } else {
      demo = await startDemo({ ...options, print: (guide) => void io.stdout.write(guide) })
    }
  } catch (error) {
    io.stderr.write(`The demo could not start: ${error instanceof Error ? error.message : String(error)}\n`)
    return 1
  }
  await untilAborted(signal)
  io.stdout.write('\nStopping the demo...\n')
  await demo.close()
  io.stdout.write('Demo stopped.\n')
  return 0
}

// `npm start` (tsx demo/start.ts), not an import from a test.
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const stop = processStopSignal({ forceExitAfterMs: 5_000 })
  try {
    process.exitCode = await runDemoCommand(process.argv.slice(2), process.env, process, stop.signal)
  } finally {
    stop.dispose()
  }
}
