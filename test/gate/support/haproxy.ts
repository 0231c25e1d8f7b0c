/**
 * Debian's HAProxy (2.6, built with Lua) for the gate's tests, run in the foreground (`-db`)
 * on loopback with its own config in a temporary directory, never as the system service.
 * The config is examples/gate/haproxy.cfg and the script examples/gate/voot-gate.lua, the
 * very files docs/gate.md shows, with the addresses (and, where a test says so, the script or
 * the gate's per-try timeout) replaced.
 */
import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { freePort, run, type ProxyAddresses, type RunningProxy } from './proxies.js'

export const HAPROXY = process.env.VOOT_GUARD_HAPROXY ?? '/usr/sbin/haproxy'
const EXAMPLES = new URL('../../../examples/gate/', import.meta.url)

/** How a test's HAProxy differs from the example besides its addresses. */
export interface HaproxyOptions {
  /** The Lua script to load instead of examples/gate/voot-gate.lua (its text). */
  readonly script?: string
  /** The gate's per-try timeout in ms (the example's is 6000), as written in the config. */
  readonly tryTimeout?: number | string
}

/** examples/gate/haproxy.cfg with the test's addresses, loading `scriptPath`. */
export async function haproxyConfig(
  port: number,
  addresses: ProxyAddresses,
  scriptPath: string,
  options: HaproxyOptions = {},
): Promise<string> {
  const text = await readFile(new URL('haproxy.cfg', EXAMPLES), 'utf8')
  const replaced = text
    .replace('lua-load /etc/haproxy/voot-gate.lua', `lua-load ${scriptPath}`)
    .replace('bind :8000', `bind 127.0.0.1:${port}`)
    .replace('^app\\.example\\.org(:[0-9]+)?$', '^127\\.0\\.0\\.1(:[0-9]+)?$')
    .replace('server gate 127.0.0.1:4181', `server gate 127.0.0.1:${addresses.gatePort}`)
    .replace(
      'http-request lua.voot-gate http://127.0.0.1:4181 6000',
      `http-request lua.voot-gate http://127.0.0.1:${addresses.gatePort} ${options.tryTimeout ?? 6000}`,
    )
    .replace('server app 127.0.0.1:8080', `server app 127.0.0.1:${addresses.appPort}`)
  // Every address replaced (outside comments): a test never talks to a port the example names.
  const directives = replaced.replace(/#.*$/gm, '')
  for (const left of ['4181', '8080', ':8000', 'app.example', '/etc/haproxy']) {
    if (directives.includes(left)) throw new Error(`examples/gate/haproxy.cfg changed: ${left} is left in the test's config`)
  }
  return replaced
}

/** Starts HAProxy with examples/gate/haproxy.cfg and voot-gate.lua in a directory of its own. */
export async function startHaproxy(addresses: ProxyAddresses, options: HaproxyOptions = {}): Promise<RunningProxy> {
  const port = await freePort()
  const dir = await mkdtemp(join(tmpdir(), 'voot-gate-haproxy-'))
  try {
    const script = join(dir, 'voot-gate.lua')
    if (options.script === undefined) await copyFile(fileURLToPath(new URL('voot-gate.lua', EXAMPLES)), script)
    else await writeFile(script, options.script)
    const config = await haproxyConfig(port, addresses, script, options)
    const file = join(dir, 'haproxy.cfg')
    await writeFile(file, config)
    // -db: foreground, no daemon, no master; its alerts go to the test's output on failure.
    return await run(HAPROXY, ['-db', '-f', file], port, dir, config)
  } catch (error) {
    // A config refused (here or by HAProxy) leaves no directory behind.
    await rm(dir, { recursive: true, force: true })
    throw error
  }
}

/**
 * Sends `request` (bytes exactly as given, such as two Host headers, which node:http refuses
 * to send) to 127.0.0.1:`port` and resolves with the first line of the answer.
 */
export function exchange(port: number, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(request))
    let answer = ''
    socket.setEncoding('latin1')
    socket.setTimeout(5_000, () => socket.destroy(new Error('no answer in 5 s')))
    socket.on('data', (chunk: string) => {
      answer += chunk
      const end = answer.indexOf('\r\n')
      if (end >= 0) {
        socket.destroy()
        resolve(answer.slice(0, end))
      }
    })
    socket.on('error', reject)
    socket.on('close', () => resolve(answer))
  })
}
