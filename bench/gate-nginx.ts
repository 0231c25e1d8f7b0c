/**
 * nginx for the gate's benchmark: examples/gate/nginx.conf (the snippet docs/gate.md shows
 * and the tests run) in front of the floor app, and the same server block without
 * `auth_request` as the control. Run in the foreground in a directory of its own. Client
 * connections are kept for the whole run: at nginx's default of 1,000 requests per
 * connection, the load generator met a closing connection a few times per round, which it
 * counted as failed requests of either side.
 *
 * @module
 */
import { spawn } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ROOT } from './build.js'
import { freePort } from './run-context.js'
import { stopProcess } from './stop-process.js'

/** Where Debian puts nginx. */
export const NGINX = process.env.VOOT_GUARD_NGINX ?? '/usr/sbin/nginx'

/** A running nginx. */
export interface BenchNginx {
  readonly port: number
  /** The master's pid: it and its worker are the proxy's CPU. */
  readonly pid: number
  stop(): Promise<void>
}

/** The server block: with the gate (`gatePort`), or without `auth_request` (`undefined`). */
function serverBlock(port: number, appPort: number, gatePort: number | undefined): string {
  // The compiled tree has no examples/: `bench/gate.ts` names the repository's.
  const examples = process.env.VOOT_GATE_EXAMPLES ?? join(ROOT, 'examples', 'gate')
  const example = readFileSync(join(examples, 'nginx.conf'), 'utf8')
    .replace('listen 8000;', `listen 127.0.0.1:${port};`)
    .replace('server 127.0.0.1:4181;', `server 127.0.0.1:${gatePort ?? 1};`)
    .replace('proxy_pass http://127.0.0.1:8080;', `proxy_pass http://app_upstream;`)
  const app = `upstream app_upstream {\n    server 127.0.0.1:${appPort};\n    keepalive 32;\n}\n`
  const withKeepalive = example.replace(
    '        proxy_pass http://app_upstream;',
    '        proxy_pass http://app_upstream;\n        proxy_http_version 1.1;\n        proxy_set_header Connection "";',
  )
  if (gatePort !== undefined) return app + withKeepalive
  // The control: the same proxying, no auth_request.
  return app + withKeepalive.replace(/ {8}auth_request \/_gate_auth;\n/, '')
}

/** Starts nginx on a free port in front of `appPort`, asking the gate at `gatePort` (or not). */
export async function startBenchNginx(appPort: number, gatePort: number | undefined): Promise<BenchNginx> {
  const port = await freePort()
  const dir = await mkdtemp(join(tmpdir(), 'voot-gate-bench-nginx-'))
  await mkdir(join(dir, 'logs'))
  const file = join(dir, 'nginx.conf')
  await writeFile(
    file,
    `worker_processes 1;\npid ${dir}/nginx.pid;\nerror_log ${dir}/logs/error.log error;\nevents { worker_connections 1024; }\n` +
      `http {\n    access_log off;\n    keepalive_requests 1000000;\n    client_body_temp_path ${dir}/body;\n    proxy_temp_path ${dir}/proxy;\n` +
      `    fastcgi_temp_path ${dir}/fastcgi;\n    uwsgi_temp_path ${dir}/uwsgi;\n    scgi_temp_path ${dir}/scgi;\n` +
      `${serverBlock(port, appPort, gatePort)}\n}\n`,
  )
  const child = spawn(NGINX, ['-p', dir, '-c', file, '-g', 'daemon off;'], { stdio: 'ignore' })
  const deadline = Date.now() + 10_000
  while (!existsSync(join(dir, 'nginx.pid'))) {
    if (Date.now() > deadline || child.exitCode !== null) throw new Error('nginx did not start')
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  await new Promise((resolve) => setTimeout(resolve, 200))
  return {
    port,
    pid: child.pid ?? -1,
    async stop() {
      await stopProcess(child)
      await rm(dir, { recursive: true, force: true })
    },
  }
}
