/**
 * The child side of a benchmark process: answers the parent's commands over the IPC
 * channel and exits when the parent goes away, so that nothing outlives a run.
 *
 * @module
 */
import { measureBurn } from './burn.js'

/** A command handler: receives the command's argument, returns a JSON-able result. */
export type CommandHandler = (argument: unknown) => unknown

interface Command {
  readonly id: number
  readonly command: string
  readonly argument?: unknown
}

/**
 * Answers commands from the parent (plus the built-in `cpu`, `memory` and `burnCost`) and announces
 * `ready` with `payload`.
 */
export function serveParent(handlers: Readonly<Record<string, CommandHandler>>, payload: unknown): void {
  const send = process.send?.bind(process)
  if (send === undefined) throw new Error('a benchmark child must be started with an IPC channel')
  const builtIn: Record<string, CommandHandler> = {
    // CPU time of this process in microseconds, with a wall clock in nanoseconds, so the
    // parent can tell whether the server (not the load generator) was the bottleneck.
    cpu: () => {
      const usage = process.cpuUsage()
      return { user: usage.user, system: usage.system, wallNs: process.hrtime.bigint().toString() }
    },
    memory: () => process.memoryUsage(),
    // What one call of figure 2's burn control costs here (see burn.ts).
    burnCost: () => measureBurn(),
  }
  process.on('message', (message: Command) => {
    const handler = handlers[message.command] ?? builtIn[message.command]
    void (async () => {
      try {
        if (handler === undefined) throw new Error(`unknown command ${message.command}`)
        const result = await handler(message.argument)
        send({ id: message.id, result })
      } catch (error) {
        send({ id: message.id, error: error instanceof Error ? error.message : String(error) })
      }
    })()
  })
  // The parent is gone (finished, crashed or killed): stop, whatever is still open.
  process.on('disconnect', () => process.exit(0))
  send({ id: 0, result: payload })
}
