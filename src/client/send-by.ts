/**
 * The last moment a call may still be sent. A call that waited for a free slot (the bound
 * on calls in flight) is sent only while enough of its deadline is left for an answer to
 * come back: a request sent in the last instant cannot be answered in time, yet it carries
 * the bearer token to the service and holds a connection there after the caller gave up.
 *
 * @module
 */

/**
 * Least time left of a call's deadline, in ms, for it to be sent (capped at a quarter of a
 * shorter `timeout`, so that a call is always sent when a slot is free at once).
 */
export const MIN_SEND_MS = 25

/**
 * The last moment to send a call with `timeout` that started at `started`, on the clock of
 * `performance.now()`.
 */
export function sendBy(started: number, timeout: number): number {
  return started + timeout - Math.min(MIN_SEND_MS, timeout / 4)
}

/**
 * A call refused before it was sent because its time to be sent ran out while it waited
 * for a slot. The upstream call reports it as the timeout it is (`ERR_UPSTREAM_TIMEOUT`).
 */
export class SendExpiredError extends Error {
  constructor() {
    super('The call waited for a free slot until too little of its deadline was left to send it')
    this.name = 'SendExpiredError'
  }
}
