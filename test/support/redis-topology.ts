/**
 * Throwaway Redis deployments from Debian's `redis-server` and `redis-cli`, for the tests,
 * the fleet benchmark and the soak test: a Redis Cluster of three masters
 * (`--cluster-enabled yes`, then `redis-cli --cluster create`) and a Sentinel setup (a
 * master, a replica, three sentinels). Everything listens on free loopback ports, keeps its
 * files in a temporary directory, and is stopped (SIGKILL if need be) by `stop()`, which
 * removes the directory. Nodes can be killed and restarted for the fault tests.
 *
 * @module
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { createClient } from 'redis'
import { freePort } from '../../demo/redis-server.js'

const run = promisify(execFile)

/** One redis-server (or sentinel) process on a fixed port, restartable. */
export interface RedisNode {
  readonly port: number
  readonly url: string
  /** SIGKILL, as a crash: no shutdown, no save. */
  kill(): Promise<void>
  /** Starts it again on the same port, with the same files (a cluster node keeps its id and slots). */
  start(): Promise<void>
  /** Whether its process runs. */
  readonly running: boolean
}

/** A running Redis Cluster. */
export interface RedisClusterFixture {
  /** Every master's node, in the order of their slot ranges. */
  readonly masters: readonly RedisNode[]
  /** `[{ url }]` of every master: the `rootNodes` of `createCluster`. */
  readonly rootNodes: readonly { url: string }[]
  /** Resolves once every running node reports `cluster_state:ok`. */
  healthy(): Promise<void>
  stop(): Promise<void>
}

/** A running Sentinel setup: the master set is named `name`. */
export interface RedisSentinelFixture {
  readonly name: string
  /** The first master, then its replica (their roles swap after a failover). */
  readonly servers: readonly RedisNode[]
  readonly sentinels: readonly RedisNode[]
  /** `[{ host, port }]` of every sentinel: the `sentinelRootNodes` of `createSentinel`. */
  readonly sentinelRootNodes: readonly { host: string; port: number }[]
  /** The server that the sentinels name as master now. */
  master(): Promise<RedisNode>
  stop(): Promise<void>
}

