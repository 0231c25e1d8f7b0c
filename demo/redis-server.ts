/**
 * A throwaway redis-server from the PATH (Debian's `redis-server` package; `.ci/run`
 * installs it when missing), on a free loopback port with persistence off, stopped by
 * whoever started it: `npm start -- --redis`, the tests and the fleet benchmark. Also
 * freezes (SIGSTOP), thaws (SIGCONT) and restarts it on the same port, for the fault tests.
 *
 * @module
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { createServer, connect } from 'node:net'

/**
 * A running redis-server.
 */
export interface RedisServer {
  readonly port: number
  readonly url: string
  /** Stops the server (SIGTERM, then waits for it to exit). */
  stop(): Promise<void>
  /** Starts it again on the same port (empty: persistence is off). */
  start(): Promise<void>
  /** SIGSTOP: the server keeps its connections but answers nothing. */
  freeze(): void
  /** SIGCONT. */
  thaw(): void
}

/** A port that was free on 127.0.0.1 a moment ago (the OS chose it). */
export async function freePort(): Promise<number> {
  const server = createServer()
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as { port: number }
  await new Promise((resolve) => server.close(resolve))
  return port
}

/** Resolves once the server answers PING with PONG (over a raw socket: no client needed). */
async function waitForPong(port: number, giveUpAt: number): Promise<void> {
  for (;;) {
    const answered = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1')
      socket.setTimeout(200, () => {
        socket.destroy()
        resolve(false)
      })
      socket.on('error', () => resolve(false))
      socket.on('connect', () => socket.write('PING\r\n'))
      socket.on('data', (data) => {
        socket.destroy()
        resolve(data.toString().startsWith('+PONG'))
      })
    })
    if (answered) return
    if (Date.now() > giveUpAt) throw new Error(`redis-server did not answer on port ${port}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

/**
 * Starts a redis-server on a free loopback port. Rejects with an error whose `code` is
 * `ENOENT` when there is no `redis-server` on the PATH.
 */
export async function startRedisServer(): Promise<RedisServer> {
  const port = await freePort()
  let child: ChildProcess | undefined
  let frozen = false

  async function start(): Promise<void> {
    const args = ['--save', '', '--appendonly', 'no', '--port', String(port), '--bind', '127.0.0.1', '--loglevel', 'warning']
    const started = spawn('redis-server', args, { stdio: ['ignore', 'ignore', 'pipe'] })
    child = started
    const failed = new Promise<never>((_, reject) => {
      started.once('error', reject)
      started.once('exit', (code) => reject(new Error(`redis-server exited with ${code}`)))
    })
    failed.catch(() => {})
    await Promise.race([waitForPong(port, Date.now() + 10_000), failed])
  }

  async function stop(): Promise<void> {
    const running = child
    child = undefined
    if (running === undefined || running.exitCode !== null || running.signalCode !== null) return
    if (frozen) running.kill('SIGCONT')
    frozen = false
    const exited = once(running, 'exit')
    running.kill('SIGTERM')
    await exited
  }

  await start()
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    stop,
    start,
    freeze() {
      frozen = true
      child?.kill('SIGSTOP')
    },
    thaw() {
      frozen = false
      child?.kill('SIGCONT')
    },
  }
}
