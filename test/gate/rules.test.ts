/**
 * Rules and path normalisation, one by one: globs (`*` one segment, `**` any number, so
 * `/admin/**` covers `/admin`), hosts (exact, `*.suffix`), methods, first match wins, and
 * every ambiguous path refused before matching.
 */
import { describe, expect, it } from 'vitest'
import { createGuardCore } from '../../src/adapter-kit.js'
import { ProblemList } from '../../gate/config/problem.js'
import { normaliseHost, normalisePath } from '../../gate/http/path-normalise.js'
import { compileRules, globToRegExp, matchRule } from '../../gate/policy/rules.js'
import { readGateSettings } from '../../gate/config/read.js'
import { createTrustCheck } from '../../gate/http/trusted-proxies.js'
import { UNICODE_AND_TRAILING_PATHS } from './support/attack-paths.js'

describe('path globs', () => {
  it.each([
    ['/admin/**', '/admin', true],
    ['/admin/**', '/admin/', true],
    ['/admin/**', '/admin/a/b/c', true],
    ['/admin/**', '/administrator', false],
    ['/docs/*', '/docs/a', true],
    ['/docs/*', '/docs/a/b', false],
    ['/docs/*.pdf', '/docs/x.pdf', true],
    ['/docs/*.pdf', '/docs/xpdf', false],
    ['/courses/*/grades/**', '/courses/INF1000/grades', true],
    ['/courses/*/grades/**', '/courses/INF1000/notes', false],
    ['/', '/', true],
    ['/', '/x', false],
    ['/**', '/anything/at/all', true],
    ['/a.b', '/axb', false],
  ])('%s against %s: %s', (glob, path, matches) => {
    expect(globToRegExp(glob).test(path)).toBe(matches)
  })
})

describe('normalisePath', () => {
  it.each([
    ['/docs/a%20b?x=../y#frag', '/docs/a b'],
    ['/caf%C3%A9', '/café'],
    ['/admin/', '/admin/'],
    ['/v1.2/a.b/x', '/v1.2/a.b/x'],
    ['/docs/a%20b/', '/docs/a b/'],
    ['/%E2%82%AC/%C3%A6x/a%C2%A0b', '/\u20ac/\u00e6x/a\u00a0b'],
    ['/%EF%AC%81le', '/\ufb01le'],
  ])('%s reads as %s', (raw, path) => expect(normalisePath(raw)).toBe(path))

  it.each([
    '/admin/../public',
    '/admin/./x',
    '/admin/..',
    '/%2e%2e/admin',
    '/%2E./admin',
    '/.%2e/admin',
    '//admin',
    '/a//b',
    '/a%2Fb',
    '/a%2fb',
    '/a%5Cb',
    '/a\\b',
    '/a%00b',
    '/a%252e%252e',
    '/a%zz',
    '/a%C3',
    '/a;b',
    'admin',
    '',
    '/a\u0000b',
    ...UNICODE_AND_TRAILING_PATHS.map(([path]) => path),
    '/a%E2%80%8Fb',
    '/a%E2%81%A0b',
    '/a%C2%ADb',
    '/a%F3%A0%80%81b',
    '/a\u00e9',
    '/a%09b',
    '/a%7Fb',
    '/admin%20',
    '/admin ',
    '/admin...',
    '/a/%E2%80%A6/b',
    '/a%EF%BC%9Bb',
    '/a%EF%BC%85b',
    '/a%EF%BC%BCb',
  ])('%j is refused', (raw) => expect(normalisePath(raw)).toBeUndefined())
})

describe('normaliseHost', () => {
  it.each([
    ['Wiki.Example.ORG:8443', 'wiki.example.org'],
    ['wiki.example.org.', 'wiki.example.org'],
    ['[::1]:8080', '[::1]'],
    ['127.0.0.1', '127.0.0.1'],
  ])('%s is %s', (raw, host) => expect(normaliseHost(raw)).toBe(host))

  it.each(['a..b', 'a b', 'evil.example/x', 'a@b', ''])('%j is refused', (raw) => expect(normaliseHost(raw)).toBeUndefined())
})

