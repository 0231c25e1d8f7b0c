/**
 * examples/gate/voot-gate.service: systemd accepts it as written (`systemd-analyze verify`,
 * where systemd is installed: no warning, no unknown key), and the commands it runs are the
 * gate's own (its `--config` and `--check` read as options, not refused as a wrong command line).
 */
import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import { runCli } from '../../cli/index.js'

const UNIT = new URL('../../examples/gate/voot-gate.service', import.meta.url)
const ANALYZE = '/usr/bin/systemd-analyze'

describe('examples/gate/voot-gate.service', () => {
  it('passes systemd-analyze verify without a warning', async (ctx) => {
    if (!existsSync(ANALYZE)) ctx.skip(`${ANALYZE} is not installed (systemd); the unit is not verified here`)
    const dir = await mkdtemp(join(tmpdir(), 'voot-gate-unit-'))
    try {
      // The node it names must exist where it is verified: this one.
      const text = (await readFile(UNIT, 'utf8')).replaceAll('/usr/bin/node', process.execPath)
      const file = join(dir, 'voot-gate.service')
      await writeFile(file, text)
      const { stdout, stderr } = await promisify(execFile)(ANALYZE, ['verify', file], { timeout: 20_000 })
      expect(`${stdout}${stderr}`).toBe('')
      // And it can fail: a misspelt key is a warning.
      await writeFile(file, text.replace('ProtectSystem=strict', 'ProtectSystm=strict'))
      const broken = await promisify(execFile)(ANALYZE, ['verify', file], { timeout: 20_000 })
      expect(`${broken.stdout}${broken.stderr}`).toContain("Unknown key 'ProtectSystm'")
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })

  it('runs the gate with options the gate takes', async () => {
    const text = await readFile(UNIT, 'utf8')
    const commands = [...text.matchAll(/^Exec(?:StartPre|Start)=\S+ \S+voot-guard\.js (.+)$/gm)].map((match) =>
      (match[1] as string).split(' '),
    )
    expect(commands).toHaveLength(2)
    for (const args of commands) {
      let stderr = ''
      const code = await runCli(args, { stdout: { write: () => {} }, stderr: { write: (t: string) => (stderr += t) }, env: {} })
      // The file is not there: a configuration's problem (1), not a wrong command line (2).
      expect(code, stderr).toBe(1)
      expect(stderr).toContain('/etc/voot-gate/gate.yaml: (file): no such file')
    }
    expect(text).toContain('ExecReload=/bin/kill -HUP $MAINPID')
    // A reload must not serve a configuration whose policy tests fail: the gate refuses one
    // unless its command line allows it, so no command of the unit may.
    expect(text.split('\n').filter((line) => line.startsWith('Exec') && line.includes('--allow-failing-tests'))).toEqual([])
    for (const option of ['DynamicUser=yes', 'ProtectSystem=strict', 'NoNewPrivileges=yes', 'CapabilityBoundingSet='])
      expect(text).toContain(option)
  })
})
