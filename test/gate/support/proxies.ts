/**
 * Real proxies for the gate's tests: Debian's nginx (with `auth_request`) and Caddy, run in
 * the foreground on loopback with their own prefix and config, never as system services.
 * Their configs are examples/gate/nginx.conf and examples/gate/Caddyfile, the very files
 * docs/gate.md shows, with the addresses replaced by the test's free ports.
 *
 * Without the binary, a test is skipped with the reason printed; with
 * `VOOT_GUARD_PROXIES=required` (CI), it fails instead.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdtemp, readFile, rm, writeFile, mkdir } from 'node:fs/promises'
import { createServer, type IncomingMessage, type Server } from 'node:http'
import { connect, type AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TestContext } from 'vitest'
import { stopProcess } from '../../../bench/stop-process.js'

export const NGINX = process.env.VOOT_GUARD_NGINX ?? '/usr/sbin/nginx'
export const CADDY = process.env.VOOT_GUARD_CADDY ?? '/usr/bin/caddy'
const EXAMPLES = new URL('../../../examples/gate/', import.meta.url)

/** Whether missing proxies fail the tests (CI) instead of skipping them. */
export const PROXIES_REQUIRED = process.env.VOOT_GUARD_PROXIES === 'required'

const warned = new Set<string>()

/** Skips (or, when required, fails) a test that needs `binary`; the reason is printed once per binary. */
export function needBinary(ctx: TestContext, binary: string): void {
  if (existsSync(binary)) return
  const reason = `${binary} is not installed (apt-get install -y nginx caddy apache2); gate proxy test skipped`
  if (PROXIES_REQUIRED) throw new Error(`VOOT_GUARD_PROXIES=required, and ${reason}`)
  if (!warned.has(binary)) console.warn(reason)
  warned.add(binary)
  ctx.skip(reason)
}

/** A free port on 127.0.0.1 (closed again at once; the proxy binds it next). */
export async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

async function waitForPort(port: number, child: ChildProcess, output: () => string): Promise<void> {
  const deadline = Date.now() + 15_000
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`the proxy exited with ${child.exitCode}:\n${output()}`)
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1')
      socket.once('connect', () => {
        socket.destroy()
        resolve(true)
      })
      socket.once('error', () => resolve(false))
    })
    if (open) return
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  throw new Error(`the proxy did not listen on ${port}:\n${output()}`)
}

/** A running proxy. */
export interface RunningProxy {
  readonly url: string
  readonly port: number
  /** The config it runs, as written. */
  readonly config: string
  stop(): Promise<void>
}

/** Runs `command` in the foreground until it listens on `port`; `stop()` ends it and removes `dir`. */
export async function run(
  command: string,
  args: string[],
  port: number,
  dir: string,
  config: string,
  env: NodeJS.ProcessEnv = {},
): Promise<RunningProxy> {
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } })
  let output = ''
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()))
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()))
  try {
    await waitForPort(port, child, () => output)
  } catch (error) {
    child.kill('SIGKILL')
    throw error
  }
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    config,
    async stop() {
      await stopProcess(child)
      await rm(dir, { recursive: true, force: true })
    },
  }
}

/** The addresses written in the example configs, and the test's replacements. */
export interface ProxyAddresses {
  readonly gatePort: number
  readonly appPort: number
  /** More gates in nginx's `upstream voot_gate` block (the gate soak's fleet). */
  readonly moreGatePorts?: readonly number[]
}

/** examples/gate/nginx.conf with the test's addresses. */
export async function nginxServerBlock(port: number, addresses: ProxyAddresses): Promise<string> {
  const text = await readFile(new URL('nginx.conf', EXAMPLES), 'utf8')
  return text
    .replace('listen 8000;', `listen 127.0.0.1:${port};`)
    .replace(
      'server 127.0.0.1:4181;',
      [addresses.gatePort, ...(addresses.moreGatePorts ?? [])].map((gate) => `server 127.0.0.1:${gate};`).join('\n    '),
    )
    .replace('proxy_pass http://127.0.0.1:8080;', `proxy_pass http://127.0.0.1:${addresses.appPort};`)
}

/** How a test varies the nginx it starts. */
export interface NginxOptions {
  /** Adds a `default_server` answering 404 on the same port, as docs/gate.md advises. */
  readonly defaultServer?: boolean
  /** Rewrites the server block (to play what ingress-nginx generates). */
  readonly edit?: (server: string) => string
  /** Where nginx writes its error log (`warn`), kept after `stop()` (the gate soak prints its tail). */
  readonly errorLog?: string
}

