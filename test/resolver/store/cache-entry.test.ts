import { describe, expect, it } from 'vitest'
import { CacheEntry, MAX_SPAN } from '../../../src/resolver/store/cache-entry.js'

const T0 = Date.parse('2026-11-21T12:00:00Z')

describe('CacheEntry', () => {
  it('keeps its instants exactly for whole-ms lifetimes', () => {
    const entry = new CacheEntry('answer', T0, T0 + 60_000, T0 + 120_000)
    expect(entry.value).toBe('answer')
    expect(entry.storedAt).toBe(T0)
    expect(entry.freshUntil).toBe(T0 + 60_000)
    expect(entry.hardUntil).toBe(T0 + 120_000)
  })

  it('rounds a fractional limit down: an entry may expire early, never late', () => {
    const entry = new CacheEntry(1, T0, T0 + 999.9, T0 + 1000.5)
    expect(entry.freshUntil).toBe(T0 + 999)
    expect(entry.hardUntil).toBe(T0 + 1000)
  })

  it('cuts an unbounded or far limit to MAX_SPAN, beyond any ttl + staleIfError', () => {
    const entry = new CacheEntry(1, T0, T0 + 60_000, Infinity)
    expect(entry.hardUntil).toBe(T0 + MAX_SPAN)
    expect(MAX_SPAN).toBeGreaterThan(2 * 86_400_000)
  })

  it('treats a limit at or before storing, or NaN, as already passed', () => {
    expect(new CacheEntry(1, T0, T0 - 5, T0).freshUntil).toBe(T0)
    expect(new CacheEntry(1, T0, Number.NaN, Number.NaN).hardUntil).toBe(T0)
  })
})
