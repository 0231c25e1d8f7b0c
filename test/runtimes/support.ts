// The runtimes suite's machinery: the packed package in a scratch app, the runtimes'
// binaries (from test/runtimes/node_modules), a stand-in group service on loopback, and the
// contract rows every runtime must answer.
import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'
import { cp, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises'
import { createServer, type Server } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { promisify } from 'node:util'
import { expect } from 'vitest'

const run = promisify(execFile)

export const here = dirname(fileURLToPath(import.meta.url))
export const root = resolve(here, '../..')
const tools = join(here, 'node_modules')

/** `required` (what .ci/run sets): a missing runtime fails the suite instead of skipping it. */
export const required = process.env['VOOT_GUARD_RUNTIMES'] === 'required'

/** The binaries, or why one is missing. */
export interface Runtimes {
  deno: string | undefined
  bun: string | undefined
  /** Node >= 22, for miniflare and wrangler. */
  node22: string | undefined
  edgeRuntime: string | undefined
  esbuild: string | undefined
}

function firstExisting(...paths: string[]): string | undefined {
  return paths.find((path) => existsSync(path))
}

function node22(): string | undefined {
  if (Number(process.versions.node.split('.')[0]) >= 22) return process.execPath
  const given = process.env['VOOT_GUARD_NODE22']
  if (given !== undefined && given !== '') return given
  const matrix = process.env['NODE_MATRIX_DIR'] ?? join(process.env['TMPDIR'] ?? tmpdir(), 'voot-guard-node-matrix')
  return firstExisting(join(matrix, '22', 'node_modules', `node-${process.platform}-${process.arch}`, 'bin', 'node'))
}

/** Finds each runtime; installing them is `npm ci --prefix test/runtimes` (and `scripts/node-binary.sh 22`). */
export function findRuntimes(): Runtimes {
  const platform = `${process.platform}-${process.arch}`
  return {
    // The packages' postinstall scripts only move the binary; without them it is in the platform package.
    deno: firstExisting(join(tools, '.bin', 'deno'), join(tools, '@deno', `${platform}-glibc`, 'deno')),
    bun: firstExisting(join(tools, 'bun', 'bin', 'bun.exe'), join(tools, '@oven', `bun-${platform}`, 'bin', 'bun')),
    node22: node22(),
    edgeRuntime: firstExisting(join(tools, 'edge-runtime', 'package.json')),
    esbuild: firstExisting(join(tools, 'esbuild', 'lib', 'main.js')),
  }
}

/** Why a runtime's rows cannot run here, or `undefined` when they can. */
export function missing(what: string, found: string | undefined): string | undefined {
  if (found !== undefined) return undefined
  const reason = `${what} is not installed: run \`npm ci --prefix test/runtimes\` (and \`bash scripts/node-binary.sh 22\` for Workers)`
  if (required) throw new Error(`VOOT_GUARD_RUNTIMES=required: ${reason}`)
  return reason
}

/**
 * Packs the package (`npm pack`, whose prepack builds) once, and lays out a scratch app:
 * `node_modules/voot-guard` is the tarball's content, its dependencies and hono are links to
 * the repository's own installed copies (no registry needed).
 */
export async function scratchApp(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'voot-guard-runtimes-'))
  const { stdout } = await run('npm', ['pack', '--json', '--silent', '--pack-destination', dir], { cwd: root, maxBuffer: 64 << 20 })
  const [{ filename }] = JSON.parse(stdout) as [{ filename: string }]
  const target = join(dir, 'node_modules', 'voot-guard')
  await mkdir(target, { recursive: true })
  await run('tar', ['-xzf', join(dir, filename), '-C', target, '--strip-components=1'])
  const packed = JSON.parse(await readFile(join(target, 'package.json'), 'utf8')) as { dependencies: Record<string, string> }
  for (const name of [...Object.keys(packed.dependencies), 'hono']) {
    const link = join(dir, 'node_modules', name)
    await mkdir(dirname(link), { recursive: true })
    await symlink(join(root, 'node_modules', name), link, 'dir')
  }
  await writeFile(
    join(dir, 'package.json'),
    JSON.stringify({ name: 'runtimes-app', private: true, type: 'module', dependencies: { 'voot-guard': '*', hono: '*' } }),
  )
  return dir
}

export async function removeScratch(dir: string | undefined): Promise<void> {
  if (dir !== undefined) await rm(dir, { recursive: true, force: true })
}

/** Copies files of the repository (examples, apps) into the scratch app. */
export async function copyIn(dir: string, from: string, to: string): Promise<string> {
  const destination = join(dir, to)
  await cp(join(root, from), destination, { recursive: true })
  return destination
}

/** Bundles `entry` with the esbuild of test/runtimes, as a runtime's users do. */
export async function bundle(
  esbuild: string,
  entry: string,
  outfile: string,
  options: { conditions: string[]; format: 'esm' | 'iife'; define?: Record<string, string> },
): Promise<void> {
  // Typed here, not from the package: test/runtimes/node_modules may not be installed.
  const { build } = (await import(pathToFileURL(esbuild).href)) as { build(options: Record<string, unknown>): Promise<unknown> }
  await build({
    entryPoints: [entry],
    outfile,
    bundle: true,
    platform: 'neutral',
    format: options.format,
    conditions: options.conditions,
    mainFields: ['module', 'main'],
    define: options.define ?? {},
    logLevel: 'error',
  })
}

/** The stand-in group service: three users, a switch that takes it down, and a count of calls per token. */
export interface StandIn {
  readonly baseUrl: string
  readonly calls: Map<string, number>
  down: boolean
  close(): Promise<void>
}

