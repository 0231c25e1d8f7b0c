// The packed package in every JavaScript runtime it supports, bundled or loaded the way
// that runtime's users do: Workers (miniflare, with and without nodejs_compat: the fetch
// guard bundled by esbuild, and the Hono example bundled by wrangler), Vercel's Edge
// (edge-runtime running the Next.js route handler example), Deno (`--allow-net` alone) and
// Bun (the examples, stopped by a signal, which closes the resolver). Each answers the same
// contract rows against a stand-in group service on loopback; the tracing channels are
// checked where the runtime has node:diagnostics_channel (Workers with nodejs_compat, Deno, Bun).
//
// The runtimes come from test/runtimes/package.json (`npm ci --prefix test/runtimes`);
// miniflare and wrangler run on Node 22 (`bash scripts/node-binary.sh 22`). Where one is
// missing its rows are skipped with the reason, except under VOOT_GUARD_RUNTIMES=required
// (.ci/run), where a missing runtime fails.
import { execFile } from 'node:child_process'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { pathToFileURL } from 'node:url'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import {
  bundle,
  contractRows,
  copyIn,
  findRuntimes,
  here,
  missing,
  removeScratch,
  scratchApp,
  startServer,
  startStandIn,
  stop,
  type StandIn,
} from './support.js'

const runtimes = findRuntimes()
const skip = {
  workers: missing('Node 22 (for miniflare)', runtimes.node22) ?? missing('esbuild', runtimes.esbuild),
  edge: missing('edge-runtime', runtimes.edgeRuntime) ?? missing('esbuild', runtimes.esbuild),
  deno: missing('deno', runtimes.deno),
  bun: missing('bun', runtimes.bun),
}
const anything = Object.values(skip).some((reason) => reason === undefined)

let app: string | undefined
let standIn: StandIn

beforeAll(async () => {
  if (anything) app = await scratchApp()
}, 180_000)
afterAll(() => removeScratch(app))
beforeEach(async () => {
  standIn = await startStandIn()
})
afterEach(() => standIn.close())

function scratch(): string {
  if (app === undefined) throw new Error('no scratch app')
  return app
}

describe.skipIf(skip.workers !== undefined)(`Cloudflare Workers (miniflare) ${skip.workers ?? ''}`, () => {
  const node22 = runtimes.node22 ?? ''
  const serve = (script: string, flags: string): ReturnType<typeof startServer> =>
    startServer(node22, [join(here, 'workerd-server.mjs'), script, flags, JSON.stringify({ VOOT_BASE_URL: standIn.baseUrl })], {
      cwd: here,
    })

  for (const flags of ['', 'nodejs_compat']) {
    it(
      `voot-guard/fetch bundled by esbuild (workerd condition), ${flags === '' ? 'no compatibility flag' : flags}`,
      { timeout: 120_000 },
      async () => {
        const dir = scratch()
        const entry = await copyIn(dir, 'test/runtimes/apps/worker-fetch.js', 'worker/index.js')
        const out = join(dir, 'worker', `bundle${flags}.js`)
        // wrangler's own conditions; no node:* left to resolve, so no flag is needed.
        await bundle(runtimes.esbuild ?? '', entry, out, { conditions: ['workerd', 'worker', 'browser'], format: 'esm' })
        const server = await serve(out, flags)
        try {
          const traces = await contractRows(server.url, standIn)
          // The tracing channels: published with nodejs_compat, absent (and no error) without it.
          if (flags === '') expect(new Set(traces)).toEqual(new Set(['absent']))
          else expect(Number(traces.at(-1))).toBeGreaterThanOrEqual(4)
        } finally {
          await stop(server.child)
        }
      },
    )

    it(`the Hono example bundled by wrangler, ${flags === '' ? 'no compatibility flag' : flags}`, { timeout: 120_000 }, async () => {
      const dir = scratch()
      const project = await copyIn(dir, 'examples/workers-hono', `workers-hono${flags}`)
      const outdir = join(project, 'dist')
      const args = [join(here, 'node_modules', 'wrangler', 'bin', 'wrangler.js'), 'deploy', '--dry-run', '--outdir', outdir]
      if (flags !== '') args.push('--compatibility-flags', flags)
      const built = await startBuild(node22, args, project)
      expect(built.code, built.output).toBe(0)
      const server = await serve(join(outdir, 'index.js'), flags)
      try {
        await contractRows(server.url, standIn)
      } finally {
        await stop(server.child)
      }
    })
  }
})

