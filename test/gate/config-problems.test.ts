/**
 * A configuration cannot widen access by a typo (DESIGN section 6): `voot-guard gate
 * --check`, `--test` and a start report every problem of a broken file in one run, each with
 * file, line, column and key, and exit 1; none starts. The broken files below are the kinds
 * people write: typos in keys and values, `methods: [GETT]`, an unquoted `*`, a repeated key,
 * a tab, a shadowed rule, unset variables, and several at once.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runCli } from '../../cli/index.js'
import { checkGateConfig, createGate, GateConfigError, type GateConfig } from '../../gate/index.js'

let dir: string

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'voot-gate-problems-'))
})

afterAll(async () => {
  await rm(dir, { recursive: true, force: true })
})

async function run(name: string, text: string, args: readonly string[], env: Record<string, string> = {}) {
  const file = join(dir, name)
  await writeFile(file, text)
  let stdout = ''
  let stderr = ''
  const controller = new AbortController()
  // A start that is not refused would serve until stopped: stop it at once (and the test fails on its exit code).
  const timer = setTimeout(() => controller.abort(), 3_000)
  const code = await runCli(['gate', '--config', file, ...args], {
    stdout: { write: (t: string) => (stdout += t) },
    stderr: { write: (t: string) => (stderr += t) },
    env,
    signal: controller.signal,
  })
  clearTimeout(timer)
  return { code, stdout, stderr, file, lines: stderr.trim().split('\n') }
}

/** A free port, so that a start that is wrongly accepted binds something the test can see. */
async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

interface Broken {
  readonly name: string
  readonly text: (port: number) => string
  readonly env?: Record<string, string>
  /** `line:column: key: message start`, each of which must be printed. */
  readonly problems: readonly string[]
}

const SERVICE = 'service:\n  baseUrl: https://groups-api.example.org/groups\n'

