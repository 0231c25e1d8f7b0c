/**
 * The gate's configuration: `voot-guard gate --config FILE --check` in-process, with the
 * file, line, key and a suggestion for every problem; `${NAME}` from the environment;
 * examples/gate/gate.yaml is valid; `createGate` refuses what `--check` refuses.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runCli } from '../../cli/index.js'
import { createGate, GateConfigError, type GateConfig } from '../../gate/index.js'
import { parseDuration } from '../../gate/config/duration.js'

let dir: string

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'voot-gate-config-'))
})

afterAll(async () => {
  await rm(dir, { recursive: true, force: true })
})

async function check(name: string, text: string, env: Record<string, string> = {}) {
  const file = join(dir, name)
  await writeFile(file, text)
  let stdout = ''
  let stderr = ''
  const code = await runCli(['gate', '--config', file, '--check'], {
    stdout: { write: (t: string) => (stdout += t) },
    stderr: { write: (t: string) => (stderr += t) },
    env,
  })
  return { code, stdout, stderr, file }
}

const VALID = `service:
  baseUrl: https://groups-api.example.org/groups
rules:
  - path: /admin/**
    require: { group: "fc:org:example.org", role: admin }
  - allow: signed-in
`

describe('voot-guard gate --check', () => {
  it('exits 0 for a valid configuration', async () => {
    const result = await check('valid.yaml', VALID)
    expect(result.stderr).toBe('')
    expect(result.code).toBe(0)
    expect(result.stdout).toContain('the configuration is valid')
  })

  it('refuses a misspelt key with its file, line, key and a suggestion', async () => {
    const text = `service:
  baseUrl: https://groups-api.example.org/groups
  timeot: 5s
rules:
  - path: /admin/**
    requrie: { group: "fc:org:example.org", role: admin }
  - alow: signed-in
coookie:
  secrets: [x]
`
    const result = await check('typo.yaml', text)
    expect(result.code).toBe(1)
    const lines = result.stderr.trim().split('\n')
    expect(lines).toContain(`${result.file}:3:3: service.timeot: unknown key (did you mean "timeout"?)`)
    expect(lines).toContain(`${result.file}:6:5: rules[0].requrie: unknown key (did you mean "require"?)`)
    expect(lines).toContain(`${result.file}:7:5: rules[1].alow: unknown key (did you mean "allow"?)`)
    expect(lines).toContain(`${result.file}:8:1: coookie: unknown key (did you mean "cookie"?)`)
    expect(lines.at(-1)).toMatch(/problems in /)
  })

  it('names the line of a bad value, of an invalid group id, and of an unknown allow', async () => {
    const text = `listen: 0.0.0.0:4181
service:
  baseUrl: https://groups-api.example.org/groups
  cache:
    ttl: forever
rules:
  - require: { group: "fc:org:example.org", role: boss }
  - allow: signed_in
`
    const result = await check('values.yaml', text)
    expect(result.code).toBe(1)
    expect(result.stderr).toContain(
      `${result.file}:1:1: listen: listens on 0.0.0.0, not on loopback: name the proxies' addresses in "trustedProxies"`,
    )
    expect(result.stderr).toContain(`${result.file}:5:5: service.cache.ttl: must be a duration`)
    expect(result.stderr).toContain(`${result.file}:8:5: rules[1].allow: must be "anyone" or "signed-in" (did you mean "signed-in"?)`)
  })

  it('names a header that is not a header name, headers.service among them', async () => {
    const text = `service:
  baseUrl: https://groups-api.example.org/groups
headers:
  service: "X Voot Service"
  servce: X-Voot-Service
rules:
  - allow: signed-in
`
    const result = await check('headers.yaml', text)
    expect(result.code).toBe(1)
    expect(result.stderr).toContain(`${result.file}:4:3: headers.service: must be an HTTP header name`)
    expect(result.stderr).toContain(`${result.file}:5:3: headers.servce: unknown key (did you mean "service"?)`)
  })

  it('checks requirements with the guard core: an unknown role is refused at its rule', async () => {
    const text = `service:
  baseUrl: https://groups-api.example.org/groups
rules:
  - path: /x
    require: { group: "fc:org:example.org", role: boss }
`
    const result = await check('role.yaml', text)
    expect(result.code).toBe(1)
    expect(result.stderr).toMatch(new RegExp(`${result.file.replace(/[.]/g, '\\.')}:5:45: rules\\[0\\]\\.require\\.role: .*boss`))
  })

  it('takes ${NAME} from the environment; a missing one is a problem at its line', async () => {
    const text = `service:
  baseUrl: \${GROUPS_URL}
rules:
  - host: \${APP_HOST}
    allow: anyone
`
    const ok = await check('env.yaml', text, { GROUPS_URL: 'https://groups-api.example.org/groups', APP_HOST: 'app.example.org' })
    expect(ok.code).toBe(0)
    const missing = await check('env.yaml', text, { GROUPS_URL: 'https://groups-api.example.org/groups' })
    expect(missing.code).toBe(1)
    expect(missing.stderr).toContain(`${missing.file}:4:5: rules[0].host: the environment variable APP_HOST is not set`)
  })

  it('a variable cannot add structure: its value stays one string', async () => {
    const text = `service:
  baseUrl: https://groups-api.example.org/groups
rules:
  - host: \${APP_HOST}
    allow: anyone
`
    const result = await check('inject.yaml', text, { APP_HOST: 'x.example.org\n    allow: signed-in' })
    expect(result.code).toBe(1)
    expect(result.stderr).toContain('rules[0].host: must be a host name')
  })

  it('reads JSON with lines too, and reports syntax errors at their line', async () => {
    const json = `{
  "service": { "baseUrl": "https://groups-api.example.org/groups" },
  "rules": [ { "allow": "anyone", "pathh": "/x" } ]
}
`
    const result = await check('gate.json', json)
    expect(result.code).toBe(1)
    expect(result.stderr).toContain(`${result.file}:3:35: rules[0].pathh: unknown key (did you mean "path"?)`)
    const broken = await check('broken.yaml', 'service:\n  baseUrl: [unclosed\nrules: []\n')
    expect(broken.code).toBe(1)
    expect(broken.stderr).toMatch(/broken\.yaml:3:1: service\.baseUrl\[0\]: YAML: Flow sequence/)
  })

  it('refuses a missing file and an unknown extension', async () => {
    expect((await check('gate.toml', 'x = 1')).code).toBe(1)
    let stderr = ''
    const code = await runCli(['gate', '--config', join(dir, 'nope.yaml'), '--check'], {
      stdout: { write: () => {} },
      stderr: { write: (t: string) => (stderr += t) },
      env: {},
    })
    expect(code).toBe(1)
    expect(stderr).toContain('no such file')
  })

  it('finds examples/gate/gate.yaml valid with its variables set', async () => {
    let stdout = ''
    let stderr = ''
    const code = await runCli(['gate', '--config', 'examples/gate/gate.yaml', '--check'], {
      stdout: { write: (t: string) => (stdout += t) },
      stderr: { write: (t: string) => (stderr += t) },
      env: {
        VOOT_GATE_CLIENT_ID: 'gate-client',
        VOOT_GATE_CLIENT_SECRET: 'gate-client-secret',
        VOOT_GATE_COOKIE_SECRET: 'k3Vq0cTn9mPz4XbRw7YhLs2JdFg8NaEu',
        VOOT_GATE_REDIS_URL: 'redis://127.0.0.1:6379',
        VOOT_GATE_REDIS_SECRET: 'Qm8vT2xLp5WnZc7RdJ4hYs9GbK3fNa6E',
      },
    })
    expect(stderr).toBe('')
    expect(code).toBe(0)
    expect(stdout).toContain('valid')
  })
})

describe('createGate', () => {
  it('refuses an invalid configuration with every problem and its key', () => {
    const config = {
      service: { baseUrl: 'https://groups-api.example.org/groups' },
      rules: [{ allow: 'anyone', requir: {} }],
      oauth: { clientId: 'x' },
    }
    let error: unknown
    try {
      createGate(config as unknown as GateConfig)
    } catch (caught) {
      error = caught
    }
    expect(error).toBeInstanceOf(GateConfigError)
    const keys = (error as GateConfigError).problems.map((problem) => problem.key)
    expect(keys).toEqual(expect.arrayContaining(['rules[0].requir', 'oauth.issuer', 'cookie']))
  })
})

describe('durations', () => {
  it.each([
    ['30s', 30_000],
    ['8h', 28_800_000],
    ['1h30m', 5_400_000],
    ['250ms', 250],
    [30, 30_000],
    [0.5, 500],
  ])('%s is %d ms', (text, ms) => expect(parseDuration(text)).toBe(ms))

  it.each(['30', '-1s', '1x', '', 's', -5, '1h 30m'])('%s is not a duration', (text) => expect(parseDuration(text)).toBeUndefined())
})
