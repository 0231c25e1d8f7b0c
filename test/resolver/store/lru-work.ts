/**
 * Counts the work of the answer store's LRU while a function runs: every entry any of its
 * iterations visits, and every delete it is asked for. For tests that bound the cost of
 * an operation by a count, not by time.
 */
import { LRUCache } from 'lru-cache'
import { vi } from 'vitest'

const ITERATORS = [
  'keys',
  'values',
  'entries',
  'rkeys',
  'rvalues',
  'rentries',
  'forEach',
  'rforEach',
  'find',
  'dump',
  Symbol.iterator,
] as const

/** Counts the entries any LRU iteration visits and the deletes asked for, while `run` runs (restores every mock after). */
export function work(run: () => void): { visited: number; deleted: number } {
  const counts = { visited: 0, deleted: 0 }
  const prototype = LRUCache.prototype as unknown as Record<PropertyKey, (...args: unknown[]) => unknown>
  for (const name of ITERATORS) {
    const original = prototype[name]!
    vi.spyOn(prototype, name as never).mockImplementation(function (this: unknown, ...args: unknown[]) {
      const result = original.apply(this, args)
      if (result === undefined || typeof (result as Iterable<unknown>)[Symbol.iterator] !== 'function') {
        counts.visited += (this as LRUCache<string, object>).size
        return result
      }
      return (function* () {
        for (const item of result as Iterable<unknown>) {
          counts.visited++
          yield item
        }
      })()
    } as never)
  }
  const originalDelete = LRUCache.prototype.delete
  vi.spyOn(LRUCache.prototype, 'delete').mockImplementation(function (this: LRUCache<string, object>, key: string) {
    counts.deleted++
    return originalDelete.call(this, key)
  })
  try {
    run()
  } finally {
    vi.restoreAllMocks()
  }
  return counts
}
