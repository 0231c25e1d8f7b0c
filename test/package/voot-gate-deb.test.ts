/**
 * The Debian package as an operator gets it (DESIGN section 7): installed with `dpkg -i` on
 * this machine, the packaged config run as voot-gate.service runs it (as the voot-gate user,
 * with its environment file, the unit's own command lines), Debian's nginx in front of an app
 * asking the installed gate, a reinstall over an edited config, and a purge.
 *
 * It installs packages, so it runs only when asked: VOOT_GATE_PACKAGE_TEST=1, as root, after
 * `npm run package:gate` (.ci/run does all three). Elsewhere it skips at once, so `npm test` on a
 * contributor's machine never installs anything.
 */
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest'
import { ORG_ID, type Emulator } from '../../testing/index.js'
import { startGateEmulator } from '../gate/support/gate-harness.js'
import { freePort, startEchoApp, startNginx, type RunningProxy } from '../gate/support/proxies.js'
import { appSaw, send } from '../gate/support/raw-request.js'

const ASKED = process.env.VOOT_GATE_PACKAGE_TEST === '1'
const DIST = join(import.meta.dirname, '..', '..', 'dist-package')
const UNIT = '/lib/systemd/system/voot-gate.service'
const CONFIG = '/etc/voot-gate/gate.yaml'
const ENVIRONMENT = '/etc/voot-gate/environment'

const sh = (command: string, args: string[]) => execFileSync(command, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })

/** The unit's `KEY=value` lines (the last of each key). */
function unitValues(key: string): string[] {
  return readFileSync(UNIT, 'utf8')
    .split('\n')
    .filter((line) => line.startsWith(`${key}=`))
    .map((line) => line.slice(key.length + 1))
}

/** The environment file as systemd reads it: `KEY=value` lines, comments skipped. */
function environmentFile(): Record<string, string> {
  const values: Record<string, string> = {}
  for (const line of readFileSync(ENVIRONMENT, 'utf8').split('\n')) {
    const match = /^([A-Z_][A-Z0-9_]*)=(.*)$/.exec(line)
    if (match !== null) values[match[1]!] = match[2]!
  }
  return values
}

/**
 * A command line of the unit, run as the unit runs it: as User=/Group= (setpriv, util-linux),
 * with only the EnvironmentFile's variables and a PATH on which no Node could be found.
 */
function asTheUnit(commandLine: string): { file: string; args: string[]; env: Record<string, string> } {
  expect(unitValues('User')).toEqual(['voot-gate'])
  expect(unitValues('EnvironmentFile')).toEqual([ENVIRONMENT])
  const [file, ...args] = commandLine.split(' ')
  return {
    file: '/usr/bin/setpriv',
    args: ['--reuid=voot-gate', '--regid=voot-gate', '--init-groups', '--', file!, ...args],
    env: { ...environmentFile(), PATH: '/nonexistent' },
  }
}

function installed(): boolean {
  return spawnSync('dpkg-query', ['-W', '-f=${Status}', 'voot-gate'], { encoding: 'utf8' }).stdout.includes('install ok installed')
}