describe('matchRule', () => {
  const core = createGuardCore({ baseUrl: 'https://groups-api.example.org/groups' })
  const problems = new ProblemList()
  const rules = compileRules(
    [
      { id: 'static', host: 'wiki.example.org', path: '/static/**', allow: 'anyone' },
      {
        id: 'writes',
        host: '*.example.org',
        path: '/api/**',
        methods: ['POST', 'DELETE'],
        require: { group: 'fc:org:example.org', role: 'admin' },
      },
      { id: 'rest', host: '*.example.org', allow: 'signed-in' },
    ],
    core,
    problems,
  )

  it('takes the first match, by host, method and path; no match is undefined', () => {
    expect(problems.items).toEqual([])
    expect(matchRule(rules, 'GET', 'wiki.example.org', '/static/a.css')?.id).toBe('static')
    expect(matchRule(rules, 'GET', 'lms.example.org', '/static/a.css')?.id).toBe('rest')
    expect(matchRule(rules, 'POST', 'lms.example.org', '/api/x')?.id).toBe('writes')
    expect(matchRule(rules, 'GET', 'lms.example.org', '/api/x')?.id).toBe('rest')
    expect(matchRule(rules, 'GET', 'example.org', '/')).toBeUndefined()
    expect(matchRule(rules, 'GET', 'evil-example.org', '/')).toBeUndefined()
    expect(matchRule(rules, 'GET', 'example.org.evil.net', '/')).toBeUndefined()
  })

  it('refuses a requirement the core refuses, under its rule', () => {
    const more = new ProblemList()
    compileRules([{ require: { group: 'fc:org:example.org', role: 'boss' } }], core, more)
    expect(more.items.map((problem) => problem.key)).toEqual(['rules[0].require.role'])
  })
})

describe('trustedProxies', () => {
  it('believes the listed CIDRs only, IPv4-mapped addresses as IPv4', () => {
    const trusted = createTrustCheck(['127.0.0.1/32', '10.0.0.0/8', 'fd00::/8'])
    expect(trusted('127.0.0.1')).toBe(true)
    expect(trusted('::ffff:127.0.0.1')).toBe(true)
    expect(trusted('10.20.30.40')).toBe(true)
    expect(trusted('fd12::1')).toBe(true)
    expect(trusted('127.0.0.2')).toBe(false)
    expect(trusted('::1')).toBe(false)
    expect(trusted('192.168.1.1')).toBe(false)
    expect(trusted(undefined)).toBe(false)
  })
})

