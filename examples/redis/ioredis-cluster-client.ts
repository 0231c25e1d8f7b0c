// The lines that let the shared cache tier use ioredis's Cluster instead of node-redis's
// createCluster (docs/redis.md shows them; test/redis/cluster.test.ts runs them against a
// real three-master cluster). ioredis routes each command by its keys and follows MOVED/ASK;
// masters() lets invalidate() of every token SCAN each master.
import type { Cluster } from 'ioredis'
import type { RedisClientLike } from 'voot-guard/redis'

export function fromIoredisCluster(cluster: Cluster): RedisClientLike {
  return {
    get isReady() {
      return cluster.status === 'ready'
    },
    sendCommand: ([command, ...args]) => cluster.call(command!, ...args),
    masters: () =>
      cluster.nodes('master').map((node) => ({
        get isReady() {
          return node.status === 'ready'
        },
        sendCommand: ([command, ...args]) => node.call(command!, ...args),
      })),
    duplicate() {
      const subscriber = cluster.duplicate(undefined, { lazyConnect: true })
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
