/**
 * The app behind the proxies of the gate's benchmark: the floor (`floor.ts`) in a process
 * of its own, so that its CPU is told apart from the gate's and the proxy's.
 *
 * @module
 */
import { createServer } from 'node:http'
import { floorHandler, listenLoopback } from './floor.js'
import { serveParent } from './ipc.js'

/** Ready payload of the app child. */
export interface AppReady {
  readonly port: number
}

serveParent({}, { port: await listenLoopback(createServer(floorHandler)) } satisfies AppReady)
