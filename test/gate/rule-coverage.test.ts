/**
 * Reachability of rules: `ruleCovers` says an earlier rule takes every request of a later
 * one only when that is so. The property below checks it against the matcher itself: for
 * random globs and paths, whatever the inner glob matches, the covering glob matches too.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { pathCovers, ruleCovers } from '../../gate/config/rule-coverage.js'
import { globToRegExp } from '../../gate/policy/rules.js'

describe('pathCovers', () => {
  it.each([
    [undefined, '/admin/**', true],
    ['/**', '/admin/**', true],
    ['/admin/**', '/admin/users', true],
    ['/admin/**', '/admin', true],
    ['/admin/**', '/admin/*/edit', true],
    ['/admin/*', '/admin/users', true],
    ['/admin/*', '/admin/**', false],
    ['/admin/**', '/**', false],
    ['/admin/**', undefined, false],
    ['/a*', '/ab*', true],
    ['/ab*', '/a*', false],
    ['/*.css', '/static.css', true],
    ['/*/x', '/**/x', false],
    ['/**/x', '/a/**/x', true],
    ['/docs/**', '/docs-old/**', false],
  ])('%s covers %s: %s', (outer, inner, covers) => {
    expect(pathCovers(outer, inner)).toBe(covers)
  })

  // Globs over a small alphabet, so that random paths often match them.
  const segment = fc.oneof(fc.constantFrom('**', '*', 'a', 'b', 'a*', '*b', 'ab'), fc.constant(''))
  const glob = fc.array(segment, { minLength: 1, maxLength: 4 }).map((parts) => `/${parts.join('/')}`)
  const path = fc
    .array(fc.constantFrom('', 'a', 'b', 'ab', 'ba', 'aab'), { minLength: 1, maxLength: 5 })
    .map((parts) => `/${parts.join('/')}`)

  it('is sound: a covered glob matches no path the covering one does not', () => {
    fc.assert(
      fc.property(glob, glob, fc.array(path, { minLength: 20, maxLength: 20 }), (outer, inner, paths) => {
        if (!pathCovers(outer, inner)) return
        const a = globToRegExp(outer)
        const b = globToRegExp(inner)
        for (const p of paths) if (b.test(p)) expect(a.test(p), `${outer} covers ${inner}, but ${p}`).toBe(true)
      }),
      { numRuns: 3_000 },
    )
  })

  it('finds coverage that holds on every sampled path for identical and ** globs', () => {
    fc.assert(
      fc.property(glob, (inner) => {
        expect(pathCovers(inner, inner)).toBe(true)
        expect(pathCovers('/**', inner)).toBe(true)
        expect(pathCovers(undefined, inner)).toBe(true)
      }),
    )
  })
})

describe('ruleCovers', () => {
  const admins = { path: '/admin/**', methods: ['GET'], require: { group: 'fc:org:example.org', role: 'admin' } } as const

  it('needs host, methods and path all to cover', () => {
    expect(ruleCovers({ allow: 'signed-in' }, admins)).toBe(true)
    expect(ruleCovers({ methods: ['GET', 'POST'], allow: 'signed-in' }, admins)).toBe(true)
    expect(ruleCovers({ methods: ['POST'], allow: 'signed-in' }, admins)).toBe(false)
    expect(ruleCovers({ host: 'wiki.example.org', allow: 'signed-in' }, admins)).toBe(false)
    expect(ruleCovers({ host: '*.example.org', allow: 'signed-in' }, { ...admins, host: 'wiki.example.org' })).toBe(true)
    expect(ruleCovers({ host: '*.example.org', allow: 'signed-in' }, { ...admins, host: '*.wiki.example.org' })).toBe(true)
    expect(ruleCovers({ host: '*.example.org', allow: 'signed-in' }, { ...admins, host: 'example.org' })).toBe(false)
    expect(ruleCovers({ host: '*.wiki.example.org', allow: 'signed-in' }, { ...admins, host: '*.example.org' })).toBe(false)
    expect(ruleCovers({ path: '/admin/*', allow: 'signed-in' }, admins)).toBe(false)
  })
})
