/**
 * Keeps one CPU from going idle, at the lowest scheduling class (SCHED_IDLE: it runs only
 * when nothing else wants the CPU, and yields at once when something does). On a virtual
 * machine an idle vCPU is halted and may wait milliseconds for the host to run it again
 * when a request arrives; with this, those waits stop dominating latency figures.
 * Stops when the parent goes away.
 *
 * @module
 */

process.on('disconnect', () => process.exit(0))
const parent = process.ppid

function spin(): void {
  const until = Date.now() + 20
  while (Date.now() < until) {
    // burn
  }
  // Orphaned without a disconnect (the parent was killed hard): stop too.
  if (process.ppid !== parent) process.exit(0)
  setImmediate(spin)
}

process.send?.({ id: 0, result: { spinning: true } })
spin()