/** One command through redis-cli; its output trimmed. */
export async function redisCli(port: number, ...args: string[]): Promise<string> {
  const { stdout } = await run('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args], { timeout: 10_000 })
  return stdout.trim()
}

async function until(what: string, predicate: () => Promise<boolean>, timeout = 20_000): Promise<void> {
  const giveUpAt = Date.now() + timeout
  for (;;) {
    if (await predicate().catch(() => false)) return
    if (Date.now() > giveUpAt) throw new Error(`gave up waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

function startNode(port: number, args: readonly string[], dir: string): RedisNode {
  let child: ChildProcess | undefined
  const node: RedisNode = {
    port,
    url: `redis://127.0.0.1:${port}`,
    get running() {
      return child !== undefined && child.exitCode === null && child.signalCode === null
    },
    async start() {
      const started = spawn('redis-server', [...args], { cwd: dir, stdio: ['ignore', 'ignore', 'ignore'] })
      child = started
      const failed = new Promise<never>((_, reject) => {
        started.once('error', reject)
        started.once('exit', (code) => reject(new Error(`redis-server on ${port} exited with ${code}`)))
      })
      failed.catch(() => {})
      await Promise.race([until(`redis-server on ${port}`, async () => (await redisCli(port, 'PING')) === 'PONG'), failed])
    },
    async kill() {
      const running = child
      child = undefined
      if (running === undefined || running.exitCode !== null || running.signalCode !== null) return
      const exited = once(running, 'exit')
      running.kill('SIGKILL')
      await exited
    },
  }
  return node
}

const COMMON = ['--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--loglevel', 'warning']

/**
 * Starts a Redis Cluster of three masters (and `replicas` replicas per master), with a short
 * `cluster-node-timeout` so a killed master is noticed within about a second.
 */
export async function startRedisCluster(options: { replicas?: 0 | 1 } = {}): Promise<RedisClusterFixture> {
  const replicas = options.replicas ?? 0
  const dir = mkdtempSync(join(tmpdir(), 'vg-cluster-'))
  const nodes: RedisNode[] = []
  try {
    for (let i = 0; i < 3 * (1 + replicas); i++) {
      const port = await freePort()
      const args = [
        ...COMMON,
        '--port',
        String(port),
        '--cluster-enabled',
        'yes',
        '--cluster-config-file',
        `nodes-${port}.conf`,
        '--cluster-node-timeout',
        '1000',
        '--dir',
        dir,
      ]
      nodes.push(startNode(port, args, dir))
    }
    await Promise.all(nodes.map((node) => node.start()))
    const addresses = nodes.map((node) => `127.0.0.1:${node.port}`)
    await run('redis-cli', ['--cluster', 'create', ...addresses, '--cluster-replicas', String(replicas), '--cluster-yes'], {
      timeout: 30_000,
    })
  } catch (error) {
    await Promise.all(nodes.map((node) => node.kill()))
    rmSync(dir, { recursive: true, force: true })
    throw error
  }
  const masters = nodes.slice(0, 3)
  const fixture: RedisClusterFixture = {
    masters,
    rootNodes: masters.map((node) => ({ url: node.url })),
    async healthy() {
      await until('cluster_state:ok', async () => {
        for (const node of nodes) {
          if (!node.running) continue
          if (!(await redisCli(node.port, 'CLUSTER', 'INFO')).includes('cluster_state:ok')) return false
        }
        return true
      })
    },
    async stop() {
      await Promise.all(nodes.map((node) => node.kill()))
      rmSync(dir, { recursive: true, force: true })
    },
  }
  await fixture.healthy()
  return fixture
}

/**
 * Starts a master, one replica, and three sentinels watching them (quorum 2), with short
 * timeouts so a killed master is failed over within a few seconds.
 */
export async function startRedisSentinel(): Promise<RedisSentinelFixture> {
  const name = 'vg-master'
  const dir = mkdtempSync(join(tmpdir(), 'vg-sentinel-'))
  const servers: RedisNode[] = []
  const sentinels: RedisNode[] = []
  const all = (): RedisNode[] => [...servers, ...sentinels]
  try {
    const masterPort = await freePort()
    servers.push(startNode(masterPort, [...COMMON, '--port', String(masterPort), '--dir', dir], dir))
    await servers[0]!.start()
    const replicaPort = await freePort()
    const replicaArgs = [...COMMON, '--port', String(replicaPort), '--dir', dir, '--replicaof', '127.0.0.1', String(masterPort)]
    servers.push(startNode(replicaPort, replicaArgs, dir))
    await servers[1]!.start()
    await until('the replica in sync', async () => (await redisCli(replicaPort, 'INFO', 'replication')).includes('master_link_status:up'))
    for (let i = 0; i < 3; i++) {
      const port = await freePort()
      const config = join(dir, `sentinel-${port}.conf`)
      writeFileSync(
        config,
        [
          `port ${port}`,
          'bind 127.0.0.1',
          `dir ${dir}`,
          `sentinel monitor ${name} 127.0.0.1 ${masterPort} 2`,
          `sentinel down-after-milliseconds ${name} 500`,
          `sentinel failover-timeout ${name} 3000`,
          `sentinel parallel-syncs ${name} 1`,
          '',
        ].join('\n'),
      )
      sentinels.push(startNode(port, [config, '--sentinel'], dir))
    }
    await Promise.all(sentinels.map((node) => node.start()))
    // Every sentinel knows the replica and the other two sentinels: a failover can happen.
    await until('the sentinels to know each other', async () => {
      for (const node of sentinels) {
        const info = await redisCli(node.port, 'SENTINEL', 'MASTER', name)
        const fields = info.split('\n')
        const field = (key: string): number => Number(fields[fields.indexOf(key) + 1])
        if (field('num-other-sentinels') < 2 || field('num-slaves') < 1) return false
      }
      return true
    })
  } catch (error) {
    await Promise.all(all().map((node) => node.kill()))
    rmSync(dir, { recursive: true, force: true })
    throw error
  }
  return {
    name,
    servers,
    sentinels,
    sentinelRootNodes: sentinels.map((node) => ({ host: '127.0.0.1', port: node.port })),
    async master() {
      for (const sentinel of sentinels) {
        if (!sentinel.running) continue
        const [, port] = (await redisCli(sentinel.port, 'SENTINEL', 'GET-MASTER-ADDR-BY-NAME', name)).split('\n')
        const found = servers.find((server) => String(server.port) === port?.trim())
        if (found !== undefined) return found
      }
      throw new Error('no sentinel names a master')
    },
    async stop() {
      await Promise.all(all().map((node) => node.kill()))
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

/**
 * Every key a node holds with its raw value (strings as they are, sets as their members
 * joined by spaces): the view of anyone who can read that node.
 */
export async function everyKeyOn(url: string): Promise<{ key: string; value: string }[]> {
  const client = createClient({ url })
  client.on('error', () => {})
  await client.connect()
  try {
    const found: { key: string; value: string }[] = []
    for await (const keys of client.scanIterator({ MATCH: '*', COUNT: 500 })) {
      for (const key of keys) {
        const type = await client.type(key)
        const value = type === 'set' ? (await client.sMembers(key)).join(' ') : type === 'string' ? String(await client.get(key)) : type
        found.push({ key, value })
      }
    }
    return found
  } finally {
    client.destroy()
  }
}

/**
 * Moves one hash slot, with its keys, from one master to another, as `redis-cli --cluster
 * reshard` does (IMPORTING, MIGRATING, MIGRATE, then the new owner told to every master):
 * clients that still send the slot's keys to the old master get `MOVED`.
 */
export async function moveSlot(cluster: RedisClusterFixture, slot: number, from: RedisNode, to: RedisNode): Promise<void> {
  const fromId = await redisCli(from.port, 'CLUSTER', 'MYID')
  const toId = await redisCli(to.port, 'CLUSTER', 'MYID')
  await redisCli(to.port, 'CLUSTER', 'SETSLOT', String(slot), 'IMPORTING', fromId)
  await redisCli(from.port, 'CLUSTER', 'SETSLOT', String(slot), 'MIGRATING', toId)
  for (;;) {
    const keys = (await redisCli(from.port, 'CLUSTER', 'GETKEYSINSLOT', String(slot), '100')).split('\n').filter((key) => key !== '')
    if (keys.length === 0) break
    await redisCli(from.port, 'MIGRATE', '127.0.0.1', String(to.port), '', '0', '5000', 'KEYS', ...keys)
  }
  for (const node of [to, from, ...cluster.masters.filter((master) => master !== to && master !== from)]) {
    await redisCli(node.port, 'CLUSTER', 'SETSLOT', String(slot), 'NODE', toId)
  }
}
