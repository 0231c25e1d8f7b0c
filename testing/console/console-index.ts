/**
 * The console of an emulator of several services at `/_emulator/`: the page with a section
 * per service (each links to its own console under `/<name>/_emulator/`), and the same as
 * JSON at `/_emulator/api/services`. A change sent to `/_emulator/api/...` names no service:
 * it is refused (400) with the names, so that `voot-guard emulator members` without
 * `--service` says what to add. Loopback clients only, like every console.
 *
 * @module
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import { jsonAnswer, writeAnswer } from '../answer.js'
import { consoleIndexPage, type ConsoleIndexEntry } from './console-page.js'
import { CONSOLE_PATH, LOOPBACK } from './console-routes.js'

/** The index: `handle` answers its paths and returns `false` for any other. */
export interface ConsoleIndex {
  handle(req: IncomingMessage, res: ServerResponse): Promise<boolean>
}

/** Creates the index of `services`. */
export function createConsoleIndex(services: readonly ConsoleIndexEntry[]): ConsoleIndex {
  return {
    handle(req, res) {
      const url = req.url ?? '/'
      const queryStart = url.indexOf('?')
      const path = queryStart === -1 ? url : url.slice(0, queryStart)
      if (!LOOPBACK.test(req.socket.remoteAddress ?? '')) return Promise.resolve(false)
      const method = req.method ?? 'GET'
      const page = path === CONSOLE_PATH || path === `${CONSOLE_PATH}/`
      const listing = path === `${CONSOLE_PATH}/api/services`
      if (!page && !listing && !path.startsWith(`${CONSOLE_PATH}/`)) return Promise.resolve(false)
      req.resume()
      if (!page && !listing) {
        const names = services.map((service) => service.name)
        const message = `This emulator serves several group services (${names.join(', ')}): name one, as in --service ${names[0] ?? ''} (the console of each is under /<name>/_emulator/)`
        writeAnswer(res, jsonAnswer(400, { error: 'invalid_request', message }))
        return Promise.resolve(true)
      }
      if (method !== 'GET' && method !== 'HEAD') writeAnswer(res, jsonAnswer(405, { error: 'method_not_allowed' }, { allow: 'GET' }))
      else writeAnswer(res, page ? consoleIndexPage(services) : jsonAnswer(200, { services }, { 'cache-control': 'no-store' }))
      return Promise.resolve(true)
    },
  }
}
