/**
 * Policy tests and explain (DESIGN section 6): a configuration's `tests` run offline through
 * the gate's own check, with its `fixtures` as the group service; `--test` prints TAP and
 * fails naming the test when a rule changes; `--check` runs them too; `--explain` prints the
 * answering rule and the decision tree, from fixtures or, with `--token`, from the service.
 */
import { readFile, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runCli } from '../../cli/index.js'
import { createPolicyRunner, GateConfigError } from '../../gate/internal.js'
import type { Emulator } from '../../testing/index.js'
import { startGateEmulator } from './support/gate-harness.js'

const EXAMPLE_ENV = {
  VOOT_GATE_CLIENT_ID: 'gate-client',
  VOOT_GATE_CLIENT_SECRET: 'gate-client-secret',
  VOOT_GATE_COOKIE_SECRET: 'k3Vq0cTn9mPz4XbRw7YhLs2JdFg8NaEu',
  VOOT_GATE_REDIS_URL: 'redis://127.0.0.1:6379',
  VOOT_GATE_REDIS_SECRET: 'Qm8vT2xLp5WnZc7RdJ4hYs9GbK3fNa6E',
}

let dir: string
let service: Server
let serviceCalls = 0
let serviceUrl: string

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'voot-gate-policy-'))
  // A group service that counts what reaches it: the policy tests must reach nothing.
  service = createServer((_req, res) => {
    serviceCalls++
    res.writeHead(500).end()
  })
  await new Promise<void>((resolve) => service.listen(0, '127.0.0.1', resolve))
  serviceUrl = `http://127.0.0.1:${(service.address() as AddressInfo).port}/groups`
})

afterAll(async () => {
  await new Promise<void>((resolve) => service.close(() => resolve()))
  await rm(dir, { recursive: true, force: true })
})

async function cli(args: readonly string[], env: Record<string, string> = {}) {
  let stdout = ''
  let stderr = ''
  const code = await runCli(['gate', ...args], {
    stdout: { write: (t: string) => (stdout += t) },
    stderr: { write: (t: string) => (stderr += t) },
    env,
  })
  return { code, stdout, stderr }
}

async function write(name: string, text: string): Promise<string> {
  const file = join(dir, name)
  await writeFile(file, text)
  return file
}

const POLICY = () => `service:
  baseUrl: ${serviceUrl}
rules:
  - id: admins
    host: wiki.example.org
    path: /admin/**
    require: { group: "fc:org:example.org", role: admin }
  - id: course
    path: /courses/INF1000/**
    require: { group: "fc:fs:fs:emne:example.org:INF1000:1" }
  - id: teachers
    path: /teach/**
    require: { groupOfType: "fc:fs:emne", role: admin }
  - id: public
    path: /public/**
    allow: anyone
  - id: members
    allow: signed-in
fixtures:
  alice: { "fc:org:example.org": admin }
  bob: { "fc:org:example.org": member, "fc:fs:fs:emne:example.org:INF1000:1": { role: member, active: false } }
  carol: { "fc:fs:fs:emne:example.org:INF1000:1": admin }
tests:
  - { request: "GET https://wiki.example.org/admin/users", as: alice, expect: allow, rule: admins }
  - { name: "a member is not an admin", request: "POST https://wiki.example.org/admin/users", as: bob, expect: deny, rule: admins }
  - { request: "GET https://wiki.example.org/", as: anonymous, expect: signin }
  - { request: "GET https://wiki.example.org/courses/INF1000/x", as: bob, expect: deny, rule: course }
  - { request: "GET https://wiki.example.org/courses/INF1000/x", as: carol, expect: allow, rule: course }
  - { request: "GET https://wiki.example.org/teach/x", as: carol, expect: allow, rule: teachers }
  - { request: "GET https://wiki.example.org/teach/x", as: alice, expect: deny, rule: teachers }
  - { request: "GET https://wiki.example.org/public/x", as: anonymous, expect: allow, rule: public }
  - { request: "GET https://wiki.example.org/public/%2e%2e/admin/users", as: alice, expect: deny }
`

