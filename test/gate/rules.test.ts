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