describe('rules with parameters (issue 52)', () => {
  const core = createGuardCore({ baseUrl: 'https://groups-api.example.org/groups' })
  const COURSE = 'fc:fs:fs:emne:example.org:{course}:1'
  const problems = new ProblemList()
  const rules = compileRules(
    [
      { id: 'narrow', path: '/exams/{course}/**', params: { course: '[A-Z]{3}[0-9]{4}' }, require: { group: COURSE, role: 'admin' } },
      { id: 'courses', path: '/courses/{course}/**', require: { group: COURSE, role: 'admin' } },
      { id: 'either', path: '/both/{a}/{b}', require: { anyOf: ['fc:fs:fs:emne:example.org:{a}:1', 'fc:fs:fs:emne:example.org:{b}:1'] } },
      { id: 'rest', allow: 'signed-in' },
    ],
    core,
    problems,
  )

  it('binds one segment of the safe alphabet and requires the group of this URL', () => {
    expect(problems.items).toEqual([])
    const rule = matchRule(rules, 'GET', 'lms.example.org', '/courses/INF1000/notes')
    expect(rule?.id).toBe('courses')
    expect(rule?.requirementAt?.('/courses/INF1000/notes')).toMatchObject({
      kind: 'group',
      groupId: 'fc:fs:fs:emne:example.org:INF1000:1',
      role: 'admin',
    })
    expect(matchRule(rules, 'GET', 'lms.example.org', '/courses/INF1000')?.id).toBe('courses')
    const both = matchRule(rules, 'GET', 'x', '/both/A-1/b_2.x')
    expect(both?.requirementAt?.('/both/A-1/b_2.x')).toMatchObject({
      kind: 'anyOf',
      requirements: [{ groupId: 'fc:fs:fs:emne:example.org:A-1:1' }, { groupId: 'fc:fs:fs:emne:example.org:b_2.x:1' }],
    })
  })

  it.each([
    ['a colon (the shape of the id)', '/courses/x:fc:org:evil/notes'],
    ['an encoded slash', '/courses/a%2Fb/notes'],
    ['a space', '/courses/a b/notes'],
    ['non-ASCII', '/courses/æ/notes'],
    ['an over-long value', `/courses/${'A'.repeat(200)}/notes`],
    ['an empty segment', '/courses//notes'],
  ])('does not match a value outside the alphabet: %s', (_label, path) => {
    expect(matchRule(rules, 'GET', 'x', path)?.id).toBe('rest')
  })

  it("narrows a parameter with the rule's anchored expression", () => {
    expect(matchRule(rules, 'GET', 'x', '/exams/INF1000/a')?.id).toBe('narrow')
    expect(matchRule(rules, 'GET', 'x', '/exams/INF10000/a')?.id).toBe('rest')
    expect(matchRule(rules, 'GET', 'x', '/exams/xINF1000/a')?.id).toBe('rest')
  })

  it.each([
    [{ path: '/courses/{course}', require: { group: 'fc:x:{cours}' } }, 'rules[0].require.group', /\{cours\}.*binds \{course\}/],
    [{ path: '/courses/*', require: { group: 'fc:x:{course}' } }, 'rules[0].require.group', /its path binds none/],
    [{ path: '/c/{course}', params: { id: '[0-9]+' }, require: { group: 'fc:x:{course}' } }, 'rules[0].params.id', /does not bind/],
    [
      { path: '/c/{course}', params: { course: '(a+)+' }, require: { group: 'fc:x:{course}' } },
      'rules[0].params.course',
      /nests quantifiers/,
    ],
    [{ path: '/c/{course}', params: { course: '(a)\\1' }, require: { group: 'fc:x:{course}' } }, 'rules[0].params.course', /backreference/],
    [
      { path: '/c/{course}', params: { course: '[' }, require: { group: 'fc:x:{course}' } },
      'rules[0].params.course',
      /not a regular expression/,
    ],
    [{ path: '/c/x{course}', require: { group: 'fc:x' } }, 'rules[0].path', /whole segment/],
    [{ path: '/c/{a}/{a}', require: { group: 'fc:x:{a}' } }, 'rules[0].path', /twice/],
  ])('refuses a parameter mistake when the config is read (%#)', (rule, key, message) => {
    const found = new ProblemList()
    readGateSettings({ service: { baseUrl: 'https://groups-api.example.org/groups' }, rules: [rule, { allow: 'anyone' }] }, found)
    const problem = found.items.find((each) => each.key === key)
    expect(problem?.message).toMatch(message)
  })

  it('keeps finding shadowed rules', () => {
    const shadowed = (first: object, second: object) => {
      const found = new ProblemList()
      readGateSettings({ service: { baseUrl: 'https://groups-api.example.org/groups' }, rules: [first, second] }, found)
      return found.items.some((each) => /no request can reach|reach/.test(each.message))
    }
    const course = { path: '/courses/{course}/**', require: { group: COURSE } }
    expect(shadowed({ path: '/courses/*/**', allow: 'signed-in' }, course)).toBe(true)
    expect(shadowed(course, { path: '/courses/{c}/**', require: { group: 'fc:x:{c}' } })).toBe(true)
    expect(shadowed(course, { path: '/courses/INF1000/**', allow: 'anyone' })).toBe(true)
    expect(shadowed({ ...course, params: { course: '[A-Z]+' } }, { path: '/courses/inf1000/**', allow: 'anyone' })).toBe(false)
    expect(shadowed(course, { path: '/courses/*/**', allow: 'anyone' })).toBe(false)
    expect(shadowed({ ...course, params: { course: '[A-Z]+' } }, { path: '/courses/{c}/**', require: { group: 'fc:x:{c}' } })).toBe(false)
  })
})
