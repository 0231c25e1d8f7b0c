// The few lines that let the shared cache tier use an ioredis client instead of node-redis
// (docs/redis.md shows them; test/redis/ioredis.test.ts runs them against a real Redis).
import type { Redis } from 'ioredis'
import type { RedisClientLike } from 'voot-guard/redis'

export function fromIoredis(redis: Redis): RedisClientLike {
  return {
    get isReady() {
      return redis.status === 'ready'
    },
    sendCommand: ([command, ...args]) => redis.call(command!, ...args),
    duplicate() {
      const subscriber = redis.duplicate({ lazyConnect: true })
      return {
        on: (event, listener) => subscriber.on(event, listener),
        connect: () => subscriber.connect(),
        subscribe: async (channel, listener) => {
          subscriber.on('message', (from: string, message: string) => from === channel && listener(message))
          await subscriber.subscribe(channel)
        },
        destroy: () => subscriber.disconnect(),
      }
    },
  }
}
