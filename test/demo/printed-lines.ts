/**
 * Checks every line of a demo's printed guide that a reader would act on: each token of
 * the table is accepted (or, the fault token, fails closed), each `curl` line gets the
 * status its comment promises (run through a shell when curl is installed), and the
 * command-line check, in the one form a clone runs the CLI with, reaches the decision the
 * guide says.
 */
import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { request } from 'undici'
import { expect } from 'vitest'
import { runCli } from '../../cli/index.js'
import { CLONE_INVOCATION } from '../../cli/invocation.js'
import type { Demo } from '../../demo/start.js'

const run = promisify(execFile)
const ROOT = fileURLToPath(new URL('../..', import.meta.url))

/** The environment for a pasted command: no proxy between it and loopback. */
export function pasteEnvironment(): NodeJS.ProcessEnv {
  const { http_proxy: _a, https_proxy: _b, HTTP_PROXY: _c, HTTPS_PROXY: _d, all_proxy: _e, ALL_PROXY: _f, ...env } = process.env
  return env
}

let curlInstalled: Promise<boolean> | undefined
/** Whether `curl` is on the PATH (asked once). */
export function curlAvailable(): Promise<boolean> {
  curlInstalled ??= run('curl', ['--version']).then(
    () => true,
    () => false,
  )
  return curlInstalled
}

/** Reads the URL and headers back out of a printed `curl -i [-H '...'] URL` line. */
export function parseCurl(command: string): { url: string; headers: Record<string, string> } {
  const words = [...command.matchAll(/'((?:[^']|'\\'')*)'|(\S+)/g)].map((match) => match[1] ?? match[2] ?? '')
  expect(words.slice(0, 2)).toEqual(['curl', '-i'])
  const headers: Record<string, string> = {}
  let url = ''
  for (let index = 2; index < words.length; index++) {
    const word = words[index] ?? ''
    if (word === '-H') {
      const [name = '', ...value] = (words[++index] ?? '').split(': ')
      headers[name.toLowerCase()] = value.join(': ')
    } else {
      url = word
    }
  }
  return { url, headers }
}

async function statusOf(url: string, headers: Record<string, string>): Promise<number> {
  const response = await request(url, { headers })
  await response.body.dump()
  return response.statusCode
}

/** The words of a printed command line, unquoting the shell's single quotes. */
function shellWords(text: string): string[] {
  return [...text.matchAll(/'((?:[^']|'\\'')*)'|(\S+)/g)].map((match) => match[1] ?? match[2] ?? '')
}

/**
 * Checks every actionable line of `printed` against the running `demo`. With `shell`, the
 * command-line check is also pasted into `sh` as printed (it runs `npm run cli`: slower).
 */
export async function checkPrintedLines(demo: Demo, printed: string, { shell = false } = {}): Promise<void> {
  const lines = printed.split('\n')
  const env = pasteEnvironment()

  // The token table: every user's token is a valid personal token; the fault token fails closed.
  const me = `${demo.appUrl}/api/me`
  for (const [user, token] of Object.entries(demo.tokens)) {
    expect(
      lines.some((line) => new RegExp(`^ {2}${user}\\s+${token}\\s`).test(line)),
      user,
    ).toBe(true)
    expect(await statusOf(me, { authorization: `Bearer ${token}` }), user).toBe(200)
  }
  expect(printed).toContain(`${demo.faultToken}  `)
  expect(await statusOf(me, { authorization: `Bearer ${demo.faultToken}` })).toBe(503)

  // Every command line is one the guide knows, and does what its comment says.
  const commands = lines.filter((line) => /^ {2}(curl |VOOT_TOKEN=|redis-cli )/.test(line)).map((line) => line.slice(2))
  const curls = commands.filter((command) => command.startsWith('curl '))
  expect(curls).toEqual(demo.curlLines.map((line) => line.command))
  for (const line of demo.curlLines) {
    const described = lines.indexOf(`  # ${line.description}`)
    expect(lines[described + 1], line.description).toBe(`  ${line.command}`)
    const parsed = parseCurl(line.command)
    expect(parsed).toEqual({ url: line.url, headers: line.headers })
    if (await curlAvailable()) {
      const { stdout } = await run('sh', ['-c', line.command], { env })
      expect(stdout.split('\r\n')[0], line.command).toMatch(new RegExp(`^HTTP/[\\d.]+ ${line.expectedStatus}\\b`))
    } else {
      expect(await statusOf(parsed.url, parsed.headers), line.description).toBe(line.expectedStatus)
    }
  }

  const checks = commands.filter((command) => command.startsWith('VOOT_TOKEN='))
  expect(checks).toHaveLength(1)
  const check = checks[0] ?? ''
  const prefix = /^VOOT_TOKEN=(\S+) (.*?) check /.exec(check)
  expect(prefix?.[2]).toBe(CLONE_INVOCATION)
  const token = shellWords(prefix?.[1] ?? '')[0]
  // The guide's refused user: the command line denies them, as the app does.
  const refused = demo.curlLines.find((line) => line.expectedStatus === 403)
  expect(refused?.headers.authorization).toBe(`Bearer ${token}`)
  let stdout = ''
  const code = await runCli(['check', ...shellWords(check.slice(prefix?.[0].length ?? 0))], {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: () => true },
    env: { VOOT_TOKEN: token },
  })
  expect({ code, verdict: stdout.split(/\s/)[0] }).toEqual({ code: 1, verdict: 'DENIED' })
  if (shell) {
    const pasted = await run('sh', ['-c', check], { env, cwd: ROOT }).then(
      ({ stdout: out }) => ({ code: 0, out }),
      (error: { code: number; stdout: string }) => ({ code: error.code, out: error.stdout }),
    )
    expect(pasted.code, pasted.out).toBe(1)
    expect(pasted.out).toMatch(/^DENIED/m)
  }

  // No other command: a redis-cli line only with a shared tier (test/demo/redis.test.ts runs it).
  expect(commands.length).toBe(curls.length + 1 + (demo.redisUrl === undefined ? 0 : 1))
}
