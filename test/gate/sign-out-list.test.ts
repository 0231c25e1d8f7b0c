/**
 * The sign-out list: an id is listed until its session would have ended, and the list
 * stays bounded, dropping the ids whose sessions end first.
 */
import { describe, expect, it } from 'vitest'
import { createSignOutList } from '../../gate/session/sign-out-list.js'

describe('createSignOutList', () => {
  it('lists an id until the time given, and not after', () => {
    let time = 1_000
    const list = createSignOutList(() => time)
    list.add('a', 5_000)
    list.add('past', 500)
    expect(list.has('a')).toBe(true)
    expect(list.has('past')).toBe(false)
    expect(list.has('b')).toBe(false)
    time = 5_000
    expect(list.has('a')).toBe(false)
  })

  it('stays bounded: expired ids go first, then those ending soonest', () => {
    let time = 0
    const list = createSignOutList(() => time, 3)
    list.add('ends-at-10', 10)
    list.add('ends-at-100', 100)
    list.add('ends-at-50', 50)
    list.add('ends-at-200', 200)
    expect(list.size).toBe(3)
    expect(list.has('ends-at-10')).toBe(false)
    expect(list.has('ends-at-50')).toBe(true)
    time = 60
    list.add('ends-at-300', 300)
    expect(list.has('ends-at-50')).toBe(false)
    expect(['ends-at-100', 'ends-at-200', 'ends-at-300'].every((id) => list.has(id))).toBe(true)
  })
})