const BROKEN: readonly Broken[] = [
  {
    name: 'a method typo on an admins-only rule, followed by a members rule',
    text: (port) => `listen: 127.0.0.1:${port}
${SERVICE}rules:
  - id: app-admin
    path: /admin/**
    methods: [GETT]
    require: { group: "fc:org:example.org", role: admin }
  - id: club-members
    require: { group: "fc:org:example.org" }
`,
    problems: [
      '7:15: rules[0].methods[0]: "GETT" is not an HTTP method of RFC 9110 (GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS, TRACE, CONNECT) nor one of "extensionMethods" (did you mean "GET"?)',
    ],
  },
  {
    name: 'three problems that used to come one run at a time: an unset variable, http: off loopback, an unknown role',
    text: (port) => `listen: 127.0.0.1:${port}
service:
  baseUrl: http://groups.example.org/groups
oauth:
  issuer: https://auth.example.org
  clientId: gate
  clientSecret: \${VOOT_GATE_CLIENT_SECRET}
cookie:
  secrets: ["0123456789abcdef0123456789abcdef"]
rules:
  - path: /admin/**
    require: { group: "fc:org:example.org", role: admn }
  - allow: signed-in
`,
    problems: [
      '3:3: service.baseUrl: must use https:',
      '7:3: oauth.clientSecret: the environment variable VOOT_GATE_CLIENT_SECRET is not set',
      `12:45: rules[0].require.role: Unknown role "admn": the resolver's roles are member < manager < admin < owner (did you mean "admin"?)`,
    ],
  },
  {
    name: "SURFconext's address with Feide's /groups (issue 52, item 5)",
    text: (port) => `listen: 127.0.0.1:${port}
service:
  baseUrl: https://voot.surfconext.nl/groups
  roles: [prospect, member, manager, admin, owner]
rules:
  - require: { group: "urn:collab:group:surfteams.nl:nl:surfnet:diensten:board" }
`,
    problems: [
      "3:3: service.baseUrl: voot.surfconext.nl is SURFconext's VOOT (OpenConext-voot), which serves the group API at its root, not under /groups: set baseUrl to https://voot.surfconext.nl (its endpoints are https://voot.surfconext.nl/me/groups and https://voot.surfconext.nl/me/groups/{groupId})",
    ],
  },
  {
    name: "SURFconext's address with Feide's /groups among several services",
    text: (port) => `listen: 127.0.0.1:${port}
services:
  feide:
    service: { baseUrl: https://groups-api.dataporten.no/groups }
  surf:
    service:
      baseUrl: https://voot.surfconext.nl/groups/
groupPrefixes:
  "fc:": feide
  "urn:collab:": surf
rules:
  - require: { group: "urn:collab:group:surfteams.nl:nl:surfnet:diensten:board" }
`,
    problems: [
      "7:7: services.surf.service.baseUrl: voot.surfconext.nl is SURFconext's VOOT (OpenConext-voot), which serves the group API at its root, not under /groups: set baseUrl to https://voot.surfconext.nl ",
    ],
  },
  {
    name: 'an unquoted * (a YAML alias), with a typo elsewhere',
    text: (port) => `listen: 127.0.0.1:${port}
${SERVICE}rules:
  - host: *.example.org
    path: /admin/**
    requrie: { group: "fc:org:example.org", role: admin }
  - allow: signed-in
`,
    problems: [
      '5:11: rules[0].host: YAML reads an unquoted "*.example.org" as an alias: quote the value, such as "*.example.org"',
      '7:5: rules[0].requrie: unknown key (did you mean "require"?)',
    ],
  },
  {
    name: 'a key given twice, and a tab',
    text: (port) => `listen: 127.0.0.1:${port}
${SERVICE}rules:
  - path: /admin/**
    path: /
    require: { group: "fc:org:example.org", role: admin }
\t- allow: signed-in
`,
    problems: ['6:5: rules[0].path: YAML: Map keys must be unique', '8:1: rules[0].require: YAML: Tabs are not allowed as indentation'],
  },
  {
    name: 'a rule no request can reach',
    text: (port) => `listen: 127.0.0.1:${port}
${SERVICE}rules:
  - id: everyone-signed-in
    path: /**
    allow: signed-in
  - id: admins
    path: /admin/**
    methods: [get, post]
    require: { group: "fc:org:example.org", role: admin }
`,
    problems: ['8:5: rules[1]: no request can reach this rule: rules[0] (id "everyone-signed-in") matches every request it matches'],
  },
  {
    name: 'bad values everywhere: host, CIDR, duration, path, empty lists, group ids, http rd host',
    text: (port) => `listen: 127.0.0.1:${port}
trustedProxies: [10.0.0.0/33]
service:
  baseUrl: https://groups-api.example.org/groups
  timeout: 5 seconds
  cache: { ttl: 1x }
redirectHosts: ["https://app.example.org"]
rules:
  - host: wiki.example.org:443
    path: admin/**
    methods: []
    require: { anyOf: [] }
  - require: { allOf: ["fc:org:example.org ", "fc:org:example.org:unit:IT"] }
  - alow: anyone
`,
    problems: [
      '2:18: trustedProxies[0]: must be an address or a CIDR',
      '5:3: service.timeout: must be a duration',
      '6:12: service.cache.ttl: must be a duration',
      '7:17: redirectHosts[0]: must be a host name',
      '9:5: rules[0].host: must be a host name',
      '10:5: rules[0].path: must be a path glob starting with "/"',
      '11:5: rules[0].methods: must be a non-empty list',
      '12:16: rules[0].require.anyOf: must be a non-empty list',
      '13:24: rules[1].require.allOf[0]: "fc:org:example.org " is not a group id',
      '14:5: rules[2].alow: unknown key (did you mean "allow"?)',
    ],
  },
  {
    name: 'indentation slips: the cache beside "service", a role beside "require"',
    text: (port) => `listen: 127.0.0.1:${port}
cache: { ttl: 30s }
${SERVICE}rules:
  - path: /admin/**
    role: admin
    require: { group: "fc:org:example.org" }
  - allow: signed-in
`,
    problems: [
      '2:1: cache: unknown key here: it belongs under "service" (did you mean "service.cache"?)',
      '7:5: rules[0].role: unknown key here: it belongs under "require" (did you mean "rules[0].require.role"?)',
    ],
  },
]

