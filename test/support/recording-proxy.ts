/**
 * A loopback proxy in front of a group service that records the bearer token of every
 * request it passes on: the tests of several group services read it to show that no token
 * ever reaches a service other than its own.
 */
import { request } from 'undici'
import { startLoopbackServer, type TestServer } from './loopback-http.js'

/** A running recording proxy: its address, and every bearer token it received, in order. */
export interface RecordingProxy extends TestServer {
  readonly received: string[]
}

/** Starts a proxy on 127.0.0.1:0 in front of `origin`; `cleanups` gets its close. */
export async function startRecordingProxy(origin: string, cleanups: Array<() => Promise<void>>): Promise<RecordingProxy> {
  const received: string[] = []
  const server = await startLoopbackServer((req, res) => {
    const authorization = req.headers.authorization ?? ''
    received.push(authorization.replace(/^Bearer /, ''))
    request(origin + (req.url ?? '/'), { method: 'GET', headers: { authorization, accept: req.headers.accept ?? '*/*' } }).then(
      async (answer) => {
        const body = Buffer.from(await answer.body.arrayBuffer())
        const headers: Record<string, string> = { 'content-type': String(answer.headers['content-type'] ?? 'application/json') }
        const challenge = answer.headers['www-authenticate']
        if (typeof challenge === 'string') headers['www-authenticate'] = challenge
        res.writeHead(answer.statusCode, headers).end(body)
      },
      () => res.destroy(),
    )
  }, cleanups)
  return Object.assign(server, { received })
}