describe.skipIf(!ASKED)('the voot-gate Debian package, installed on this machine (VOOT_GATE_PACKAGE_TEST=1)', () => {
  let deb: string
  let emulator: Emulator
  let app: Awaited<ReturnType<typeof startEchoApp>>
  let gate: ChildProcess | undefined
  let gateOutput = ''
  let nginx: RunningProxy | undefined

  beforeAll(async () => {
    expect(process.getuid?.(), 'dpkg -i needs root').toBe(0)
    const found = existsSync(DIST) ? readdirSync(DIST).filter((name) => /^voot-gate_.*_amd64\.deb$/.test(name)) : []
    expect(found, 'run npm run package:gate first').toHaveLength(1)
    deb = join(DIST, found[0]!)
    if (installed()) sh('dpkg', ['--purge', 'voot-gate'])
    emulator = await startGateEmulator()
    app = await startEchoApp()
  }, 60_000)

  afterAll(async () => {
    gate?.kill('SIGKILL')
    await nginx?.stop()
    await app?.close()
    await emulator?.close()
    if (installed()) sh('dpkg', ['--purge', 'voot-gate'])
  })

  it('installs with dpkg -i, depends on no nodejs, and lays out its files, user and secret', () => {
    expect(sh('dpkg-deb', ['-f', deb, 'Depends'])).not.toMatch(/node/)
    sh('dpkg', ['-i', deb])
    expect(installed()).toBe(true)
    expect(statSync('/usr/bin/voot-gate').mode & 0o777).toBe(0o755)
    expect(sh('dpkg-query', ['-W', '-f=${Conffiles}', 'voot-gate'])).toContain(CONFIG)
    expect(sh('getent', ['passwd', 'voot-gate'])).toMatch(/^voot-gate:x:\d+:\d+:.*:\/nonexistent:\/usr\/sbin\/nologin$/m)
    const env = statSync(ENVIRONMENT)
    expect(env.mode & 0o777).toBe(0o640)
    expect(env.uid).toBe(0)
    expect(env.gid).toBe(Number(sh('getent', ['group', 'voot-gate']).split(':')[2]))
    expect(environmentFile()['VOOT_GATE_COOKIE_SECRET']).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(sh('/usr/bin/voot-gate', ['--version']).trim()).toBe(JSON.parse(readFileSync('package.json', 'utf8')).version)
  })

  it('has a unit systemd-analyze verify accepts, sandboxed, reloading through SIGHUP', () => {
    const verified = spawnSync('systemd-analyze', ['verify', UNIT], { encoding: 'utf8' })
    expect(verified.status, verified.stderr).toBe(0)
    expect(unitValues('ExecReload')).toEqual(['/bin/kill -HUP $MAINPID'])
    expect(unitValues('ProtectSystem')).toEqual(['strict'])
    expect(unitValues('NoNewPrivileges')).toEqual(['yes'])
  })

  it('passes the unit’s ExecStartPre (--check) and --test as installed, as the voot-gate user', () => {
    const [pre] = unitValues('ExecStartPre')
    const run = asTheUnit(pre!)
    const checked = spawnSync(run.file, run.args, { env: run.env, encoding: 'utf8' })
    expect(checked.status, checked.stderr).toBe(0)
    expect(checked.stdout).toContain(`${CONFIG}: the configuration is valid; its 5 policy tests pass`)
    const tested = asTheUnit(`/usr/bin/voot-gate --config ${CONFIG} --test`)
    expect(spawnSync(tested.file, tested.args, { env: tested.env }).status).toBe(0)
    // Without the environment file the secret is missing: the unit's EnvironmentFile is what makes it pass.
    expect(spawnSync(run.file, run.args, { env: { PATH: '/nonexistent' } }).status).toBe(1)
  })

  it('serves nginx in front of an app from an edited config, run by the unit’s ExecStart: 200, 403, 401, 503', async () => {
    const port = await freePort()
    // An operator's edit: the group service (the emulator here), its own rules.
    writeFileSync(
      CONFIG,
      `# edited by the test\nlisten: 127.0.0.1:${port}\nservice: { baseUrl: "${emulator.baseUrl}", allowInsecureHttp: true, timeout: 2s, retries: 0 }\n` +
        'cookie: { secrets: ["${VOOT_GATE_COOKIE_SECRET}"] }\n' +
        `rules:\n  - { id: public, path: /public/**, allow: anyone }\n  - { id: admin, path: /admin/**, require: { group: "${ORG_ID}", role: admin } }\n  - { id: signed-in, allow: signed-in }\n`,
    )
    const [start] = unitValues('ExecStart')
    const run = asTheUnit(start!)
    gate = spawn(run.file, run.args, { env: run.env, stdio: ['ignore', 'pipe', 'pipe'] })
    // A gate left running as voot-gate would keep the purge from removing the user.
    onTestFinished(() => {
      if (gate?.exitCode === null) gate.kill('SIGKILL')
    })
    gate.stdout!.on('data', (chunk: Buffer) => (gateOutput += chunk.toString()))
    gate.stderr!.on('data', (chunk: Buffer) => (gateOutput += chunk.toString()))
    for (let waited = 0; !gateOutput.includes('is listening'); waited += 50) {
      if (waited > 10_000 || gate.exitCode !== null) throw new Error(`the gate did not start:\n${gateOutput}`)
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    // The process runs as voot-gate.
    expect(readFileSync(`/proc/${gate.pid}/status`, 'utf8')).toMatch(new RegExp(`^Uid:\\s+${sh('id', ['-u', 'voot-gate']).trim()}\\s`, 'm'))
    nginx = await startNginx({ gatePort: port, appPort: app.port })
    const bearer = (user: string) => ({ authorization: `Bearer ${emulator.issueToken(user)}` })

    const member = await send(nginx.url, '/admin/reports', { headers: bearer('alice') })
    expect(member.status).toBe(200)
    expect(appSaw(member).headers['x-voot-rule']).toBe('admin')
    expect((await send(nginx.url, '/admin/reports', { headers: bearer('bob') })).status).toBe(403)
    expect((await send(nginx.url, '/admin/reports', { headers: { accept: 'application/json' } })).status).toBe(401)
    const reset = emulator.faults.add({ kind: 'reset' })
    const down = await send(nginx.url, '/anything', { headers: bearer('carol') })
    emulator.faults.remove(reset)
    expect(down.status).toBe(503)
    expect(down.headers['retry-after']).toBeDefined()

    // ExecReload: SIGHUP reads the file again.
    process.kill(gate.pid!, 'SIGHUP')
    for (let waited = 0; !gateOutput.includes('reloaded'); waited += 50) {
      if (waited > 5_000) throw new Error(`no reload:\n${gateOutput}`)
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    gate.kill('SIGTERM')
    await new Promise((resolve) => gate!.once('exit', resolve))
    expect(gate.exitCode).toBe(0)
  }, 60_000)

  it('keeps the edited config and the secret when installed again', () => {
    const config = readFileSync(CONFIG, 'utf8')
    const secret = environmentFile()['VOOT_GATE_COOKIE_SECRET']
    sh('dpkg', ['-i', deb])
    expect(readFileSync(CONFIG, 'utf8')).toBe(config)
    expect(config).toContain('# edited by the test')
    expect(environmentFile()['VOOT_GATE_COOKIE_SECRET']).toBe(secret)
  })

  it('leaves nothing after a purge: files, config, environment file, user', () => {
    sh('dpkg', ['--purge', 'voot-gate'])
    expect(installed()).toBe(false)
    for (const path of ['/usr/bin/voot-gate', '/etc/voot-gate', UNIT, '/usr/share/doc/voot-gate', '/var/log/voot-gate'])
      expect(existsSync(path), path).toBe(false)
    expect(spawnSync('getent', ['passwd', 'voot-gate']).status).not.toBe(0)
    expect(spawnSync('getent', ['group', 'voot-gate']).status).not.toBe(0)
  })
})
