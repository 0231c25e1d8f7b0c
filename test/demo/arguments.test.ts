/**
 * The demo's command line: flags from one table; an unknown flag or a stray word is refused,
 * naming it, with the usage and exit code 2, in-process and as `npm start` runs it.
 */
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { describe, expect, it, vi } from 'vitest'
import { DEMO_FLAGS, DemoUsageError, demoUsage, parseDemoArguments, type DemoFlag } from '../../demo/arguments.js'
import { runDemoCommand } from '../../demo/start.js'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))

function usageError(args: string[], env: Record<string, string> = {}): string {
  try {
    parseDemoArguments(args, env)
  } catch (error) {
    expect(error).toBeInstanceOf(DemoUsageError)
    return (error as Error).message
  }
  throw new Error('no error was thrown')
}

describe('parseDemoArguments', () => {
  it('reads each flag of the table, with a value after a space or an =', () => {
    expect(parseDemoArguments([], {})).toEqual({ help: false, options: {} })
    expect(parseDemoArguments(['--framework', 'koa', '--dialect=openconext'], {})).toEqual({
      help: false,
      options: { framework: 'koa', dialect: 'openconext' },
    })
    expect(parseDemoArguments(['--redis'], {})).toEqual({ help: false, options: { redis: true } })
    expect(parseDemoArguments(['--redis'], { REDIS_URL: 'redis://127.0.0.1:6390' })).toEqual({
      help: false,
      options: { redis: 'redis://127.0.0.1:6390' },
    })
    expect(parseDemoArguments(['--help'], {})).toEqual({ help: true })
  })

  it('refuses an unknown flag, naming it and the flag it likely means', () => {
    expect(usageError(['--dialekt', 'openconext'])).toBe('unknown flag --dialekt (did you mean --dialect?)')
    expect(usageError(['--port', '8080'])).toBe('unknown flag --port')
  })

  it('refuses a stray word, naming it', () => {
    expect(usageError(['koa'])).toBe('unexpected argument "koa": flags start with --')
    expect(usageError(['--framework', 'koa', 'extra'])).toBe('unexpected argument "extra": flags start with --')
  })

  it('says what npm did when the flags came without the --', () => {
    // `npm start --framework koa`: npm keeps --framework (npm_config_framework=true) and passes `koa`.
    expect(usageError(['koa'], { npm_config_framework: 'true' })).toBe(
      'npm kept --framework for itself: write the flags after --, as in npm start -- --framework koa',
    )
    expect(usageError([], { npm_config_redis: 'true' })).toBe(
      'npm kept --redis for itself: write the flags after --, as in npm start -- --redis',
    )
  })

  it('refuses a bad or missing value, a value where none is taken, and a flag given twice', () => {
    expect(usageError(['--framework', 'rails'])).toBe('--framework "rails" is not one of express, koa, fastify, hono, fetch, nestjs')
    expect(usageError(['--dialect', 'surf'])).toBe('--dialect "surf" is not one of dataporten, openconext')
    expect(usageError(['--framework'])).toBe('--framework needs a value (NAME)')
    expect(usageError(['--framework', '--redis'])).toBe('--framework needs a value (NAME)')
    expect(usageError(['--redis=yes'])).toBe('--redis takes no value')
    expect(usageError(['--redis', '--redis'])).toBe('--redis is given twice')
  })

  it('takes a new flag as one more entry of the table, in the parser and the usage', () => {
    const mirror: DemoFlag = { name: 'mirror', value: 'FILE', help: 'a mirror in front of the app', apply: (options) => options }
    const flags = [...DEMO_FLAGS, mirror]
    expect(parseDemoArguments(['--mirror', 'gate.yaml'], {}, flags)).toEqual({ help: false, options: {} })
    expect(demoUsage(flags)).toMatch(/^ {2}--mirror FILE\s+a mirror in front of the app$/m)
  })

  it('lists every flag in the usage, with the -- that npm needs', () => {
    const usage = demoUsage()
    expect(usage).toMatch(/^Usage: npm start -- \[flags\]/)
    for (const flag of DEMO_FLAGS) expect(usage).toContain(`--${flag.name}`)
  })
})

