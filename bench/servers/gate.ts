/**
 * The gate's benchmark child: in one process, the gate as `voot-gate` runs it
 * (`startGateServer`: its own `node:http` server, which counts answers under way for a
 * reload) and the floor it is compared with, a `node:http` server that answers 200 doing
 * nothing, so both run on the same process, CPU and runtime. Usage: `gate.ts '<{"baseUrl"}>'`.
 *
 * @module
 */
import { createServer } from 'node:http'
import { startGateServer } from '../../gate/index.js'
import { ORG_ID } from '../../testing/index.js'
import { floorHandler, listenLoopback } from './floor.js'
import { serveParent } from './ipc.js'

/** Ready payload of the gate child. */
export interface GateBenchReady {
  readonly floorPort: number
  readonly gatePort: number
}

const { baseUrl } = JSON.parse(process.argv[2] ?? '{}') as { baseUrl: string }

const running = await startGateServer(
  {
    service: { baseUrl },
    rules: [
      { id: 'public', path: '/public/**', allow: 'anyone' },
      { id: 'staff', path: '/admin/**', require: { group: ORG_ID, role: 'admin' } },
      { id: 'signed-in', allow: 'signed-in' },
    ],
  },
  { logger: { warn: () => {} }, port: 0 },
)

const ready: GateBenchReady = {
  floorPort: await listenLoopback(createServer(floorHandler)),
  gatePort: Number(new URL(running.url).port),
}
await running.gate.ready
serveParent({}, ready)
