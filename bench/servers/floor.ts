/**
 * The floor: a `node:http` handler that answers 200 doing nothing. The gate's benchmark
 * compares the gate's check with it in one process (`gate.ts`), and puts it behind every
 * proxy as the app, in a process of its own (`app.ts`).
 *
 * @module
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

/** Answers 200 with an empty body. */
export function floorHandler(req: IncomingMessage, res: ServerResponse): void {
  req.resume()
  res.writeHead(200, { 'content-length': 0 })
  res.end()
}

/** Listens on a free port of 127.0.0.1, keeping idle connections for a minute (the proxies keep theirs). */
export async function listenLoopback(server: Server): Promise<number> {
  server.keepAliveTimeout = 60_000
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return (server.address() as AddressInfo).port
}
