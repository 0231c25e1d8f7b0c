/**
 * The tier's pub/sub subscription: invalidations published by any instance reach every
 * instance's listeners, typically within milliseconds.
 *
 * A message is `<instance id> <token id as base64url>` or `<instance id> *`; an instance
 * skips its own (it told its listeners when it published). Messages published while this
 * connection was down are lost, so when it comes back every listener is told to drop
 * everything: missed invalidations never leave an L1 entry behind.
 *
 * @module
 */
import { randomBytes } from 'node:crypto'
import type { SharedCacheSignal } from '../src/adapter-kit.js'
import type { RedisSubscriberLike } from './client.js'
import type { TierConnection } from './connection.js'
import { errorCode } from './guarded-commands.js'
import { TOKEN_ID_BYTES } from './keys.js'

/**
 * The subscription of one tier.
 */
export interface InvalidationBus {
  /** The message that announces the invalidation of one token (or of every token). */
  message(tokenId?: string): string
  /** Ends the subscription. */
  close(): void
}

/**
 * Opens the subscription (on a duplicate of the app's client, or a sentinel client's own pub/sub).
 */
export function createInvalidationBus(
  client: Pick<TierConnection, 'subscriber'>,
  channel: string,
  emit: (signal: SharedCacheSignal) => void,
  onError: (code: string) => void,
): InvalidationBus {
  const instance = randomBytes(9).toString('base64url')
  let subscriber: RedisSubscriberLike | undefined
  let closed = false
  let wasReady = false
  let failedSinceReady = false

  function receive(message: string): void {
    const space = message.indexOf(' ')
    if (space < 0 || message.slice(0, space) === instance) return
    const target = message.slice(space + 1)
    if (target === '*') {
      emit({ type: 'invalidate' })
      return
    }
    const tokenId = Buffer.from(target, 'base64url')
    // Anything else on the channel is not ours: ignored.
    if (tokenId.length === TOKEN_ID_BYTES && tokenId.toString('base64url') === target) {
      emit({ type: 'invalidate', tokenId: tokenId.toString('latin1') })
    }
  }

  try {
    subscriber = client.subscriber()
    subscriber.on('error', (error) => {
      // A reconnecting client reports every failed attempt; one report per outage is enough.
      if (failedSinceReady) return
      failedSinceReady = true
      onError(errorCode(error))
    })
    subscriber.on('ready', () => {
      failedSinceReady = false
      // Back after an outage: invalidations published meanwhile were missed.
      if (wasReady && !closed) emit({ type: 'invalidate' })
      wasReady = true
    })
    subscriber
      .connect()
      .then(async () => {
        // Closed while connecting: `destroy()` found no socket yet, so it goes now.
        if (closed) subscriber?.destroy()
        else await subscriber?.subscribe(channel, receive)
      })
      .catch((error: unknown) => {
        if (!closed) onError(errorCode(error))
      })
  } catch (error) {
    onError(errorCode(error))
  }

  return {
    message: (tokenId) => `${instance} ${tokenId === undefined ? '*' : Buffer.from(tokenId, 'latin1').toString('base64url')}`,
    close() {
      if (closed) return
      closed = true
      try {
        subscriber?.destroy()
      } catch {
        // Already closed.
      }
    },
  }
}
