/**
 * The group-service emulator in its own process, so that its work does not land on the
 * server under test. Usage: `emulator.ts <latencyMs>`.
 *
 * @module
 */
import { startEmulator, type Fault, type FaultMatch } from '../../testing/index.js'
import { serveParent } from './ipc.js'

const latency = Number(process.argv[2] ?? '0')
// The emulator's token store sweeps all its tokens on every issue once it holds 10,000,
// which makes issuing tens of thousands quadratic. `issue` with `expireOthers` moves this
// clock a day on first, so earlier tokens have expired and the next sweep clears them.
let clockOffset = 0
const emulator = await startEmulator({ latency, now: () => Date.now() + clockOffset })

/** Ready payload of the emulator child. */
export interface EmulatorReady {
  readonly baseUrl: string
}

serveParent(
  {
    issue: (argument) => {
      const { user, count, expireOthers } = argument as { user: string; count: number; expireOthers?: boolean }
      if (expireOthers === true) clockOffset += 24 * 3600 * 1000
      const tokens: string[] = []
      for (let i = 0; i < count; i++) tokens.push(emulator.issueToken(user))
      return tokens
    },
    addFault: (argument) => {
      const { fault, match } = argument as { fault: Fault; match?: FaultMatch }
      return emulator.faults.add(fault, match)
    },
    clearFaults: () => {
      emulator.faults.clear()
      return true
    },
    count: (argument) => emulator.count(argument as string),
    resetLog: () => {
      emulator.resetLog()
      return true
    },
  },
  { baseUrl: emulator.baseUrl } satisfies EmulatorReady,
)
