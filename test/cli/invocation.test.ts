/**
 * One way to run the CLI in a clone, `npm run cli --`: the emulator (run from the sources),
 * the demo's guide and docs/cli.md all print that form, and the package's `cli` script is
 * what makes it work.
 */
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { runCli } from '../../cli/index.js'
import { CLONE_INVOCATION, INSTALLED_INVOCATION, invocationOf } from '../../cli/invocation.js'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  scripts: Record<string, string>
  bin: Record<string, string>
}

describe('the printed form of the command', () => {
  it('is npm run cli -- from the sources, npx voot-guard from the built package', () => {
    expect(invocationOf(new URL('../../bin/voot-guard.ts', import.meta.url).href)).toBe(CLONE_INVOCATION)
    expect(invocationOf('file:///app/node_modules/voot-guard/dist/bin/voot-guard.js')).toBe(INSTALLED_INVOCATION)
    // What each form runs: the `cli` script on the sources, the package's bin.
    expect(manifest.scripts.cli).toBe('tsx bin/voot-guard.ts')
    expect(Object.keys(manifest.bin)).toEqual(['voot-guard'])
  })

  it('is the one docs/cli.md gives for a clone', () => {
    const doc = readFileSync(new URL('../../docs/cli.md', import.meta.url), 'utf8')
    expect(doc).toContain(`\`${CLONE_INVOCATION} <command>\``)
    expect(doc).toMatch(new RegExp(`^${CLONE_INVOCATION} check `, 'm'))
    // No other way of running it from a clone is offered.
    expect(doc).not.toMatch(/tsx bin\/voot-guard|node bin\/voot-guard/)
  })

  it("is what the emulator prints, from the caller's io (npx voot-guard without one)", async () => {
    async function printed(invocation: string | undefined): Promise<string> {
      let stdout = ''
      const stop = new AbortController()
      const write = (text: string) => {
        stdout += text
        if (stdout.includes('Stop with Ctrl-C')) stop.abort()
      }
      const io = { stdout: { write }, stderr: { write: () => true }, env: {}, signal: stop.signal }
      expect(await runCli(['emulator', '--port', '0'], invocation === undefined ? io : { ...io, invocation })).toBe(0)
      return stdout
    }
    const clone = await printed(CLONE_INVOCATION)
    expect(clone).toMatch(/^ {2}npm run cli -- groups$/m)
    expect(clone).toMatch(/^ {2}npm run cli -- check --group fc:org:example\.org$/m)
    expect(await printed(undefined)).toMatch(/^ {2}npx voot-guard groups$/m)
  })

  it('is what bin/voot-guard.ts prints when a clone runs the emulator', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'bin/voot-guard.ts', 'emulator', '--port', '0'], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let output = ''
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk))
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk))
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve))
    const deadline = Date.now() + 15_000
    while (!output.includes('Stop with Ctrl-C')) {
      if (Date.now() > deadline || child.exitCode !== null) throw new Error(`the emulator did not start:\n${output}`)
      await new Promise((resolve) => setTimeout(resolve, 25))
    }
    child.kill('SIGINT')
    expect(await exited).toBe(0)
    expect(output).toMatch(/^ {2}npm run cli -- groups$/m)
    expect(output).not.toMatch(/^ {2}(npx )?voot-guard /m)
  })
})