describe('voot-guard gate --test', () => {
  it('runs every test offline through the gate and prints TAP', async () => {
    const before = serviceCalls
    const result = await cli(['--config', await write('policy.yaml', POLICY()), '--test'], {})
    expect(result.stderr).toBe('')
    expect(result.code).toBe(0)
    const lines = result.stdout.trim().split('\n')
    expect(lines[0]).toBe('1..9')
    expect(lines).toContain('ok 1 - GET https://wiki.example.org/admin/users as alice: allow (200, rule admins)')
    expect(lines).toContain('ok 2 - a member is not an admin: deny (403, rule admins)')
    expect(lines).toContain('ok 3 - GET https://wiki.example.org/ as anonymous: signin (401, rule members)')
    expect(lines).toContain('ok 9 - GET https://wiki.example.org/public/%2e%2e/admin/users as alice: deny (403, no rule)')
    expect(lines.at(-1)).toBe('# 9 of 9 policy tests pass')
    expect(serviceCalls).toBe(before)
  })

  it("fails naming the test when a rule's role changes, with the decision explained", async () => {
    const changed = POLICY().replace('role: admin }\n  - id: course', 'role: owner }\n  - id: course')
    expect(changed).not.toBe(POLICY())
    const result = await cli(['--config', await write('changed.yaml', changed), '--test'])
    expect(result.code).toBe(1)
    expect(result.stdout).toContain(
      'not ok 1 - GET https://wiki.example.org/admin/users as alice: expected allow by rule admins, got deny (403, rule admins)',
    )
    expect(result.stdout).toContain('  # This resource requires the role owner or higher in the group fc:org:example.org')
    expect(result.stdout).toMatch(/ {2}# +group fc:org:example\.org \(role owner or higher\): denied, role_too_low/)
    expect(result.stdout).toContain('# 8 of 9 policy tests pass')
    expect(result.stderr).toContain('1 of 9 policy tests fail')
    // --check runs the tests too.
    const check = await cli(['--config', join(dir, 'changed.yaml'), '--check'])
    expect(check.code).toBe(1)
    expect(check.stdout).toContain('not ok 1 - ')
    expect(check.stdout).not.toContain('the configuration is valid')
  })

  it('fails a test whose answering rule is another', async () => {
    const moved = POLICY().replace('expect: allow, rule: public', 'expect: allow, rule: members')
    const result = await cli(['--config', await write('moved.yaml', moved), '--test'])
    expect(result.code).toBe(1)
    expect(result.stdout).toContain(
      'not ok 8 - GET https://wiki.example.org/public/x as anonymous: expected allow by rule members, got allow (200, rule public)',
    )
  })

  it('refuses tests that name nobody, no rule, or no outcome, each at its line', async () => {
    const broken = `${POLICY()}  - { request: "GET https://wiki.example.org/", as: alcie, expect: allow }
  - { request: "GET https://wiki.example.org/", as: alice, expect: allowed, rule: admin }
  - { request: "GET wiki.example.org/", as: alice, expect: deny }
`
    const result = await cli(['--config', await write('broken-tests.yaml', broken), '--test'])
    expect(result.code).toBe(1)
    const file = join(dir, 'broken-tests.yaml')
    expect(result.stderr).toContain(`${file}:33:49: tests[9].as: must be "anonymous" or a user of "fixtures" (did you mean "alice"?)`)
    expect(result.stderr).toContain(`${file}:34:60: tests[10].expect: must be allow, deny or signin (did you mean "allow"?)`)
    expect(result.stderr).toContain(`${file}:34:77: tests[10].rule: must be a rule's id (did you mean "admins"?)`)
    expect(result.stderr).toContain(`${file}:35:7: tests[11].request: must be "METHOD URL"`)
  })

  it('refuses fixtures with an unknown role or an invalid group id', async () => {
    const broken = POLICY().replace(
      'carol: { "fc:fs:fs:emne:example.org:INF1000:1": admin }',
      'carol: { "fc:fs:fs:emne:example.org:INF1000:1": amdin, "..": member }',
    )
    const result = await cli(['--config', await write('broken-fixtures.yaml', broken), '--test'])
    expect(result.code).toBe(1)
    expect(result.stderr).toMatch(/fixtures\.carol\.fc:fs:fs:emne:example\.org:INF1000:1: unknown role "amdin".*\(did you mean "admin"\?\)/)
    expect(result.stderr).toMatch(/fixtures\.carol\.\.\.: The group ids "\." and "\.\." \(and their encodings\) are refused/)
  })

  it("judges a role the service sends but does not rank (SURFconext's prospect) as the resolver does: it satisfies nothing", async () => {
    const before = serviceCalls
    const text = `service:
  baseUrl: ${serviceUrl}
rules:
  - id: members
    path: /members/**
    require: { group: "urn:collab:org:surf.nl", role: member }
  - id: any-role
    path: /any/**
    require: { group: "urn:collab:org:surf.nl" }
  - allow: signed-in
fixtures:
  dana: { "urn:collab:org:surf.nl": prospect }
  erik: { "urn:collab:org:surf.nl": member }
tests:
  - { name: "an invitee (prospect) is not yet a member", request: "GET https://app.example.nl/members/x", as: dana, expect: deny, rule: members }
  - { request: "GET https://app.example.nl/any/x", as: dana, expect: deny, rule: any-role }
  - { request: "GET https://app.example.nl/members/x", as: erik, expect: allow, rule: members }
`
    const file = await write('prospect.yaml', text)
    const result = await cli(['--config', file, '--test'])
    expect(result.stderr).toBe('')
    expect(result.code).toBe(0)
    expect(result.stdout).toContain('ok 1 - an invitee (prospect) is not yet a member: deny (403, rule members)')
    expect(result.stdout).toContain('# 3 of 3 policy tests pass')
    const explained = await cli(['--config', file, '--explain', 'GET https://app.example.nl/members/x', '--as', 'dana'])
    expect(explained.stdout).toMatch(/group urn:collab:org:surf\.nl \(role member or higher\): denied, role_too_low/)
    expect(explained.stdout).toContain('role prospect, active')
    expect(serviceCalls).toBe(before)
  })

  it('runs the tests of examples/gate/gate.yaml', async () => {
    const result = await cli(['--config', 'examples/gate/gate.yaml', '--test'], EXAMPLE_ENV)
    expect(result.stderr).toBe('')
    expect(result.code).toBe(0)
    expect(result.stdout).toMatch(/# (\d+) of \1 policy tests pass/)
    const check = await cli(['--config', 'examples/gate/gate.yaml', '--check'], EXAMPLE_ENV)
    expect(check.code).toBe(0)
    expect(check.stdout).toMatch(/the configuration is valid; its \d+ policy tests pass/)
  })

  it('runs the tests of examples/gate/services.yaml, which name the service each user signed in with', async () => {
    const env = { VOOT_GATE_COOKIE_SECRET: EXAMPLE_ENV.VOOT_GATE_COOKIE_SECRET }
    const result = await cli(['--config', 'examples/gate/services.yaml', '--test'], env)
    expect(result.stderr).toBe('')
    expect(result.code).toBe(0)
    expect(result.stdout).toContain('ok 4 - GET https://styret.example.no/board/minutes as bob (feide): deny (403, rule board)')
    expect(result.stdout).toMatch(/# (\d+) of \1 policy tests pass/)
    const explained = await cli(
      ['--config', 'examples/gate/services.yaml', '--explain', 'GET https://board.example.nl/board/x', '--as', 'bob', '--service', 'surf'],
      env,
    )
    expect(explained.stdout.split('\n').slice(0, 3)).toEqual([
      'GET https://board.example.nl/board/x as bob (surf)',
      'rule: board (rules[0]: any host, path /board/**, methods all)',
      expect.stringMatching(/^answer: allow \(200, rule board\)/),
    ])
    // The SURFconext service decided its part of the requirement, on its answers; Feide's part is in the tree, on Feide.
    expect(explained.stdout).toMatch(/how it was decided:\n {2}any of \[.*\]: allowed, member {2}<- settled\n/)
    expect(explained.stdout).toContain('    group fc:org:example.org (role admin or higher) on feide: denied, other_service\n')
    expect(explained.stdout).toMatch(
      /\n {4}group urn:collab:group:surfteams\.nl:nl:surfnet:diensten:project_board \(role admin or higher\): allowed, member {2}<- settled\n/,
    )
    const unknown = await cli(
      ['--config', 'examples/gate/services.yaml', '--explain', 'GET https://x/', '--as', 'bob', '--service', 'sruf'],
      env,
    )
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toContain('--service must be one of the services (feide, surf)')
  })

  it('prints the tree with other_service when a test fails because the groups are on another service', async () => {
    const env = { VOOT_GATE_COOKIE_SECRET: EXAMPLE_ENV.VOOT_GATE_COOKIE_SECRET }
    const example = await readFile('examples/gate/services.yaml', 'utf8')
    // Only the SURFconext group: Bob signed in with Feide cannot pass it there, whatever he is at SURFconext.
    const surfOnly = example.replace(
      'anyOf: ["fc:org:example.org", "urn:collab:group:surfteams.nl:nl:surfnet:diensten:project_board"]',
      'group: "urn:collab:group:surfteams.nl:nl:surfnet:diensten:project_board"',
    )
    const wrong = surfOnly.replace('as: bob, service: feide, expect: deny', 'as: bob, service: feide, expect: allow')
    expect(wrong).not.toBe(surfOnly)
    const file = await write('surf-only.yaml', wrong)
    const result = await cli(['--config', file, '--test'], env)
    expect(result.code).toBe(1)
    expect(result.stdout).toMatch(/not ok \d+ - GET https:\/\/styret\.example\.no\/board\/minutes as bob \(feide\): expected allow/)
    expect(result.stdout).toContain(
      '  # This resource requires the role admin or higher in the group urn:collab:group:surfteams.nl:nl:surfnet:diensten:project_board, on SURFconext; you signed in with Feide',
    )
    expect(result.stdout).toMatch(
      / {2}# +group urn:collab:group:surfteams\.nl:nl:surfnet:diensten:project_board \(role admin or higher\) on surf: denied, other_service {2}<- settled/,
    )
    const explained = await cli(
      ['--config', file, '--explain', 'GET https://board.example.nl/board/x', '--as', 'bob', '--service', 'feide'],
      env,
    )
    expect(explained.code).toBe(0)
    expect(explained.stdout).toContain(
      'answer: deny (403, rule board): This resource requires the role admin or higher in the group urn:collab:group:surfteams.nl:nl:surfnet:diensten:project_board, on SURFconext; you signed in with Feide\n',
    )
    expect(explained.stdout).toContain(
      'how it was decided:\n  group urn:collab:group:surfteams.nl:nl:surfnet:diensten:project_board (role admin or higher) on surf: denied, other_service  <- settled\n',
    )
  })

  it('says so when a configuration has no tests', async () => {
    const text = (await readFile(join(dir, 'policy.yaml'), 'utf8')).replace(/\ntests:[\s\S]*$/, '\n')
    const result = await cli(['--config', await write('untested.yaml', text), '--test'])
    expect(result.code).toBe(1)
    expect(result.stderr).toContain('has no tests')
  })
})

describe('rules with parameters (issue 52): the group required for this URL, never the template', () => {
  const INF1000 = 'fc:fs:fs:emne:example.org:INF1000:1'

  it('runs the tests of examples/gate/courses.yaml, and --check runs them too', async () => {
    const result = await cli(['--config', 'examples/gate/courses.yaml', '--test'])
    expect(result.stderr).toBe('')
    expect(result.code).toBe(0)
    expect(result.stdout).toContain('ok 4 - a teacher of another course is not a teacher of this one: deny (403, rule course-teachers)')
    expect(result.stdout).toContain('ok 8 - an encoded colon cannot add a part to the group id: deny (403, no rule)')
    expect(result.stdout).toMatch(/# (\d+) of \1 policy tests pass/)
    const check = await cli(['--config', 'examples/gate/courses.yaml', '--check'])
    expect(check.code).toBe(0)
    expect(check.stdout).toMatch(/the configuration is valid; its \d+ policy tests pass/)
  })

  it('explains the decision on the filled-in group', async () => {
    const result = await cli([
      '--config',
      'examples/gate/courses.yaml',
      '--explain',
      'GET https://lms.example.org/courses/INF1000/grades',
      '--as',
      'bob',
    ])
    expect(result.stderr).toBe('')
    expect(result.code).toBe(0)
    expect(result.stdout.split('\n')).toEqual([
      'GET https://lms.example.org/courses/INF1000/grades as bob',
      'rule: course-teachers (rules[2]: host lms.example.org, path /courses/{course}/**, methods all)',
      `answer: deny (403, rule course-teachers): This resource requires the role admin or higher in the group ${INF1000}`,
      'how it was decided:',
      `  group ${INF1000} (role admin or higher): denied, role_too_low  <- settled`,
      expect.stringMatching(new RegExp(`^ {4}me/groups .*: ${INF1000} listed, role member, active$`)),
      expect.stringMatching(new RegExp(`^ {4}me/groups/${INF1000} .*: role member, active$`)),
      '',
    ])
    const teacher = await cli([
      '--config',
      'examples/gate/courses.yaml',
      '--explain',
      'GET https://lms.example.org/courses/INF1000/x',
      '--as',
      'tina',
    ])
    expect(teacher.stdout).toContain(`  group ${INF1000} (role admin or higher): allowed, member  <- settled`)
  })

  it('names the filled-in group in a failing test', async () => {
    const text = (await readFile('examples/gate/courses.yaml', 'utf8')).replace(
      '{ request: "GET https://lms.example.org/courses/INF1000/grades", as: bob, expect: deny, rule: course-teachers }',
      '{ request: "GET https://lms.example.org/courses/INF1000/grades", as: bob, expect: allow, rule: course-teachers }',
    )
    const result = await cli(['--config', await write('courses-changed.yaml', text), '--test'])
    expect(result.code).toBe(1)
    const failure = result.stdout.slice(result.stdout.indexOf('not ok 2 -'), result.stdout.indexOf('ok 3 -'))
    expect(failure).toContain(`  # This resource requires the role admin or higher in the group ${INF1000}`)
    expect(failure).toContain(`  #  group ${INF1000} (role admin or higher): denied, role_too_low  <- settled`)
    expect(failure).not.toContain('{course}')
  })

  describe('with --token, against the group service', () => {
    let emulator: Emulator
    beforeAll(async () => {
      emulator = await startGateEmulator()
    })
    afterAll(async () => {
      await emulator.close()
    })

    it('asks the service about the filled-in group, never about the template', async () => {
      const text = (await readFile('examples/gate/courses.yaml', 'utf8')).replace(
        'https://groups-api.dataporten.no/groups',
        `${emulator.baseUrl}\n  allowInsecureHttp: true`,
      )
      const file = await write('courses-live.yaml', text)
      emulator.resetLog()
      // bob is a student of INF1000 at the emulator: a member, not a teacher.
      const result = await cli(['--config', file, '--explain', 'GET https://lms.example.org/courses/INF1000/grades', '--token'], {
        VOOT_TOKEN: emulator.issueToken('bob'),
      })
      expect(result.stderr).toBe('')
      expect(result.stdout).toContain(`  group ${INF1000} (role admin or higher): denied, role_too_low  <- settled`)
      // The rule's line shows its path as written; the answer and the tree, the group of this URL.
      expect(result.stdout.slice(result.stdout.indexOf('answer:'))).not.toContain('{course}')
      expect(emulator.requests.map((each) => each.path).join(' ')).not.toMatch(/\{|%7B/i)
    })
  })
})

describe('voot-guard gate --explain', () => {
  it('prints the answering rule and the decision tree for a fixture user', async () => {
    const file = await write('explain.yaml', POLICY())
    const result = await cli(['--config', file, '--explain', 'POST https://wiki.example.org/admin/users', '--as', 'bob'])
    expect(result.stderr).toBe('')
    expect(result.code).toBe(0)
    expect(result.stdout.split('\n')).toEqual([
      'POST https://wiki.example.org/admin/users as bob',
      'rule: admins (rules[0]: host wiki.example.org, path /admin/**, methods all)',
      'answer: deny (403, rule admins): This resource requires the role admin or higher in the group fc:org:example.org',
      'how it was decided:',
      expect.stringMatching(/^ {2}group fc:org:example\.org \(role admin or higher\): denied, role_too_low/),
      expect.stringMatching(/me\/groups.*fc:org:example\.org listed, role member, active/),
      expect.stringMatching(/me\/groups\/fc:org:example\.org.*role member, active/),
      '',
    ])
  })

  it('names no rule for a request none matches, and refuses an unknown user', async () => {
    const file = join(dir, 'explain.yaml')
    const none = await cli(['--config', file, '--explain', 'GET https://wiki.example.org/public/../admin', '--as', 'anonymous'])
    expect(none.stdout).toContain('rule: none matches')
    expect(none.stdout).toContain('answer: deny (403, no rule)')
    const unknown = await cli(['--config', file, '--explain', 'GET https://wiki.example.org/', '--as', 'mallory'])
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toContain("--as must be anonymous or a user of the configuration's fixtures (alice, bob, carol)")
  })

  describe('with --token, against the group service', () => {
    let emulator: Emulator
    beforeAll(async () => {
      emulator = await startGateEmulator()
    })
    afterAll(async () => {
      await emulator.close()
    })

    it('decides for the holder of VOOT_TOKEN, and never takes a token from the command line', async () => {
      const text = POLICY().replace(serviceUrl, emulator.baseUrl)
      const file = await write('live.yaml', text)
      const result = await cli(['--config', file, '--explain', 'GET https://wiki.example.org/admin/x', '--token'], {
        VOOT_TOKEN: emulator.issueToken('alice'),
      })
      expect(result.stderr).toBe('')
      expect(result.stdout).toContain('as the holder of VOOT_TOKEN')
      expect(result.stdout).toContain('answer: allow (200, rule admins)')
      const refused = await cli(['--config', file, '--explain', 'GET https://wiki.example.org/', '--token', 'abc'])
      expect(refused.code).toBe(2)
      expect(refused.stderr).toContain('--token is not accepted')
    })
  })
})

describe('createPolicyRunner', () => {
  it('refuses a broken configuration as the gate does', () => {
    expect(() => createPolicyRunner({ service: { baseUrl: serviceUrl }, rules: [{ methods: ['GETT'], allow: 'signed-in' }] })).toThrow(
      GateConfigError,
    )
  })
})
