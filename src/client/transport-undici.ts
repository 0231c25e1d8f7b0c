/**
 * The transport on Node: undici's `request` on a keep-alive `Pool` for the base URL's origin
 * (or the caller's `dispatcher`). Chosen by the `node` condition of the package's `imports`
 * (`#transport`); no other runtime loads this module.
 *
 * @module
 */
import { Pool, request } from 'undici'
import type { Dispatcher } from 'undici'
import { MAX_CONCURRENT_CALLS, type CreateTransport, type UpstreamResponse } from './transport.js'

const ERROR_BODY_DRAIN_LIMIT = 64 * 1024

/**
 * Creates the undici transport of one groups client. Its own pool is closed by `close()`;
 * a caller-supplied dispatcher is left open.
 */
export const createTransport: CreateTransport = (settings) => {
  const ownPool = settings.dispatcher === undefined ? new Pool(settings.origin, { connections: MAX_CONCURRENT_CALLS }) : undefined
  const dispatcher: Dispatcher = settings.dispatcher ?? (ownPool as Pool)
  let closing: Promise<void> | undefined
  return {
    async request(url, headers, signal) {
      const response = await request(url, {
        dispatcher,
        method: 'GET',
        headers,
        signal,
        // undici's redirect interceptor honours 0 as "do not follow", so a caller-supplied
        // dispatcher composed with it still never sends the token to a Location.
        ...({ maxRedirections: 0 } as object),
      })
      return undiciResponse(response)
    },
    close() {
      if (ownPool === undefined) return Promise.resolve()
      closing ??= ownPool.close()
      return closing
    },
  }
}

function undiciResponse({ statusCode, headers, body }: Dispatcher.ResponseData): UpstreamResponse {
  return {
    status: statusCode,
    header(name) {
      const value = headers[name]
      return typeof value === 'string' ? value : undefined
    },
    decodesContent: false,
    async read(limit, tooLarge) {
      const chunks: Buffer[] = []
      let size = 0
      for await (const chunk of body as AsyncIterable<Buffer>) {
        size += chunk.length
        if (size > limit) throw tooLarge()
        chunks.push(chunk)
      }
      return Buffer.concat(chunks, size)
    },
    async drain() {
      try {
        await body.dump({ limit: ERROR_BODY_DRAIN_LIMIT })
      } catch {
        // The status already decides the outcome; a broken error body changes nothing.
      }
    },
    discard() {
      // An unread body holds its connection (and the abort listener) until it is closed.
      if (body.readableEnded || body.destroyed) return
      // undici's body emits an AbortError when destroyed unread; with no listener that
      // would be an uncaught exception that takes the whole process down.
      body.on('error', ignoreError)
      body.destroy()
    },
  }
}

/** Swallows the error a deliberately destroyed body emits. */
function ignoreError(): void {}
