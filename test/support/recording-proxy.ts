/**
 * A proxy in front of an emulator's group service, as one named service of several sees it:
 * it records the bearer token of every request that reaches the service, and may stand one
 * token string for another (so that a test can present the same token string to two
 * services, each of which knows it as one of its own users).
 */
import { request } from 'undici'
import type { Emulator, EmulatorService } from '../../testing/index.js'
import { startLoopbackServer, type TestServer } from './loopback-http.js'

/** What the proxy does with each request's token. */
export interface ProxyOptions {
  /** Receives the token the request came with (before any alias). */
  readonly received: string[]
  /** The token to send on instead of the one received (`undefined`: the same). */
  readonly alias?: (token: string) => string | undefined
}

/**
 * Starts the proxy in front of `emulator` (or one service of an emulator of several: the
 * proxy's root is the service's root); its `close()` is pushed onto `cleanups`.
 */
export async function startRecordingProxy(
  emulator: Emulator | EmulatorService,
  options: ProxyOptions,
  cleanups: Array<() => Promise<void>>,
): Promise<TestServer> {
  // The service's root: the emulator's origin, and with several services, the service's path.
  const origin = emulator.authUrl
  return startLoopbackServer((req, res) => {
    const presented = (req.headers.authorization ?? '').replace(/^Bearer /, '')
    options.received.push(presented)
    const sent = options.alias?.(presented) ?? presented
    const authorization = req.headers.authorization === undefined ? '' : `Bearer ${sent}`
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
}