export const TOKENS = {
  staff: 'staff-token-1',
  /** A member of no group. */
  outsider: 'outsider-token-2',
  /** Refused by the service (401). */
  refused: 'refused-token-3',
  /** Asked only once the service is down. */
  late: 'late-token-4',
} as const

const STAFF_GROUP = { id: 'fc:org:example.org', displayName: 'Example org', type: 'fc:org', membership: { basic: 'admin' } }

export async function startStandIn(): Promise<StandIn> {
  const sockets = new Set<Socket>()
  const calls = new Map<string, number>()
  const state = { down: false }
  const server: Server = createServer((req, res) => {
    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1] ?? ''
    calls.set(token, (calls.get(token) ?? 0) + 1)
    if (state.down) return void req.socket.destroy()
    const send = (status: number, body: unknown): void => {
      res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify(body))
    }
    if (token === TOKENS.refused || token === '') return send(401, { message: 'Unauthorized' })
    const mine = token === TOKENS.staff ? [STAFF_GROUP] : []
    if (req.url === '/groups/me/groups') return send(200, mine)
    const id = decodeURIComponent(/^\/groups\/me\/groups\/([^/?]+)$/.exec(req.url ?? '')?.[1] ?? '')
    const group = mine.find((g) => g.id === id)
    return group === undefined ? send(404, { message: 'Not found' }) : send(200, group.membership)
  })
  server.on('connection', (socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
  })
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done))
  const { port } = server.address() as AddressInfo
  return Object.assign(state, {
    baseUrl: `http://127.0.0.1:${port}/groups`,
    calls,
    close: () =>
      new Promise<void>((done) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => done())
      }),
  })
}

/** A runtime's server as a child process: resolves with its URL once it prints `listening on <url>`. */
export async function startServer(
  command: string,
  args: string[],
  options: { cwd: string; env?: Record<string, string> },
): Promise<{ url: string; child: ChildProcess; output: () => string }> {
  const child = spawn(command, args, { cwd: options.cwd, env: { ...process.env, ...options.env }, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  const url = await new Promise<string>((found, failed) => {
    const timer = setTimeout(() => failed(new Error(`${command} did not start within 60 s:\n${output}`)), 60_000)
    const read = (chunk: Buffer): void => {
      output += chunk.toString()
      const match = /listening on (http:\/\/[^\s/]+)/.exec(output)
      if (match?.[1] !== undefined) {
        clearTimeout(timer)
        found(match[1])
      }
    }
    child.stdout.on('data', read)
    child.stderr.on('data', read)
    child.once('exit', (code) => {
      clearTimeout(timer)
      failed(new Error(`${command} exited with ${String(code)} before listening:\n${output}`))
    })
  })
  return { url, child, output: () => output }
}

/** Stops a child and resolves with its exit code (after `signal`, a well-behaved server exits 0). */
export function stop(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
  if (child.exitCode !== null) return Promise.resolve(child.exitCode)
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)))
  child.kill(signal)
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000)
  return exited.finally(() => clearTimeout(timer))
}

/**
 * The contract rows against one running app whose `/api/staff` is guarded by
 * `requireGroup('fc:org:example.org', 'admin')`; leaves the stand-in down. Resolves with the
 * responses' `x-authorize-traces` headers (test/runtimes/apps/worker-fetch.js sets it).
 */
export async function contractRows(url: string, standIn: StandIn): Promise<(string | null)[]> {
  const get = (token?: string): Promise<Response> =>
    fetch(`${url}/api/staff`, token === undefined ? {} : { headers: { authorization: `Bearer ${token}` } })
  const body = async (response: Response): Promise<unknown> => {
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8')
    return response.json()
  }

  const anonymous = await get()
  expect(anonymous.status).toBe(401)
  expect(anonymous.headers.get('www-authenticate')).toBe('Bearer realm="voot-guard-example"')
  expect(await body(anonymous)).toMatchObject({ error: 'unauthorized' })

  const staff = await get(TOKENS.staff)
  expect(staff.status).toBe(200)
  expect(await staff.json()).toMatchObject({ message: 'Hello, colleague' })
  const cold = standIn.calls.get(TOKENS.staff) ?? 0
  expect(cold).toBeGreaterThan(0)

  // Warm: the same token again is answered from the cache, with no upstream call.
  const warm = await get(TOKENS.staff)
  expect(warm.status).toBe(200)
  await warm.arrayBuffer()
  expect(standIn.calls.get(TOKENS.staff)).toBe(cold)

  const outsider = await get(TOKENS.outsider)
  expect(outsider.status).toBe(403)
  expect(outsider.headers.get('www-authenticate')).toBeNull()
  expect(await body(outsider)).toMatchObject({ error: 'forbidden' })

  const refused = await get(TOKENS.refused)
  expect(refused.status).toBe(401)
  expect(refused.headers.get('www-authenticate')).toBe('Bearer realm="voot-guard-example", error="invalid_token"')
  expect(await body(refused)).toMatchObject({ error: 'invalid_token' })

  standIn.down = true
  const down = await get(TOKENS.late)
  expect(down.status).toBe(503)
  expect(down.headers.get('retry-after')).toMatch(/^\d+$/)
  expect(await body(down)).toMatchObject({ error: 'temporarily_unavailable' })
  expect(standIn.calls.get(TOKENS.late)).toBeGreaterThan(0)

  const responses = [anonymous, staff, warm, outsider, refused, down]
  for (const response of responses) {
    const text = JSON.stringify(Object.fromEntries(response.headers))
    for (const token of Object.values(TOKENS)) expect(text).not.toContain(token)
  }
  return responses.map((response) => response.headers.get('x-authorize-traces'))
}
