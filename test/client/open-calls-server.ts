/**
 * A stand-in group service for the tests of the bound on open calls and of the deadline: a
 * real HTTP server on 127.0.0.1 in a worker thread (its own event loop, so that what it
 * sees does not wait for the client's), that counts the requests open at once (from
 * arrival until the response is sent or the client is seen leaving) and records when each
 * arrived, on the wall clock with sub-millisecond precision, by the bearer token it carried.
 */
import { Worker } from 'node:worker_threads'

/** What the server saw so far. */
export interface OpenCallsStats {
  /** Requests open at once, at most. */
  readonly most: number
  /** Requests open now. */
  readonly open: number
  /** Each request: its token, when it arrived (`performance.timeOrigin + performance.now()`), and how many were open then (itself included). */
  readonly arrivals: readonly { readonly token: string; readonly at: number; readonly open: number }[]
}

/** A server started by {@link startOpenCallsServer}. */
export interface OpenCallsServer {
  readonly url: string
  stats(): Promise<OpenCallsStats>
  close(): Promise<void>
}

const SERVER = `
const { parentPort, workerData } = require('node:worker_threads')
const { createServer } = require('node:http')
let open = 0
let most = 0
const arrivals = []
const server = createServer((req, res) => {
  const at = performance.timeOrigin + performance.now()
  open++
  if (open > most) most = open
  arrivals.push({ token: String(req.headers.authorization ?? '').slice('Bearer '.length), at, open })
  // Open until the response is sent or the client is seen going (its FIN or a reset): what
  // the server knows. (A response's own 'close' can come a loop turn after the client left.)
  let done = false
  const over = () => {
    if (done) return
    done = true
    open--
  }
  res.once('finish', over)
  req.socket.once('end', over)
  req.socket.once('close', over)
  if (workerData.answerAfterMs === undefined) return
  setTimeout(() => {
    if (res.destroyed) return
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': 2 })
    res.end('[]')
  }, workerData.answerAfterMs)
})
server.listen(0, '127.0.0.1', () => parentPort.postMessage({ port: server.address().port }))
parentPort.on('message', (message) => {
  if (message === 'stats') parentPort.postMessage({ most, open, arrivals })
  if (message === 'close') {
    server.closeAllConnections()
    server.close(() => parentPort.postMessage('closed'))
  }
})
`

/**
 * Starts the server. It never answers, or answers `[]` after `answerAfterMs`.
 */
export async function startOpenCallsServer(options: { answerAfterMs?: number } = {}): Promise<OpenCallsServer> {
  const worker = new Worker(SERVER, { eval: true, workerData: options })
  const next = <T>(): Promise<T> => new Promise<T>((resolve) => worker.once('message', resolve))
  const { port } = await next<{ port: number }>()
  return {
    url: `http://127.0.0.1:${port}`,
    async stats() {
      const reply = next<OpenCallsStats>()
      worker.postMessage('stats')
      return reply
    },
    async close() {
      const closed = next<unknown>()
      worker.postMessage('close')
      await closed
      await worker.terminate()
    },
  }
}