/** Starts nginx with examples/gate/nginx.conf in its own prefix. */
export async function startNginx(addresses: ProxyAddresses, options: NginxOptions = {}): Promise<RunningProxy> {
  const port = await freePort()
  const dir = await mkdtemp(join(tmpdir(), 'voot-gate-nginx-'))
  for (const sub of ['logs', 'tmp']) await mkdir(join(dir, sub))
  const example = await nginxServerBlock(port, addresses)
  const edited = options.edit === undefined ? example : options.edit(example)
  if (edited === example && options.edit !== undefined) throw new Error('the edit changed nothing in examples/gate/nginx.conf')
  const fallback = `server {\n    listen 127.0.0.1:${port} default_server;\n    server_name _;\n    return 404;\n}\n`
  const server = options.defaultServer === true ? `${edited}\n${fallback}` : edited
  const config = `
worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${options.errorLog ?? `${dir}/logs/error.log`} warn;
events { worker_connections 256; }
http {
    access_log off;
    client_body_temp_path ${dir}/tmp/body;
    proxy_temp_path ${dir}/tmp/proxy;
    fastcgi_temp_path ${dir}/tmp/fastcgi;
    uwsgi_temp_path ${dir}/tmp/uwsgi;
    scgi_temp_path ${dir}/tmp/scgi;
${server}
}
`
  const file = join(dir, 'nginx.conf')
  await writeFile(file, config)
  return run(NGINX, ['-p', dir, '-c', file, '-g', 'daemon off;'], port, dir, server)
}

/** examples/gate/Caddyfile with the test's addresses. */
export async function caddySite(port: number, addresses: ProxyAddresses): Promise<string> {
  const text = await readFile(new URL('Caddyfile', EXAMPLES), 'utf8')
  return text
    .replace('app.example.org {', `http://127.0.0.1:${port} {`)
    .replaceAll('127.0.0.1:4181', `127.0.0.1:${addresses.gatePort}`)
    .replace('reverse_proxy 127.0.0.1:8080', `reverse_proxy 127.0.0.1:${addresses.appPort}`)
}

/**
 * Starts Caddy with examples/gate/Caddyfile, admin API off, state in its own directory.
 * With `siteHost`, the site keeps a host name (`http://<siteHost>:<port>`, bound to
 * 127.0.0.1), so Caddy routes by host as it would in production.
 */
export async function startCaddy(addresses: ProxyAddresses, options: { siteHost?: string } = {}): Promise<RunningProxy> {
  const port = await freePort()
  const dir = await mkdtemp(join(tmpdir(), 'voot-gate-caddy-'))
  const example = await caddySite(port, addresses)
  const site =
    options.siteHost === undefined
      ? example
      : example.replace(`http://127.0.0.1:${port} {`, `http://${options.siteHost}:${port} {\n\tbind 127.0.0.1`)
  const config = `{
	admin off
	auto_https off
}
${site}`
  const file = join(dir, 'Caddyfile')
  await writeFile(file, config)
  return run(CADDY, ['run', '--config', file, '--adapter', 'caddyfile'], port, dir, site, {
    HOME: dir,
    XDG_DATA_HOME: join(dir, 'data'),
    XDG_CONFIG_HOME: join(dir, 'config'),
  })
}

/** What the app behind the proxy saw of one request. */
export interface AppSaw {
  readonly method: string
  readonly url: string
  readonly headers: IncomingMessage['headers']
}

/** A plain node:http app that knows nothing of the gate: it echoes what it received as JSON. */
export async function startEchoApp(): Promise<{ port: number; seen: AppSaw[]; server: Server; close(): Promise<void> }> {
  const seen: AppSaw[] = []
  const server = createServer((req, res) => {
    const saw = { method: req.method ?? '', url: req.url ?? '', headers: req.headers }
    seen.push(saw)
    req.resume()
    const body = JSON.stringify(saw)
    // Cacheable, as many real apps answer: the snippets must replace this behind the gate, not add to it.
    res.writeHead(200, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(body),
      'cache-control': 'public, max-age=600',
    })
    res.end(body)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    port: (server.address() as AddressInfo).port,
    seen,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