/** Two services, written with the slips and the group ids of issue 48: Feide's roles lack `manager`. */
const SEVERAL = (port: number) => `listen: 127.0.0.1:${port}
services:
  feide:
    service:
      baseUrl: https://groups-api.dataporten.no/groups
      roles: [member, admin, owner]
  hosts: [styret.example.no]
  surf:
    service:
      baseUrl: https://voot.surfconext.nl
      roles: [member, manager, admin, owner]
groupPrefixes:
  "fc:": feide
  "urn:collab:": surf
rules:
  - id: board
    path: /board/**
    require:
      anyOf: ["fc:org:example.org", "urn:collab:org:surf.nl"]
      service: surf
  - id: staff
    path: /staff/**
    require:
      anyOf: ["fc:org:example.org", "urn:mace:example.nl:staff"]
  - id: managers
    path: /managers/**
    require: { group: "fc:org:example.org", role: manager }
  - id: mixed
    path: /mixed/**
    require:
      anyOf: ["fc:org:example.org", { group: "urn:mace:example.nl:staff", service: surf }, { group: "fc:org:example.org:unit:IT", service: surf }]
  - allow: signed-in
fixtures:
  bob: { "urn:mace:example.nl:board": member }
  carol: { "urn:mace:example.nl:staff": { role: member, service: surf } }
`

describe('with several services, group ids and services in the words of the configuration (issue 48, items 3 and 4)', () => {
  it('says where a slipped key belongs, which service fits a group, and never moves a group off its prefix', async () => {
    const port = await freePort()
    const result = await run('several.yaml', SEVERAL(port), ['--check'])
    expect(result.code).toBe(1)
    const at = (problem: string) => expect.stringContaining(`${result.file}:${problem}`)
    expect(result.lines).toEqual(
      expect.arrayContaining([
        at(
          '7:3: services.hosts: is read as a service called "hosts", but "hosts" is a key of a service: indent it under the service it belongs to (did you mean "services.feide.hosts"?)',
        ),
        // A service for the whole list would move Feide's group to SURFconext.
        at('20:7: rules[0].require.service: puts "fc:org:example.org" on surf, but "groupPrefixes" puts it on feide'),
        // The advice is YAML that can be pasted into the list, with the service whose prefix is nearest.
        at(
          '24:37: rules[1].require.anyOf[1]: group "urn:mace:example.nl:staff": no groupPrefixes entry assigns it a service: name its service, as in - { group: "urn:mace:example.nl:staff", service: surf }',
        ),
        at(
          '27:45: rules[2].require.role: unknown role "manager" for the group "fc:org:example.org" on the service feide: its roles are member < admin < owner',
        ),
        at('31:131: rules[3].require.anyOf[2].service: puts "fc:org:example.org:unit:IT" on surf, but "groupPrefixes" puts it on feide'),
        at(
          '34:10: fixtures.bob.urn:mace:example.nl:board: no groupPrefixes entry assigns it a service: name its service, as in "urn:mace:example.nl:board": { role: member, service: surf }',
        ),
      ]),
    )
    // Never the word it refuses as the suggestion, and nothing wrong with a group that names its service.
    expect(result.stderr).not.toContain('did you mean "manager"')
    expect(result.stderr).not.toContain('rules[3].require.anyOf[1]')
    expect(result.stderr).not.toContain('fixtures.carol')
    expect(result.lines.at(-1)).toBe(`voot-guard gate: 6 problems in ${result.file}`)
  })

  it('accepts each group of a list on its own service, in rules and fixtures', async () => {
    const fixed = SEVERAL(await freePort())
      .replace('  hosts: [styret.example.no]\n', '')
      .replace('      service: surf\n', '')
      .replace('"urn:mace:example.nl:staff"]', '{ group: "urn:mace:example.nl:staff", service: surf }]')
      .replace('role: manager', 'role: admin')
      .replace(', { group: "fc:org:example.org:unit:IT", service: surf }', '')
      .replace('"urn:mace:example.nl:board": member', '"urn:mace:example.nl:board": { role: member, service: surf }')
    const result = await run('several-fixed.yaml', fixed, ['--check'])
    expect(result.stderr).toBe('')
    expect(result.code).toBe(0)
  })
})