describe.skipIf(skip.edge !== undefined)(`Vercel's Edge (edge-runtime) ${skip.edge ?? ''}`, () => {
  it('the Next.js route handler example, bundled with the edge-light condition', { timeout: 120_000 }, async () => {
    const dir = scratch()
    await copyIn(dir, 'examples/nextjs-edge/app/api/staff/route.ts', 'edge/route.ts')
    const entry = await copyIn(dir, 'test/runtimes/apps/edge-entry.js', 'edge/entry.js')
    const out = join(dir, 'edge', 'bundle.js')
    // Next.js inlines process.env into an edge bundle; the same here.
    await bundle(runtimes.esbuild ?? '', entry, out, {
      conditions: ['edge-light', 'worker', 'browser'],
      format: 'iife',
      define: { 'process.env.VOOT_BASE_URL': JSON.stringify(standIn.baseUrl) },
    })
    const { EdgeRuntime, runServer } = (await import(
      pathToFileURL(join(here, 'node_modules', 'edge-runtime', 'dist', 'index.js')).href
    )) as EdgeRuntimeModule
    const { readFile } = await import('node:fs/promises')
    const runtime = new EdgeRuntime({ initialCode: await readFile(out, 'utf8') })
    const server = await runServer({ runtime, port: 0, host: '127.0.0.1' })
    try {
      await contractRows(server.url.replace(/\/$/, ''), standIn)
    } finally {
      await server.close()
    }
  })
})

describe.skipIf(skip.deno !== undefined)(`Deno ${skip.deno ?? ''}`, () => {
  it('publishes the tracing channels (--allow-net alone)', { timeout: 60_000 }, async () => {
    const printed = await channelsIn(runtimes.deno ?? '', (script) => [
      'run',
      '--allow-net',
      '--no-lock',
      '--no-prompt',
      script,
      standIn.baseUrl,
    ])
    expect(printed).toEqual({ allowed: true, seen: ['allowed:member'] })
  })

  it('the Deno.serve example with --allow-net alone; SIGINT closes the resolver', { timeout: 120_000 }, async () => {
    const dir = scratch()
    const main = await copyIn(dir, 'examples/deno/main.ts', 'deno/main.ts')
    const server = await startServer(runtimes.deno ?? '', ['run', '--allow-net', '--no-lock', '--no-prompt', main, standIn.baseUrl, '0'], {
      cwd: dir,
      env: { DENO_NO_UPDATE_CHECK: '1', NO_COLOR: '1' },
    })
    try {
      await contractRows(server.url, standIn)
    } finally {
      expect(await stop(server.child, 'SIGINT')).toBe(0)
    }
    expect(server.output()).toContain('closed')
    expect(server.output()).not.toMatch(/error|warning/i)
  })
})

describe.skipIf(skip.bun !== undefined)(`Bun ${skip.bun ?? ''}`, () => {
  it('publishes the tracing channels', { timeout: 60_000 }, async () => {
    const printed = await channelsIn(runtimes.bun ?? '', (script) => [script, standIn.baseUrl])
    expect(printed).toEqual({ allowed: true, seen: ['allowed:member'] })
  })

  it('the Bun.serve example; SIGTERM closes the resolver', { timeout: 120_000 }, async () => {
    const dir = scratch()
    const main = await copyIn(dir, 'examples/bun/server.ts', 'bun/server.ts')
    const server = await startServer(runtimes.bun ?? '', [main], { cwd: dir, env: { VOOT_BASE_URL: standIn.baseUrl, PORT: '0' } })
    try {
      await contractRows(server.url, standIn)
    } finally {
      expect(await stop(server.child, 'SIGTERM')).toBe(0)
    }
    expect(server.output()).toContain('closed')
    expect(server.output()).not.toMatch(/error/i)
  })
})

/** Runs test/runtimes/apps/channels.js in a runtime; resolves with what it printed. */
async function channelsIn(command: string, args: (script: string) => string[]): Promise<unknown> {
  const script = await copyIn(scratch(), 'test/runtimes/apps/channels.js', 'channels.js')
  const { stdout } = await promisify(execFile)(command, args(script), { cwd: scratch(), env: { ...process.env, NO_COLOR: '1' } })
  return JSON.parse(stdout.trim().split('\n').at(-1) ?? '')
}

async function startBuild(command: string, args: string[], cwd: string): Promise<{ code: number | null; output: string }> {
  const { spawn } = await import('node:child_process')
  const child = spawn(command, args, {
    cwd,
    env: { ...process.env, WRANGLER_SEND_METRICS: 'false', CI: 'true', WRANGLER_LOG_PATH: join(cwd, '.wrangler-logs') },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()))
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()))
  const code = await new Promise<number | null>((done) => child.once('exit', done))
  return { code, output }
}

/** What the suite uses of edge-runtime, typed here: test/runtimes/node_modules may not be installed. */
interface EdgeRuntimeModule {
  EdgeRuntime: new (options: { initialCode: string }) => unknown
  runServer(options: { runtime: unknown; port: number; host: string }): Promise<{ url: string; close(): Promise<void> }>
}