describe('runDemoCommand', () => {
  it('prints the message and the usage to stderr and returns 2, starting nothing', async () => {
    let stdout = ''
    let stderr = ''
    const io = { stdout: { write: (text: string) => (stdout += text) }, stderr: { write: (text: string) => (stderr += text) } }
    expect(await runDemoCommand(['--dialekt', 'openconext'], {}, io, AbortSignal.abort())).toBe(2)
    expect(stdout).toBe('')
    expect(stderr).toBe(`npm start: unknown flag --dialekt (did you mean --dialect?)\n\n${demoUsage()}`)
  })

  it('prints the usage to stdout for --help and returns 0', async () => {
    let stdout = ''
    const io = { stdout: { write: (text: string) => (stdout += text) }, stderr: { write: () => true } }
    expect(await runDemoCommand(['--help'], {}, io, AbortSignal.abort())).toBe(0)
    expect(stdout).toBe(demoUsage())
  })

  it('runs the gate for --gate: prints its guide, stops on the signal, returns 0', async () => {
    let stdout = ''
    const io = { stdout: { write: (text: string) => (stdout += text) }, stderr: { write: () => true } }
    const stop = new AbortController()
    const running = runDemoCommand(['--gate'], {}, io, stop.signal)
    await vi.waitFor(() => expect(stdout).toContain('/_gate/auth-request'), { timeout: 15_000 })
    stop.abort()
    expect(await running).toBe(0)
    expect(stdout).toContain('Demo stopped.')
  })

  it('reads --services: both services, each once, in any order, alone', async () => {
    expect(parseDemoArguments(['--services', 'feide,openconext'], {})).toEqual({
      help: false,
      options: { services: ['feide', 'openconext'] },
    })
    expect(parseDemoArguments(['--services=openconext,feide'], {})).toEqual({ help: false, options: { services: ['feide', 'openconext'] } })
    for (const value of ['feide', 'feide,feide', 'feide,surf', 'feide,openconext,feide']) {
      expect(usageError(['--services', value])).toBe(
        `--services ${JSON.stringify(value)}: the demo serves feide,openconext (both, each once)`,
      )
    }
    let stderr = ''
    const io = { stdout: { write: () => true }, stderr: { write: (text: string) => (stderr += text) } }
    expect(await runDemoCommand(['--services', 'feide,openconext', '--dialect', 'openconext'], {}, io, AbortSignal.abort())).toBe(2)
    expect(stderr).toContain('npm start: --services runs alone: its app is an Express one of its own, so --dialect would change nothing')
  })

  it('refuses --gate beside a flag that would change nothing', async () => {
    let stderr = ''
    const io = { stdout: { write: () => true }, stderr: { write: (text: string) => (stderr += text) } }
    expect(await runDemoCommand(['--gate', '--framework', 'koa'], {}, io, AbortSignal.abort())).toBe(2)
    expect(stderr).toContain('npm start: --gate runs alone: it serves no app, so --framework would change nothing')
  })
})

describe('npm start with a word it does not know', () => {
  it('exits 2 with the word named and the usage, before starting anything', async () => {
    const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { scripts: Record<string, string> }
    const startArguments = (manifest.scripts.start ?? '').split(' ').slice(1)
    // Without npm's own view of the flags, whatever ran this test.
    const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('npm_config_')))
    const child = spawn(process.execPath, [...startArguments, 'koa'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
    const [code] = (await once(child, 'exit')) as [number | null]
    expect({ code, stdout }).toEqual({ code: 2, stdout: '' })
    expect(stderr).toBe(`npm start: unexpected argument "koa": flags start with --\n\n${demoUsage()}`)
  })
})