describe('a broken configuration is refused in one run, every problem located', () => {
  it.each(BROKEN)('$name', async ({ text, env, problems }) => {
    const port = await freePort()
    const yaml = text(port)
    for (const args of [['--check'], ['--test'], []]) {
      const result = await run('broken.yaml', yaml, args, env)
      expect(result.code, `${args.join(' ') || 'start'}: ${result.stdout}${result.stderr}`).toBe(1)
      expect(result.lines).toEqual(expect.arrayContaining(problems.map((problem) => expect.stringContaining(`${result.file}:${problem}`))))
      // Every line but the count names its place in the file.
      for (const line of result.lines.slice(0, -1)) expect(line).toMatch(new RegExp(`^${result.file.replace(/[.]/g, '\\.')}:\\d+:\\d+: `))
      expect(result.lines.at(-1)).toMatch(/^voot-guard gate: \d+ problems? in /)
      expect(result.stdout).not.toContain('listening')
    }
  })

  it('exit 2 is for a wrong command line only', async () => {
    const result = await run('valid.yaml', `${SERVICE}rules:\n  - allow: signed-in\n`, ['--check', '--nope'])
    expect(result.code).toBe(2)
    expect((await run('valid.yaml', `${SERVICE}rules:\n  - allow: signed-in\n`, ['--check'])).code).toBe(0)
  })

  it('accepts an extension method the configuration lists, and any case', async () => {
    const text = `${SERVICE}extensionMethods: [PROPFIND]
rules:
  - methods: [propfind, get]
    require: { group: "fc:org:example.org" }
  - allow: signed-in
`
    const result = await run('ext.yaml', text, ['--check'])
    expect(result.stderr).toBe('')
    expect(result.code).toBe(0)
    const without = await run('ext.yaml', text.replace('extensionMethods: [PROPFIND]\n', ''), ['--check'])
    expect(without.code).toBe(1)
    expect(without.stderr).toContain('rules[0].methods[0]: "propfind" is not an HTTP method of RFC 9110')
  })
})

describe('createGate refuses what --check refuses, every problem at once', () => {
  it('reports the reading, the resolver options and the requirements together', () => {
    const config = {
      service: { baseUrl: 'http://groups.example.org/groups', timeout: 'soon' },
      rules: [
        { path: '/admin/**', methods: ['GETT'], require: { group: 'fc:org:example.org', role: 'admn' } },
        { allow: 'signed-in' },
        { path: '/x', allow: 'anyone' },
      ],
    }
    const error = (() => {
      try {
        return createGate(config as unknown as GateConfig)
      } catch (caught) {
        return caught
      }
    })()
    expect(error).toBeInstanceOf(GateConfigError)
    expect((error as GateConfigError).problems.map((problem) => problem.key)).toEqual([
      'service.timeout',
      'rules[0].methods[0]',
      'rules[2]',
      'service.baseUrl',
      'rules[0].require.role',
    ])
  })
})

describe('the sessions-that-end switches', () => {
  it('are booleans, and a back-channel logout needs an OpenID issuer, in oauth and under services', async () => {
    const problems = await checkGateConfig({
      service: { baseUrl: 'https://groups.example.org/groups' },
      oauth: { authUrl: 'https://auth.example.org', clientId: 'gate', backchannelLogout: true, endSession: 'yes' },
      cookie: { secrets: ['a-cookie-secret-of-the-config-test-0123456789'] },
      rules: [{ allow: 'signed-in' }],
    })
    expect(problems.map((problem) => [problem.key, problem.message])).toEqual([
      ['oauth.endSession', 'must be true or false'],
      ['oauth.backchannelLogout', 'needs "issuer" (an OpenID provider), not "authUrl"'],
    ])
    const services = await checkGateConfig({
      services: {
        feide: {
          service: { baseUrl: 'https://groups.example.org/groups' },
          oauth: { issuer: 'https://auth.example.org', clientId: 'gate', backchannelLogout: 1 },
        },
      },
      groupPrefixes: { 'fc:': 'feide' },
      cookie: { secrets: ['a-cookie-secret-of-the-config-test-0123456789'] },
      rules: [{ allow: 'signed-in' }],
    })
    expect(services.map((problem) => [problem.key, problem.message])).toEqual([
      ['services.feide.oauth.backchannelLogout', 'must be true or false'],
    ])
  })
})
