/**
 * One gate of the gate soak, in a process of its own: the configuration comes as JSON in
 * `VOOT_SOAK_GATE_CONFIG`, the URL goes back to the parent over IPC; `{ type: 'exit' }` closes it.
 */
import { startGateServer, type GateConfig } from '../../gate/index.js'

const config = JSON.parse(process.env.VOOT_SOAK_GATE_CONFIG ?? '') as GateConfig
let unhandled = 0
process.on('unhandledRejection', () => unhandled++)
const running = await startGateServer(config, { logger: { warn: () => {} } })
await running.gate.ready
process.send?.({ type: 'ready', url: running.url })
process.on('message', (message: { type: string }) => {
  if (message.type !== 'exit') return
  void running.close().then(() => {
    process.send?.({ type: 'closed', unhandled }, () => process.exit(0))
  })
})
