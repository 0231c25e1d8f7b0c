/**
 * What every figure of the benchmark run shares: the table's rows, the raw details, the
 * progress output, and the child processes (started here, stopped at the end whatever
 * happens).
 *
 * @module
 */
import { type AddressInfo, createServer } from 'node:net'
import { type Child, startChild } from './child.js'
import { LOAD_CPU, raisePriority, SERVER_CPU } from './cpus.js'
import type { ServerConfig, ServerReady } from './servers/config.js'
import { failuresOf, type RoundResults } from './suites/throughput.js'
import type { Row } from './table.js'

/** The rows of the table printed at the end, in the order the figures ran. */
export const rows: Row[] = []
/** Every raw figure, written to results.json. */
export const details: Record<string, unknown> = {}
/** A progress line on stderr (stdout carries only the table). */
export const progress = (line: string): void => void process.stderr.write(`${line}\n`)
/** The children still running, stopped by `main` however it ends. */
export const children: Child<unknown>[] = []

/** Starts a compiled child (see child.ts) and remembers it until {@link stop}. */
export async function start<R>(
  script: string,
  args: readonly string[],
  cpu: number,
  { nodeOptions = [], idlePriority = false }: { nodeOptions?: readonly string[]; idlePriority?: boolean } = {},
): Promise<Child<R>> {
  const child = await startChild<R>(script, { args, cpu, nodeOptions, idlePriority })
  // With `--realtime`, every process of the run but the idle spinners: a group service
  // emulator left behind at normal priority would make the cold figures measure it.
  if (!idlePriority) raisePriority(child.pid)
  children.push(child)
  return child
}

/** Stops children started by {@link start}. */
export async function stop(...stopping: Child<unknown>[]): Promise<void> {
  for (const child of stopping) {
    await child.stop()
    children.splice(children.indexOf(child), 1)
  }
}

/** Starts the server child of a framework on the server CPU. */
export function startServer(config: ServerConfig): Promise<Child<ServerReady>> {
  const scripts: Partial<Record<ServerConfig['framework'], string>> = {
    koa3: './servers/koa.js',
    fastify: './servers/fastify.js',
    hono: './servers/hono.js',
    'nest-express': './servers/nest.js',
    'node-http': './servers/node-http.js',
  }
  const script = scripts[config.framework] ?? './servers/express.js'
  return start<ServerReady>(script, [JSON.stringify(config)], SERVER_CPU)
}

/** Fails unless `path` answers `status` for `token` (a check before a figure is measured). */
export async function expectStatus(port: number, path: string, token: string, status: number): Promise<void> {
  const response = await fetch(`http://127.0.0.1:${port}${path}`, { headers: { authorization: `Bearer ${token}` } })
  await response.arrayBuffer()
  if (response.status !== status) throw new Error(`${path}: expected ${status}, got ${response.status}`)
}

/** A loopback port nothing listens on (for the refused-connection figure). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo
      server.close(() => resolve(port))
    })
  })
}

/** Nanoseconds as microseconds. */
export const us = (ns: number): string => `${(ns / 1000).toFixed(2)} µs`
/** Requests per second, rounded. */
export const rps = (value: number): string => `${Math.round(value).toLocaleString('en-US')}/s`

/** Fails the run when any route had failed requests: a figure over failures measures nothing. */
export function checkFailures(results: RoundResults): void {
  for (const name of results.keys()) {
    const failed = failuresOf(results, name)
    if (failed > 0) throw new Error(`${name}: ${failed} failed requests`)
  }
}

/**
 * Starts an idle spinner at the lowest priority on the load generator's CPU and the
 * server's (see servers/idle-spinner.ts): on a VM an idle vCPU is halted and can take
 * milliseconds to come back. Without `chrt` the run goes on without them, and says so.
 */
export async function startIdleSpinners(): Promise<void> {
  for (const cpu of [LOAD_CPU, SERVER_CPU]) {
    try {
      await start('./servers/idle-spinner.js', [], cpu, { idlePriority: true })
    } catch {
      progress(`  note: could not start an idle spinner on CPU ${cpu} (chrt missing?); latency figures will include vCPU wake-ups`)
    }
  }
}
