/**
 * A stand-in group service on 127.0.0.1 for the groups client's HTTP tests (on undici and on
 * the fetch transport): a real server, its requests and connections counted, and the checks
 * every failure must pass (no token in any text of the error).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import { inspect } from 'node:util'
import { expect } from 'vitest'

/** A server started by {@link startLoopbackServer}. */
export interface TestServer {
  readonly url: string
  readonly server: Server
  readonly requests: IncomingMessage[]
  /** Number of TCP connections accepted. */
  connections: number
  close(): Promise<void>
}

/** Starts a server on a free loopback port; its `close()` is pushed onto `cleanups`. */
export async function startLoopbackServer(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
  cleanups: Array<() => Promise<void>>,
): Promise<TestServer> {
  const sockets = new Set<Socket>()
  const server = createServer((req, res) => {
    state.requests.push(req)
    handler(req, res)
  })
  const state: TestServer = {
    url: '',
    server,
    requests: [],
    connections: 0,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
      }),
  }
  server.on('connection', (socket) => {
    state.connections += 1
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  Object.assign(state, { url: `http://127.0.0.1:${port}` })
  cleanups.push(() => state.close())
  return state
}

/** Answers with a JSON body and its length. */
export function json(res: ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}): void {
  const body = JSON.stringify(value)
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body), ...headers })
  res.end(body)
}

/** The error `promise` rejects with, after checking that no text of it (message, stack, JSON, inspection) holds `token`. */
export async function rejectionWithout(promise: Promise<unknown>, token: string): Promise<Error> {
  try {
    await promise
  } catch (err) {
    const e = err as Error
    for (const text of [e.message, e.stack ?? '', JSON.stringify(err), inspect(err, { depth: 20, showHidden: true })]) {
      expect(text).not.toContain(token)
    }
    return e
  }
  throw new Error('expected the call to reject')
}
