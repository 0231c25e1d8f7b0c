/**
 * The gate's benchmark child: in one process, the gate (`createGate` on a `node:http`
 * server) and the floor it is compared with, a `node:http` server that answers 200 doing
 * nothing, so both run on the same process, CPU and runtime. Usage: `gate.ts '<{"baseUrl"}>'`.
 *
 * @module
 */
import { createServer } from 'node:http'
import { createGate } from '../../gate/index.js'
import { ORG_ID } from '../../testing/index.js'
import { floorHandler, listenLoopback } from './floor.js'
import { serveParent } from './ipc.js'

/** Ready payload of the gate child. */
export interface GateBenchReady {
  readonly floorPort: number
  readonly gatePort: number
}

const { baseUrl } = JSON.parse(process.argv[2] ?? '{}') as { baseUrl: string }

const gate = createGate(
  {
    service: { baseUrl },
    rules: [
      { id: 'public', path: '/public/**', allow: 'anyone' },
      { id: 'staff', path: '/admin/**', require: { group: ORG_ID, role: 'admin' } },
      { id: 'signed-in', allow: 'signed-in' },
    ],
  },
  { logger: { warn: () => {} } },
)

const ready: GateBenchReady = {
  floorPort: await listenLoopback(createServer(floorHandler)),
  gatePort: await listenLoopback(createServer(gate.listener)),
}
await gate.ready
serveParent({}, ready)
