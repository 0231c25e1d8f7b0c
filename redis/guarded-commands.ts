/**
 * Every Redis call of the shared tier goes through here: under its own deadline, past a
 * breaker that stops asking a failing Redis for a while, never handed to a client that is
 * not connected (its offline queue would grow), never more than `maxPending` at once. A
 * failed call resolves {@link FAILED}; it never rejects.
 *
 * @module
 */
import { type SharedCacheSignal } from '../src/adapter-kit.js'
import { createCircuitBreaker } from '../src/internal.js'
import type { CommandTarget, TierConnection } from './connection.js'

/** What a failed call resolves. */
export const FAILED: unique symbol = Symbol('redis call failed')

/** The operations named in error signals. */
export type Operation = Extract<SharedCacheSignal, { type: 'error' }>['operation']

/**
 * Settings of {@link createGuardedCommands}.
 */
export interface GuardedCommandSettings {
  readonly connection: TierConnection
  readonly timeout: number
  readonly maxPending: number
  readonly failureThreshold: number
  readonly cooldown: number
  /** Told of each failed call. */
  readonly onError: (operation: Operation, code: string) => void
}

/**
 * Guarded access to Redis.
 */
export interface GuardedCommands {
  /** Sends one command, routed by `key` (its first key) on a cluster; resolves its reply, or {@link FAILED}. */
  send(operation: Operation, args: string[], key?: string): Promise<unknown>
  /** Sends one command to one master (of {@link TierConnection.masters}); resolves its reply, or {@link FAILED}. */
  sendTo(target: CommandTarget, operation: Operation, args: string[]): Promise<unknown>
  /** Whether the breaker is open or the last call failed. */
  readonly unreachable: boolean
}

/**
 * Wraps a client in deadlines, a breaker and a bound on pending calls.
 */
export function createGuardedCommands(settings: GuardedCommandSettings): GuardedCommands {
  const { connection, timeout, maxPending, onError } = settings
  const breaker = createCircuitBreaker({ failureThreshold: settings.failureThreshold, cooldown: settings.cooldown, now: Date.now })
  let pending = 0
  let lastFailed = false

  function fail(operation: Operation, code: string): typeof FAILED {
    lastFailed = true
    onError(operation, code)
    return FAILED
  }

  async function call(target: CommandTarget, operation: Operation, args: string[], key: string | undefined): Promise<unknown> {
    const permit = breaker.admit()
    if (permit === undefined) return fail(operation, 'breaker_open')
    if (target.isReady === false) {
      permit.settle('failure')
      return fail(operation, 'not_ready')
    }
    if (pending >= maxPending) {
      permit.settle('neutral')
      return fail(operation, 'overloaded')
    }
    pending++
    let timer: NodeJS.Timeout | undefined
    const deadline = new Promise<typeof FAILED>((resolve) => {
      // Past the deadline, one more turn of the event loop: a reply that arrived while the
      // loop was busy elsewhere (its poll phase comes after the timers) still counts.
      timer = setTimeout(
        () =>
          setImmediate(() => {
            resolve(FAILED)
          }),
        timeout,
      )
    })
    let sent: Promise<unknown>
    try {
      sent = target.sendCommand(args, key)
    } catch (error) {
      sent = Promise.reject(error)
    }
    // Pending counts until the client itself settles the call, past the deadline too: a
    // frozen Redis holds them, and the bound keeps them from piling up.
    const settled = sent.then(
      (reply) => ({ reply }),
      (error: unknown) => ({ error }),
    )
    void settled.finally(() => pending--)
    const outcome = await Promise.race([settled, deadline])
    clearTimeout(timer)
    if (outcome === FAILED) {
      permit.settle('failure')
      return fail(operation, 'timeout')
    }
    if ('error' in outcome) {
      // An error reply (a script error, a wrong type) proves Redis answers: not a breaker failure.
      const replied = isErrorReply(outcome.error)
      permit.settle(replied ? 'neutral' : 'failure')
      return fail(operation, replied ? 'reply_error' : errorCode(outcome.error))
    }
    permit.settle('success')
    lastFailed = false
    return outcome.reply
  }

  return {
    get unreachable() {
      return lastFailed || breaker.state === 'open'
    },
    send: (operation, args, key) => call(connection, operation, args, key),
    sendTo: (target, operation, args) => call(target, operation, args, undefined),
  }
}

function isErrorReply(error: unknown): boolean {
  const name = (error as { name?: unknown } | null)?.name
  return name === 'ErrorReply' || name === 'ReplyError' || name === 'SimpleError' || name === 'BlobError'
}

/**
 * A short code for a client error: its `code` (`ECONNREFUSED`) or its class name, never its message.
 */
export function errorCode(error: unknown): string {
  const { code, name } = (error ?? {}) as { code?: unknown; name?: unknown }
  for (const candidate of [code, name]) {
    if (typeof candidate === 'string' && /^[A-Za-z0-9_]{1,64}$/.test(candidate)) return candidate
  }
  return 'error'
}
