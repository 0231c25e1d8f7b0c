/**
 * A rule with parameters (issue 52) through the gate behind real nginx (examples/gate/nginx.conf),
 * on the emulator's course groups: `/courses/{course}/**` requires the role admin in
 * `fc:fs:fs:emne:example.org:{course}:1`, the course's own group. A teacher of the course
 * passes; a teacher of another course, a student of this one, no token and the group
 * service down get the HTTP contract's 403, 403, 401 and 503. A hostile segment (an
 * encoded `:`, `..`, a control character, too long, outside the rule's narrowing) is
 * refused without any call to the group service: the emulator's request log says so. The
 * forbidden page and whoami name the group this URL required, never the `{course}` template.
 */
import { existsSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { defaultData, startEmulator, type Emulator, type EmulatorData } from '../../testing/index.js'
import type { GateConfig, GateServer } from '../../gate/index.js'
import { PAGE_CSP } from '../../gate/pages/page-html.js'
import { GATE_CLIENT, gatePort, startTestGate, testGateConfig } from './support/gate-harness.js'
import { needBinary, NGINX, startEchoApp, startNginx, type RunningProxy } from './support/proxies.js'
import { appSaw, send } from './support/raw-request.js'

const INF1000 = 'fc:fs:fs:emne:example.org:INF1000:1'
const MAT1100 = 'fc:fs:fs:emne:example.org:MAT1100:1'

/** The built-in data, with a teacher (the role admin) of each of the emulator's two course groups. */
const COURSE_DATA: EmulatorData = {
  ...defaultData,
  clients: [...defaultData.clients, GATE_CLIENT],
  users: [
    ...defaultData.users,
    {
      id: 'tina',
      name: 'Tina Lærer',
      email: 'tina@example.org',
      memberships: [{ groupId: INF1000, membership: { basic: 'admin', displayName: 'Faglærer', active: true, fsroles: ['LECTURER'] } }],
    },
    {
      id: 'mads',
      name: 'Mads Lektor',
      email: 'mads@example.org',
      memberships: [{ groupId: MAT1100, membership: { basic: 'admin', displayName: 'Faglærer', active: true, fsroles: ['LECTURER'] } }],
    },
  ],
}

/**
 * Two rules with parameters and no catch-all: a request no rule matches is refused (403,
 * `no_rule`) without credentials being read. `programmes` has no narrowing, so that its
 * segments meet the parameters' own alphabet and length bound alone (bob is a member of the
 * emulator's programme group `fc:fs:fs:prg:example.org:BINF`).
 */
const COURSE_RULES: GateConfig['rules'] = [
  { id: 'public', path: '/public/**', allow: 'anyone' },
  {
    id: 'course-teachers',
    path: '/courses/{course}/**',
    params: { course: '[A-Z]{3}[0-9]{4}' },
    require: { group: 'fc:fs:fs:emne:example.org:{course}:1', role: 'admin' },
  },
  { id: 'programmes', path: '/programmes/{programme}/**', require: { group: 'fc:fs:fs:prg:example.org:{programme}' } },
]

let emulator: Emulator
let gate: GateServer
let app: Awaited<ReturnType<typeof startEchoApp>>
let nginx: RunningProxy | undefined

beforeAll(async () => {
  emulator = await startEmulator({ data: COURSE_DATA })
  gate = await startTestGate(testGateConfig(emulator, { rules: COURSE_RULES }))
  app = await startEchoApp()
  if (existsSync(NGINX)) nginx = await startNginx({ gatePort: gatePort(gate), appPort: app.port })
}, 30_000)

afterAll(async () => {
  await nginx?.stop()
  await gate?.close()
  await app?.close()
  await emulator?.close()
})

/** A token never used before: nothing of it is cached, so a check that matched a rule would have to ask the group service. */
const fresh = (user: string) => ({ authorization: `Bearer ${emulator.issueToken(user)}` })
const json = { accept: 'application/json' }

/** The group service's requests since the log was reset (the OAuth server's too: none may come either). */
const calls = () => emulator.requests.map((each) => each.path)
/** The group endpoints' requests alone (whoami asks the OAuth server's userinfo who a bearer token's user is). */
const groupCalls = () => calls().filter((path) => path.startsWith(new URL(emulator.baseUrl).pathname))

describe('a rule with parameters behind nginx, on the emulator’s course groups', () => {
  it('lets a teacher of the course through, and the app hears the rule', async (ctx) => {
    needBinary(ctx, NGINX)
    emulator.resetLog()
    const answer = await send(nginx!.url, '/courses/INF1000/syllabus?week=3', { headers: fresh('tina') })
    expect(answer.status).toBe(200)
    expect(appSaw(answer).url).toBe('/courses/INF1000/syllabus?week=3')
    expect(appSaw(answer).headers['x-voot-rule']).toBe('course-teachers')
    // The course's own group was the one asked about (never the template).
    expect(calls().join(' ')).not.toMatch(/\{|%7B/i)
    expect(emulator.count()).toBeGreaterThan(0)
    // The same teacher is no teacher of another course.
    expect((await send(nginx!.url, '/courses/MAT1100/syllabus', { headers: fresh('tina') })).status).toBe(403)
    expect((await send(nginx!.url, '/courses/MAT1100/syllabus', { headers: fresh('mads') })).status).toBe(200)
  })

  it('refuses a teacher of another course and a student of this one with 403, naming the group of this URL', async (ctx) => {
    needBinary(ctx, NGINX)
    for (const user of ['mads', 'bob']) {
      const before = app.seen.length
      const answer = await send(nginx!.url, '/courses/INF1000/grades', { headers: { ...fresh(user), ...json } })
      expect(answer.status, user).toBe(403)
      expect(JSON.parse(answer.body), user).toEqual({
        error: 'forbidden',
        error_description: `This resource requires the role admin or higher in the group ${INF1000}`,
      })
      expect(app.seen.length).toBe(before)
    }
  })

  it('answers 401 without a token', async (ctx) => {
    needBinary(ctx, NGINX)
    const answer = await send(nginx!.url, '/courses/INF1000/grades', { headers: json })
    expect(answer.status).toBe(401)
    expect(answer.headers['www-authenticate']).toBe('Bearer realm="voot-gate"')
  })

  it('answers 503 with Retry-After while the group service is down', async (ctx) => {
    needBinary(ctx, NGINX)
    // A gate of its own: the failure must not open the shared gate's circuit for the other tests.
    const ownGate = await startTestGate(testGateConfig(emulator, { rules: COURSE_RULES }))
    const ownNginx = await startNginx({ gatePort: gatePort(ownGate), appPort: app.port })
    const reset = emulator.faults.add({ kind: 'reset' })
    try {
      const answer = await send(ownNginx.url, '/courses/INF1000/grades', { headers: fresh('tina') })
      expect(answer.status).toBe(503)
      expect(answer.headers['retry-after']).toBe('5')
    } finally {
      emulator.faults.remove(reset)
      await ownNginx.stop()
      await ownGate.close()
    }
  })

  // Each is refused before the group service is asked anything. Why: a parameter takes one
  // segment of letters, digits, `_`, `-` and `.` (at most 128), after the path is decoded
  // once; a value outside that alphabet, that length or the rule's `params` does not match
  // the rule (here no other rule is left: 403 `no_rule`, no credentials read), and a path
  // with `..`, `//`, an encoded `/` or a NUL is refused before any rule (403). So no group id
  // is ever built from such a segment, and nothing is asked about one: a URL fills in the one
  // part of the id the rule leaves open, and cannot add a `:` part or change its shape. Each
  // request carries a fresh token of someone the rule would let in had it matched, so a
  // match would have cost at least the `me/groups` call that the log must not show.
  it.for([
    ['/courses/INF1000%3A1/grades', 'tina', 'an encoded ":" (would add a part to the id)'],
    ['/courses/fc%3Aorg%3Aexample.org/grades', 'tina', 'encoded ":"s naming another kind of group'],
    ['/programmes/BINF%3Aevil/x', 'bob', 'an encoded ":" where no narrowing would catch it'],
    ['/programmes/BINF%3a/x', 'bob', 'a lower-case encoded ":"'],
    ['/courses/INF1000/../MAT1100/grades', 'mads', 'a ".." segment'],
    ['/programmes/%2e%2e/x', 'bob', 'an encoded ".." as the parameter'],
    ['/programmes/./x', 'bob', 'a "." as the parameter'],
    ['/programmes/BINF%2Fx/y', 'bob', 'an encoded "/" inside the parameter'],
    ['/programmes/BI%0ANF/x', 'bob', 'a line feed (a control character)'],
    ['/programmes/BINF%09/x', 'bob', 'a tab'],
    ['/programmes/BINF%7F/x', 'bob', 'DEL'],
    ['/programmes/BINF%00/x', 'bob', 'NUL (nginx itself refuses it: 400)'],
    ['/programmes/BINF%C2%85/x', 'bob', 'NEL, a C1 control'],
    ['/programmes/BINF%20/x', 'bob', 'a space'],
    ['/programmes/%7Bprogramme%7D/x', 'bob', 'a template of its own'],
    [`/programmes/${'B'.repeat(129)}/x`, 'bob', 'one character longer than a parameter may be'],
    ['/courses/inf1000/grades', 'tina', 'a lower-case code, outside the narrowing'],
    ['/courses/INF10000/grades', 'tina', 'a digit too many, outside the narrowing'],
    ['/courses/BINF/grades', 'bob', 'a programme code, outside the narrowing'],
  ] as const)('refuses %s (%s: %s) without a call to the group service', async ([path, user], ctx) => {
    needBinary(ctx, NGINX)
    emulator.resetLog()
    const before = app.seen.length
    const answer = await send(nginx!.url, path, { headers: { ...fresh(user), ...json } })
    // nginx answers a NUL with 400 before asking the gate; every other one is the gate's 403.
    expect(answer.status).toBe(path.includes('%00') ? 400 : 403)
    expect(app.seen.length).toBe(before)
    expect(calls()).toEqual([])
  })

  it('asks the group service when the same requests are well-formed (the refusals above are not for want of asking)', async (ctx) => {
    needBinary(ctx, NGINX)
    emulator.resetLog()
    const answer = await send(nginx!.url, `/programmes/BINF/x`, { headers: fresh('bob') })
    expect(answer.status).toBe(200)
    expect(emulator.count()).toBeGreaterThan(0)
    // The longest value a parameter takes still matches (and is asked about: not a member).
    emulator.resetLog()
    const longest = await send(nginx!.url, `/programmes/${'B'.repeat(128)}/x`, { headers: fresh('bob') })
    expect(longest.status).toBe(403)
    expect(emulator.count()).toBeGreaterThan(0)
  })

  it('shows a refused browser the forbidden page, naming the group of this URL and linking to whoami about it', async (ctx) => {
    needBinary(ctx, NGINX)
    const answer = await send(nginx!.url, '/courses/INF1000/grades?x=1', { headers: { ...fresh('mads'), accept: 'text/html' } })
    expect(answer.status).toBe(403)
    expect(answer.headers['content-security-policy']).toBe(PAGE_CSP)
    expect(answer.headers['cache-control']).toBe('no-store')
    expect(answer.body).toContain('You do not have access to this page')
    expect(answer.body).toContain(`This resource requires the role admin or higher in the group ${INF1000}.`)
    expect(answer.body).not.toContain('{course}')
    expect(answer.body).not.toContain('<script')
    expect(answer.body).toContain('href="/_gate/whoami?path=%2Fcourses%2FINF1000%2Fgrades"')
  })

  it('has whoami name and check the group a path requires, and never ask about the template', async (ctx) => {
    needBinary(ctx, NGINX)
    interface Whoami {
      path?: string
      rules: { id: string; requires: string; outcome: string }[]
    }
    const ask = async (query: string, user: string) => {
      const answer = await send(nginx!.url, `/_gate/whoami${query}`, { headers: { ...fresh(user), ...json } })
      expect(answer.status).toBe(200)
      return JSON.parse(answer.body) as Whoami
    }
    emulator.resetLog()
    // Without a path: the rules as written, and "depends" (no group to ask about).
    const bare = await ask('', 'tina')
    expect(bare.path).toBeUndefined()
    expect(bare.rules.map((rule) => [rule.id, rule.outcome])).toEqual([
      ['public', 'pass'],
      ['course-teachers', 'depends'],
      ['programmes', 'depends'],
    ])
    expect(bare.rules[1]!.requires).toBe('the role admin or higher in the group fc:fs:fs:emne:example.org:{course}:1')
    expect(groupCalls()).toEqual([])

    const teacher = await ask('?path=%2Fcourses%2FINF1000%2Fgrades', 'tina')
    expect(teacher.path).toBe('/courses/INF1000/grades')
    expect(teacher.rules.map((rule) => [rule.id, rule.requires, rule.outcome])).toEqual([
      ['public', 'anyone, without signing in', 'pass'],
      ['course-teachers', `the role admin or higher in the group ${INF1000}`, 'pass'],
      ['programmes', 'membership in the group fc:fs:fs:prg:example.org:{programme}', 'depends'],
    ])
    const other = await ask('?path=/courses/INF1000/grades', 'mads')
    expect(other.rules[1]).toMatchObject({ requires: `the role admin or higher in the group ${INF1000}`, outcome: 'fail' })
    // Never a group id with a template in it.
    expect(groupCalls().join(' ')).not.toMatch(/\{|%7B/i)

    // A path the rule does not bind: the rule as written, not asked about; an ambiguous one is refused.
    emulator.resetLog()
    const outside = await ask('?path=/courses/inf1000/grades', 'tina')
    expect(outside.rules[1]!.outcome).toBe('depends')
    for (const bad of ['?path=/courses/INF1000/../MAT1100', '?path=courses/INF1000', '?path=/a&path=/b']) {
      const refused = await send(nginx!.url, `/_gate/whoami${bad}`, { headers: { ...fresh('tina'), ...json } })
      expect(refused.status, bad).toBe(400)
    }
    expect(groupCalls()).toEqual([])

    // The page for people: HTML without script under the strict CSP, naming the group of the path.
    const page = await send(nginx!.url, '/_gate/whoami?path=%2Fcourses%2FINF1000%2Fgrades', {
      headers: { ...fresh('tina'), accept: 'text/html' },
    })
    expect(page.status).toBe(200)
    expect(page.headers['content-security-policy']).toBe(PAGE_CSP)
    expect(page.body).not.toContain('<script')
    expect(page.body).toContain('For <code>/courses/INF1000/grades</code>')
    expect(page.body).toContain(`needs the role admin or higher in the group ${INF1000}. <span class="pass">you pass.</span>`)
  })
})
