/**
 * The call slots on their own, on a clock the test moves: first come first served, a
 * waiter whose time to be sent has passed is refused (not handed a slot at its deadline),
 * and a waiter whose signal fires leaves the queue.
 */
import { expect, it } from 'vitest'
import { createCallSlots } from '../../src/client/call-slots.js'
import { SendExpiredError } from '../../src/client/send-by.js'

const settle = (promise: Promise<void>): Promise<string> =>
  promise.then(
    () => 'granted',
    (error: unknown) => (error instanceof SendExpiredError ? 'expired' : 'aborted'),
  )

it('hands a freed slot to the longest waiter that may still be sent; refuses the ones whose time is over', async () => {
  let now = 0
  const slots = createCallSlots(1, () => now)
  const signal = new AbortController().signal
  await slots.acquire(signal, 100)
  const first = settle(slots.acquire(signal, 50))
  const second = settle(slots.acquire(signal, 80))
  const third = settle(slots.acquire(signal, 200))
  now = 60
  slots.release()
  expect(await first).toBe('expired')
  expect(await second).toBe('granted')
  expect(slots.held).toBe(1)
  now = 300
  slots.release()
  expect(await third).toBe('expired')
  expect(slots.held).toBe(0)
  // A free slot is not handed out past the time to send either.
  expect(await settle(slots.acquire(signal, 299))).toBe('expired')
  expect(await settle(slots.acquire(signal, 300))).toBe('granted')
})

it('a waiter whose signal fires leaves the queue', async () => {
  const slots = createCallSlots(1, () => 0)
  await slots.acquire(new AbortController().signal, 10)
  const controller = new AbortController()
  const leaving = settle(slots.acquire(controller.signal, 10))
  const staying = settle(slots.acquire(new AbortController().signal, 10))
  controller.abort(new Error('gave up'))
  expect(await leaving).toBe('aborted')
  slots.release()
  expect(await staying).toBe('granted')
  expect(slots.held).toBe(1)
})
